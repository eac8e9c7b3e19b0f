// FIFO wait queue of stack-allocated waiters (kernel: struct list_head
// wait_list + struct mutex_waiter / rwsem_waiter). Modified only under the
// lock's WaitLock; `front()` may be read without it, as the kernel's
// __mutex_waiter_is_first() does, so the head is an atomic.
#pragma once

#include "reflock/detail/thread_slot.h"

#include <atomic>
#include <cstdint>

namespace reflock::detail {

struct Waiter {
    Waiter* prev = nullptr;
    Waiter* next = nullptr;
    ThreadSlot* slot = nullptr;
    std::uint32_t tid = 0;
    bool write = true;
    std::atomic<bool> handoff_set{false};  // rwsem 5.2+: HANDOFF set on this waiter's behalf
    std::uint64_t timeout_ns = 0;          // rwsem 5.2+: may request handoff after this
    std::atomic<bool> granted{false};      // lock handed to this waiter (kernel: waiter->task = NULL)
};

class WaitList {
public:
    bool empty() const noexcept { return head_.load(std::memory_order_relaxed) == nullptr; }
    bool singular() const noexcept { return !empty() && head_.load(std::memory_order_relaxed) == tail_; }
    Waiter* front() const noexcept { return head_.load(std::memory_order_acquire); }

    void push_back(Waiter* w) noexcept
    {
        w->next = nullptr;
        w->prev = tail_;
        if (tail_)
            tail_->next = w;
        else
            head_.store(w, std::memory_order_release);
        tail_ = w;
    }
    void remove(Waiter* w) noexcept
    {
        if (w->prev)
            w->prev->next = w->next;
        else
            head_.store(w->next, std::memory_order_release);
        if (w->next)
            w->next->prev = w->prev;
        else
            tail_ = w->prev;
        w->prev = w->next = nullptr;
    }

private:
    std::atomic<Waiter*> head_{nullptr};
    Waiter* tail_ = nullptr;
};

// Threads to wake once the wait lock is dropped (kernel: wake_q).
class WakeQueue {
public:
    void add(ThreadSlot* slot) noexcept
    {
        if (size_ < kInline)
            slots_[size_++] = slot;
        else
            overflow_unpark(slot);  // rare: more than kInline readers woken at once
    }
    void wake_all() noexcept
    {
        for (std::uint32_t i = 0; i < size_; ++i)
            slots_[i]->parker.unpark();
        size_ = 0;
    }
    bool empty() const noexcept { return size_ == 0; }

private:
    static void overflow_unpark(ThreadSlot* slot) noexcept { slot->parker.unpark(); }
    static constexpr std::uint32_t kInline = 64;
    ThreadSlot* slots_[kInline];
    std::uint32_t size_ = 0;
};

}  // namespace reflock::detail
