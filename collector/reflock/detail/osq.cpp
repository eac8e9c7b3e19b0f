// Follows kernel/locking/osq_lock.c (unchanged in substance from v3.15's
// "locking/mutexes: Introduce cancelable MCS lock for adaptive spinning"
// to 6.x). Per-thread
// nodes replace per-CPU nodes; they live in static storage (ThreadSlot) for
// the same reason the kernel's are per-CPU: a neighbour may still touch a
// node after its owner left the queue.
#include "reflock/detail/osq.h"

#include "reflock/detail/memory_order.h"
#include "reflock/detail/thread_slot.h"

namespace reflock::detail {

using namespace orders;

// Get a stable @node->next pointer, either for unlock() or unqueue() purposes.
// Can return nullptr when we are the last node (then the tail is reset to
// @prev, or emptied).
OsqNode* Osq::wait_next(OsqNode* node, OsqNode* prev) noexcept
{
    const std::uint32_t curr = node->encoded;
    const std::uint32_t old = prev ? prev->encoded : 0;
    for (;;) {
        std::uint32_t expected = curr;
        if (tail_.load(relaxed) == curr && tail_.compare_exchange_strong(expected, old, acq_rel))
            return nullptr;
        // Our successor is in the middle of queueing: wait for it to link in.
        if (node->next.load(relaxed)) {
            if (OsqNode* next = node->next.exchange(nullptr, acq_rel))
                return next;
        }
        cpu_relax();
    }
}

bool Osq::lock(SpinBudget& budget) noexcept
{
    OsqNode* node = &self().osq;
    node->locked.store(false, relaxed);
    node->next.store(nullptr, relaxed);
    const std::uint32_t old = tail_.exchange(node->encoded, acq_rel);
    if (old == 0)
        return true;

    OsqNode* prev = &slot_at(old).osq;
    node->prev.store(prev, relaxed);
    prev->next.store(node, release);

    // Wait for the predecessor to pass us the baton, or give up.
    while (!node->locked.load(acquire)) {
        if (budget.exhausted())
            goto unqueue;
        cpu_relax();
    }
    return true;

unqueue:
    // Step A: undo prev->next = node, unless prev is handing us the lock right now.
    for (;;) {
        OsqNode* expected = node;
        if (prev->next.load(relaxed) == node && prev->next.compare_exchange_strong(expected, nullptr, acq_rel))
            break;
        // prev->next changed: either the lock was handed to us...
        if (node->locked.load(acquire))
            return true;
        cpu_relax();
        // ...or prev itself unqueued and relinked us to its own prev.
        prev = node->prev.load(acquire);
    }
    // Step B: no-one links to us now; find our successor, or make prev the tail.
    OsqNode* next = wait_next(node, prev);
    if (!next)
        return false;
    // Step C: link successor and predecessor to each other.
    next->prev.store(prev, release);
    prev->next.store(next, release);
    return false;
}

void Osq::unlock() noexcept
{
    OsqNode* node = &self().osq;
    std::uint32_t expected = node->encoded;
    if (tail_.compare_exchange_strong(expected, 0, release, relaxed))
        return;  // fast path: we are the tail
    if (OsqNode* next = node->next.exchange(nullptr, acq_rel)) {
        next->locked.store(true, release);
        return;
    }
    if (OsqNode* next = wait_next(node, nullptr))
        next->locked.store(true, release);
}

}  // namespace reflock::detail
