#include "probe/trace_stream.h"

#include <bpf/libbpf.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <utility>

#include "core/error.h"
#include "lockscope_abi.h"

namespace lockscope::probe {

bool to_episode(const void* data, size_t size, Episode& e)
{
    constexpr size_t header = offsetof(ls_trace_episode, phases);
    if (size < header)
        return false;
    ls_trace_episode rec{};
    std::memcpy(&rec, data, std::min(size, sizeof rec));
    if (rec.nphases > LS_TRACE_MAX_PHASES || size < header + rec.nphases * sizeof(ls_trace_phase))
        return false;
    e.tid = rec.tid;
    e.tgid = rec.tgid;
    e.lock_address = rec.lock;
    e.lock_flags = rec.flags;
    e.begin_ns = rec.begin_ns;
    e.end_ns = rec.end_ns;
    e.spin_ns = rec.spin_ns;
    e.sleep_ns = rec.sleep_ns;
    e.preempt_ns = rec.preempt_ns;
    e.sleeps = rec.sleeps;
    e.preemptions = rec.preemptions;
    e.ret = rec.ret;
    e.waker_tid = rec.waker;
    e.waker_tgid = rec.waker ? rec.waker_tgid : 0;
    e.wake_ns = rec.waker ? rec.wake_ns : 0;
    e.truncated = rec.truncated != 0;
    e.phases.resize(rec.nphases);
    for (size_t i = 0; i < rec.nphases; i++) {
        const ls_trace_phase& p = rec.phases[i];
        e.phases[i].spin = p.kind == LS_PHASE_SPIN;
        e.phases[i].start_ns = p.start_ns;
        e.phases[i].owner = p.owner < LS_OWNER_STATES ? int(p.owner) : -1;
    }
    return true;
}

TraceStream::TraceStream(int map_fd)
{
    ring_ = ring_buffer__new(map_fd, on_record, this, nullptr);
    if (!ring_)
        throw Error("cannot open the trace ring buffer", "lockscope BPF programs", errno);
    thread_ = std::thread([this] {
        while (!stop_.load(std::memory_order_relaxed)) {
            // When the session cannot keep up, let the ring buffer fill:
            // the kernel then counts the drops (trace_lost) and memory
            // stays bounded.
            if (backlog() >= kMaxBacklog)
                std::this_thread::sleep_for(std::chrono::milliseconds(10));
            else
                ring_buffer__poll(ring_, 50);
        }
    });
}

TraceStream::~TraceStream()
{
    stop();
    ring_buffer__free(ring_);
}

void TraceStream::finish()
{
    stop();
    ring_buffer__consume(ring_);
}

std::vector<Episode> TraceStream::take()
{
    std::lock_guard lock(mutex_);
    return std::exchange(pending_, {});
}

size_t TraceStream::backlog()
{
    std::lock_guard lock(mutex_);
    return pending_.size();
}

int TraceStream::on_record(void* ctx, void* data, size_t size)
{
    auto* self = static_cast<TraceStream*>(ctx);
    Episode e;
    if (!to_episode(data, size, e))
        return 0;  // cannot happen with our own programs; not worth stopping for
    std::lock_guard lock(self->mutex_);
    self->pending_.push_back(std::move(e));
    return 0;
}

void TraceStream::stop()
{
    stop_.store(true);
    if (thread_.joinable())
        thread_.join();
}

}  // namespace lockscope::probe
