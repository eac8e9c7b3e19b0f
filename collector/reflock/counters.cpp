#include "reflock/counters.h"

#include "reflock/detail/thread_slot.h"

namespace reflock {
namespace {

Counters read(const detail::CounterCells& cells) noexcept
{
    constexpr auto relaxed = std::memory_order_relaxed;
    Counters c;
    c.acquisitions = cells.acquisitions.load(relaxed);
    c.contended = cells.contended.load(relaxed);
    c.spin_attempts = cells.spin_attempts.load(relaxed);
    c.spin_successes = cells.spin_successes.load(relaxed);
    c.spin_failures = cells.spin_failures.load(relaxed);
    for (std::size_t i = 0; i < kSpinFailReasons; ++i)
        c.spin_failures_by_reason[i] = cells.by_reason[i].load(relaxed);
    c.sleeps = cells.sleeps.load(relaxed);
    c.sleep_ns = cells.sleep_ns.load(relaxed);
    c.wakeups = cells.wakeups.load(relaxed);
    c.handoffs = cells.handoffs.load(relaxed);
    return c;
}

template <typename Op>
void combine(Counters& a, const Counters& b, Op op) noexcept
{
    a.acquisitions = op(a.acquisitions, b.acquisitions);
    a.contended = op(a.contended, b.contended);
    a.spin_attempts = op(a.spin_attempts, b.spin_attempts);
    a.spin_successes = op(a.spin_successes, b.spin_successes);
    a.spin_failures = op(a.spin_failures, b.spin_failures);
    for (std::size_t i = 0; i < kSpinFailReasons; ++i)
        a.spin_failures_by_reason[i] = op(a.spin_failures_by_reason[i], b.spin_failures_by_reason[i]);
    a.sleeps = op(a.sleeps, b.sleeps);
    a.sleep_ns = op(a.sleep_ns, b.sleep_ns);
    a.wakeups = op(a.wakeups, b.wakeups);
    a.handoffs = op(a.handoffs, b.handoffs);
}

}  // namespace

Counters& Counters::operator+=(const Counters& other) noexcept
{
    combine(*this, other, [](std::uint64_t x, std::uint64_t y) { return x + y; });
    return *this;
}

Counters& Counters::operator-=(const Counters& other) noexcept
{
    combine(*this, other, [](std::uint64_t x, std::uint64_t y) { return x - y; });
    return *this;
}

Counters this_thread_counters() noexcept
{
    return read(detail::my_counters());
}

Counters counters_total() noexcept
{
    Counters total;
    const std::uint32_t n = detail::slots_in_use_high_water();
    for (std::uint32_t encoded = 1; encoded <= n; ++encoded)
        total += read(detail::slot_at(encoded).counters);
    return total;
}

}  // namespace reflock
