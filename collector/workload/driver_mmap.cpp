// mmap1 and pagefault: the process's mmap_lock, an rw_semaphore.
#include "workload/driver.h"

#include "core/error.h"

#include <sys/mman.h>

#include <atomic>
#include <cerrno>
#include <cstdint>

namespace lockscope::workload {
namespace {

constexpr size_t kPage = 4096;

void* map_anonymous(size_t bytes, const char* what)
{
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        throw Error("map anonymous memory", what, errno);
    return p;
}

void unmap(void* p, size_t bytes, const char* what)
{
    if (munmap(p, bytes) != 0)
        throw Error("unmap anonymous memory", what, errno);
}

// mmap1 (will-it-scale mmap1): mmap and munmap of 128 MiB, nothing touched.
// Both calls take mmap_lock for write, so every thread queues on the one
// rwsem as a writer; with nothing faulted in, the lock is all there is.
class Mmap1Driver final : public Driver {
public:
    void op(unsigned) override
    {
        constexpr size_t kBytes = size_t(128) << 20;
        unmap(map_anonymous(kBytes, "mmap1 region"), kBytes, "mmap1 region");
    }
};

// pagefault: mmap_lock readers against writers.
//
// will-it-scale's page_fault1 relies on faults taking mmap_lock for read, but
// since 6.4 anonymous faults run under per-VMA locks and never touch
// mmap_lock, and since 6.16 neither does madvise(MADV_DONTNEED) of a single
// VMA (measured on 6.18 with the mmap_lock:mmap_lock_start_locking
// tracepoint: touch-and-DONTNEED took mmap_lock for read ~1% of the time).
// So the readers, the even threads, fault their pages in with
// madvise(MADV_POPULATE_WRITE) (5.14+): it runs the same fault handler, but
// from GUP while holding mmap_lock for read, once per call; then they drop
// the pages with MADV_DONTNEED so the next round faults again. Kernels
// without MADV_POPULATE_WRITE predate per-VMA locks, so there a plain touch
// takes mmap_lock for read, and the driver falls back to that. The writers,
// the odd threads, mmap and munmap a small region: mmap_lock for write, twice.
//
// The readers' slices sit in one mapping made at setup, each slice in its own
// 2 MiB-aligned stretch so that readers do not share a page-table page (and
// its split PTE spinlock), and huge pages are refused so a fault is a 4 KiB
// fault on every kernel. With one thread there is no writer.
class PagefaultDriver final : public Driver {
public:
    explicit PagefaultDriver(unsigned threads) : readers_((threads + 1) / 2)
    {
        // One extra slice so the start can be rounded up to a 2 MiB boundary.
        bytes_ = (readers_ + 1) * kSlice;
        mapping_ = map_anonymous(bytes_, "pagefault readers' mapping");
        madvise(mapping_, bytes_, MADV_NOHUGEPAGE);  // best effort: no THP, no harm
        auto aligned = (reinterpret_cast<uintptr_t>(mapping_) + kSlice - 1) & ~(kSlice - 1);
        slices_ = reinterpret_cast<char*>(aligned);
    }
    ~PagefaultDriver() override { munmap(mapping_, bytes_); }

    // Even threads read, odd threads write.
    void op(unsigned index) override
    {
        if (index % 2 == 0)
            read_side(index / 2);
        else
            write_side();
    }
    std::string role(unsigned index) const override { return index % 2 == 0 ? "r" : "w"; }

private:
    static constexpr size_t kSlice = size_t(2) << 20;
    static constexpr size_t kTouchedPages = 16;
    static constexpr size_t kWriterBytes = 16 * kPage;

    void read_side(unsigned reader)
    {
        char* slice = slices_ + size_t(reader) * kSlice;
        const size_t bytes = kTouchedPages * kPage;
        if (!populate_unsupported_.load(std::memory_order_relaxed)) {
            if (madvise(slice, bytes, MADV_POPULATE_WRITE) != 0) {
                if (errno != EINVAL)
                    throw Error("madvise(MADV_POPULATE_WRITE)", "pagefault readers' mapping", errno);
                populate_unsupported_.store(true, std::memory_order_relaxed);
            }
        } else {
            volatile char* pages = slice;
            for (size_t page = 0; page < kTouchedPages; ++page)
                pages[page * kPage] = 1;  // a write fault: allocates a fresh zeroed page
        }
        if (madvise(slice, bytes, MADV_DONTNEED) != 0)
            throw Error("madvise(MADV_DONTNEED)", "pagefault readers' mapping", errno);
    }

    void write_side()
    {
        unmap(map_anonymous(kWriterBytes, "pagefault writer region"), kWriterBytes, "pagefault writer region");
    }

    std::atomic<bool> populate_unsupported_{false};
    size_t readers_;
    size_t bytes_ = 0;
    void* mapping_ = nullptr;
    char* slices_ = nullptr;
};

}  // namespace

std::unique_ptr<Driver> make_mmap1_driver(unsigned)
{
    return std::make_unique<Mmap1Driver>();
}

std::unique_ptr<Driver> make_pagefault_driver(unsigned threads)
{
    return std::make_unique<PagefaultDriver>(threads);
}

}  // namespace lockscope::workload
