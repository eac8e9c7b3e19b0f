#include "workload/workload.h"

#include "core/error.h"

#include <sys/mman.h>

#include <cerrno>
#include <ctime>
#include <new>
#include <utility>

namespace lockscope::workload {

// 128 rather than 64: x86's adjacent-line prefetcher pulls cache lines in
// pairs, so 64-byte padding still lets neighbouring counters interfere.
constexpr size_t kLine = 128;

// The counters live in memory shared with another process, where only
// address-free (lock-free) atomics are valid.
static_assert(std::atomic<uint64_t>::is_always_lock_free);

struct alignas(kLine) SharedOps::Header {
    std::atomic<uint64_t> start_ns;
    std::atomic<uint64_t> end_ns;
    std::atomic<uint32_t> started;
    std::atomic<uint32_t> finished;
};

struct alignas(kLine) SharedOps::Counter {
    std::atomic<uint64_t> ops;
};

SharedOps::SharedOps(unsigned threads) : threads_(threads)
{
    static_assert(sizeof(Header) == kLine && sizeof(Counter) == kLine);
    bytes_ = sizeof(Header) + size_t(threads) * sizeof(Counter);
    void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        throw Error("map shared op counters", std::to_string(bytes_) + " bytes", errno);
    base_ = p;
    // The mapping is zero-filled; constructing the atomics there is what makes
    // using them well-defined.
    new (base_) Header{};
    for (unsigned i = 0; i < threads_; ++i)
        new (counter(i)) Counter{};
}

SharedOps::~SharedOps()
{
    if (base_)
        munmap(base_, bytes_);
}

SharedOps::SharedOps(SharedOps&& other) noexcept
    : base_(std::exchange(other.base_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)),
      threads_(std::exchange(other.threads_, 0))
{
}

SharedOps& SharedOps::operator=(SharedOps&& other) noexcept
{
    if (this != &other) {
        if (base_)
            munmap(base_, bytes_);
        base_ = std::exchange(other.base_, nullptr);
        bytes_ = std::exchange(other.bytes_, 0);
        threads_ = std::exchange(other.threads_, 0);
    }
    return *this;
}

SharedOps::Header* SharedOps::header() const
{
    return static_cast<Header*>(base_);
}

SharedOps::Counter* SharedOps::counter(unsigned i) const
{
    return reinterpret_cast<Counter*>(static_cast<char*>(base_) + sizeof(Header)) + i;
}

uint64_t SharedOps::thread(unsigned i) const
{
    return i < threads_ ? counter(i)->ops.load(std::memory_order_relaxed) : 0;
}

uint64_t SharedOps::total() const
{
    uint64_t sum = 0;
    for (unsigned i = 0; i < threads_; ++i)
        sum += thread(i);
    return sum;
}

void SharedOps::add(unsigned i, uint64_t n)
{
    // A single writer per counter: a plain load and store avoid the locked
    // read-modify-write, and a reader still never sees a torn value.
    auto& ops = counter(i)->ops;
    ops.store(ops.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}

bool SharedOps::started() const
{
    return header()->started.load(std::memory_order_acquire) != 0;
}

uint64_t SharedOps::start_ns() const
{
    return header()->start_ns.load(std::memory_order_relaxed);
}

bool SharedOps::finished() const
{
    return header()->finished.load(std::memory_order_acquire) != 0;
}

uint64_t SharedOps::end_ns() const
{
    return header()->end_ns.load(std::memory_order_relaxed);
}

void SharedOps::mark_started(uint64_t now_ns)
{
    header()->start_ns.store(now_ns, std::memory_order_relaxed);
    header()->started.store(1, std::memory_order_release);
}

void SharedOps::mark_finished(uint64_t now_ns)
{
    header()->end_ns.store(now_ns, std::memory_order_relaxed);
    header()->finished.store(1, std::memory_order_release);
}

void SharedOps::reset()
{
    for (unsigned i = 0; i < threads_; ++i)
        counter(i)->ops.store(0, std::memory_order_relaxed);
    header()->started.store(0, std::memory_order_relaxed);
    header()->finished.store(0, std::memory_order_relaxed);
    header()->start_ns.store(0, std::memory_order_relaxed);
    header()->end_ns.store(0, std::memory_order_relaxed);
}

}  // namespace lockscope::workload
