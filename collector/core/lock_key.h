// A lock row's key wherever locks are listed, compared or found again:
// report's rows, diff's matches, the exports and the dashboard's selection;
// and the one spelling of a kind and its mode.
#pragma once

#include "core/model.h"

#include <compare>
#include <string>

namespace lockscope {

// Ordered by name, then kind, then mode.
struct LockKey {
    std::string name;  // LockInfo::name (diff: the current class name)
    std::string kind;  // LockInfo::kind; a user lock's kind ("pthread_mutex")
    std::string mode;  // "read", "write" or ""

    auto operator<=>(const LockKey&) const = default;
    bool operator==(const LockKey&) const = default;
};

inline LockKey key_of(const LockInfo& lock)
{
    return {lock.name, lock.kind, lock.mode};
}

// How every door spells a kind and its mode: "rwsem/write", "mutex".
std::string kind_text(const std::string& kind, const std::string& mode);

}  // namespace lockscope
