// The user code above kernel locks' waits: the user stacks sampled with a
// lock's waiter stacks (KernelUserStack), and how a waiter stack's samples
// and wait are shared among them. The folded and pprof exports and
// the dashboard's caller stacks split a kernel stack this one way.
#pragma once

#include "core/model.h"

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace lockscope {

// Splits `total` over `shares` in proportion, largest remainders first, so
// that the parts are integers adding up to `total` exactly (all of it to the
// first part when the shares are all 0).
std::vector<uint64_t> apportion(uint64_t total, const std::vector<uint64_t>& shares);

// One part of a waiter stack: the user stack sampled above it, with its share.
struct UserCodePart {
    const std::vector<std::string>* frames = nullptr;  // user frames, innermost first; nullptr: none sampled
    uint64_t samples = 0;
    uint64_t wait_ns = 0;
};

// A user frame as a summary shows it: a demangled C++ function without its
// parameter list or an anonymous namespace ("Cache::get", not
// "(anonymous namespace)::Cache::get(int) const"); anything else as it is.
std::string short_user_frame(std::string frame);

class UserCodeIndex {
public:
    // Indexes session.kernel_user_stacks; the session must outlive the index.
    explicit UserCodeIndex(const Session& session);

    // A waiter stack's parts: one per user stack sampled above it, its
    // samples and wait apportioned by theirs; or the stack whole, without
    // user frames, where none was sampled.
    std::vector<UserCodePart> parts(const StackSample& waiter) const;

private:
    using Key = std::tuple<int64_t, int64_t, std::vector<std::string>>;  // run, lock, kernel frames
    std::map<Key, std::vector<const KernelUserStack*>> above_;
};

}  // namespace lockscope
