// Per-episode trace mode (record --trace): the BPF ring buffer's records,
// decoded into session episodes on a reader thread of their own.
#pragma once

#include <atomic>
#include <cstddef>
#include <mutex>
#include <thread>
#include <vector>

#include "core/model.h"

struct ring_buffer;

namespace lockscope::probe {

// A ring-buffer record (ls_trace_episode) as a session episode; false if it
// is malformed.
bool to_episode(const void* data, size_t size, Episode& e);

// Reads the trace ring buffer on a thread of its own, so that a slow
// session write never stalls it: the kernel drops what does not fit.
class TraceStream {
public:
    explicit TraceStream(int map_fd);
    TraceStream(const TraceStream&) = delete;
    TraceStream& operator=(const TraceStream&) = delete;
    ~TraceStream();

    // Stops the reader thread and reads whatever is left.
    void finish();

    // The episodes read since the last call.
    std::vector<Episode> take();

private:
    static constexpr size_t kMaxBacklog = size_t(1) << 19;  // episodes, about 100 MiB

    size_t backlog();
    static int on_record(void* ctx, void* data, size_t size);
    void stop();

    ::ring_buffer* ring_ = nullptr;
    std::thread thread_;
    std::atomic<bool> stop_{false};
    std::mutex mutex_;
    std::vector<Episode> pending_;
};

}  // namespace lockscope::probe
