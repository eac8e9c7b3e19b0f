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
// does not compile. The same table reads a name back (enum_value) and lists
// the names for a usage error (names_text), so a spelling is written once.

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace lockscope {

template <auto Last, size_t N>
constexpr const char* enum_name(const std::array<const char*, N>& names, decltype(Last) value)
{
    static_assert(N == static_cast<size_t>(Last) + 1, "one name for each value of the enum, in its order");
    const auto i = static_cast<size_t>(value);
    return i < N ? names[i] : "?";
}

// The value whose name is `name`; nullopt for a name not in the table.
template <auto Last, size_t N>
constexpr std::optional<decltype(Last)> enum_value(const std::array<const char*, N>& names, std::string_view name)
{
    static_assert(N == static_cast<size_t>(Last) + 1, "one name for each value of the enum, in its order");
    for (size_t i = 0; i < N; i++)
        if (name == names[i])
            return static_cast<decltype(Last)>(i);
    return std::nullopt;
}

// "a, b or c": the names as a usage error offers them.
template <size_t N>
std::string names_text(const std::array<const char*, N>& names)
{
    std::string out;
    for (size_t i = 0; i < N; i++)
        out += std::string(i == 0 ? "" : i + 1 == N ? " or " : ", ") + names[i];
    return out;
}

}  // namespace lockscope
