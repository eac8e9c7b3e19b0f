#pragma once

// The names of an enum's values, as one table in the enum's order: for the
// enums whose values run 0, 1, 2, ... and whose names go into text, JSON
// and session files.
//
//   const char* verdict_name(Verdict v)
//   {
//       static constexpr std::array kNames{"better", "worse", ...};
//       return enum_name<Verdict::NotEnoughData>(kNames, v);
//   }
//
// Last is the enum's last value: a table with a name too few or too many
// does not compile.

#include <array>
#include <cstddef>

namespace lockscope {

template <auto Last, size_t N>
constexpr const char* enum_name(const std::array<const char*, N>& names, decltype(Last) value)
{
    static_assert(N == static_cast<size_t>(Last) + 1, "one name for each value of the enum, in its order");
    const auto i = static_cast<size_t>(value);
    return i < N ? names[i] : "?";
}

}  // namespace lockscope
