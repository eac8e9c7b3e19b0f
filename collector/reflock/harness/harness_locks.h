// Uniform lock interface for the harness: one virtual call per operation is
// noise next to a contended acquisition, and it keeps the loop lock-agnostic.
#pragma once

#include "reflock/harness/lock_spec.h"

#include <memory>

namespace reflock::harness {

class HarnessLock {
public:
    virtual ~HarnessLock() = default;
    virtual void lock() = 0;
    virtual void unlock() = 0;
    virtual void lock_shared() = 0;
    virtual void unlock_shared() = 0;
    virtual bool has_shared() const noexcept = 0;
};

std::unique_ptr<HarnessLock> make_lock(const LockSpec& spec);

}  // namespace reflock::harness
