// The user-space locks of the processes `record` runs or follows
// (collector/probe/user_probe.h), recorded beside the kernel's locks into the same
// run: prepared before the target is released, drained on a thread of its
// own as samples arrive, read into the run's last interval.
//
// Why a thread: a sample's user stack is unwound with the target's memory
// maps, which vanish when it exits. Drained as it arrives, a sample is
// unwound while its waiter still sleeps in the futex, so a command that
// lives for a few milliseconds still has its stacks and names.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/model.h"
#include "probe/probe.h"

#include "probe/user_probe.h"

namespace lockscope::record {

class UserLockRecording {
public:
    // Loads and attaches the user-lock recorder for these processes. Where
    // it cannot (an older kernel, no BTF), says why in one line on stderr
    // and records nothing: the kernel locks are recorded all the same.
    // `kernel`: the kernel probe's contention state (Probe::contention_state_fds()),
    // to follow a user lock's owner into the kernel lock it waits for.
    // `children`: the processes they create (and theirs) are recorded too.
    // `all_processes`: every process on the machine but lockscope's own
    // (`tgids` and `children` then say nothing).
    // `trace_bytes`: record --trace's ring buffer size; every finished lock
    // wait is then kept too, as an episode (0: none).
    UserLockRecording(const std::vector<pid_t>& tgids, const probe::ContentionStateFds& kernel, bool children,
                      bool all_processes = false, uint32_t trace_bytes = 0);
    ~UserLockRecording();
    UserLockRecording(const UserLockRecording&) = delete;
    UserLockRecording& operator=(const UserLockRecording&) = delete;

    // The targets run their own program now (a command held before its exec
    // has been released): from here on their binaries name their locks and
    // unwind their stacks, and samples are drained as they arrive.
    void target_running();

    // The session's id of a kernel lock row, by the probe's key (address,
    // kind bits); none when the run has no row for it (a lock left out by
    // record's filters).
    using KernelLockId = std::function<std::optional<int64_t>(uint64_t address, uint32_t flags)>;
    // The frames of a kernel stack id of the probe (as the run's StackSample
    // rows have them); empty when not known yet.
    using KernelStackFrames = std::function<std::vector<std::string>(int32_t stack_id)>;
    struct KernelSide {
        KernelLockId lock_id;
        KernelStackFrames stack_frames;
    };

    // Stops recording and puts the run's rows (or why there are none) into
    // the batch of its last interval, whose kernel lock rows `kernel_lock`
    // already knows.
    void finish(int64_t run, IntervalBatch& batch, const KernelSide& kernel);

    // An interval before the last: puts the rows recorded so far (read once
    // a second on the drain thread) into its batch, since every interval's
    // rows replace the run's; none before the first such read.
    void interval(int64_t run, IntervalBatch& batch, const KernelSide& kernel);

private:
    // The drain thread's loop, and one turn of it: the sampled stacks, then
    // the targets' binaries again when their mappings changed (so that
    // their locks are named even if they exit before finish()).
    void drain();
    void poll(bool read_binaries, int wait_ms);  // waits up to wait_ms for the first sample
    void stop_draining();
    // Files the waits received since the last call under their words'
    // locks (those on no lock's word are dropped, the unclassified kept
    // for later; `last`: dropped too).
    void resolve_waits(const userlock::Recording& r, bool last);
    void take_traced(int64_t run, IntervalBatch& batch);  // the named waits into the batch's episodes
    void put(int64_t run, const userlock::Recording& r, IntervalBatch& batch, const KernelSide& kernel) const;
    std::string run_pids() const;  // "1234 1250", or "all"

    std::unique_ptr<userlock::Recorder> recorder_;  // the drain thread's while it runs
    std::vector<pid_t> tgids_;
    mutable std::mutex latest_mutex_;  // guards latest_ and recorded_ (the drain thread writes them)
    std::optional<userlock::Recording> latest_;
    // record --trace: waits whose futex word is not classified yet (drain
    // thread), and lock waits named, for the next interval (latest_mutex_).
    std::vector<Episode> unresolved_;
    std::vector<Episode> traced_;
    uint64_t traced_waits_ = 0, traced_other_ = 0, traced_unresolved_ = 0;
    bool trace_ = false;
    std::chrono::steady_clock::time_point snapshot_read_{};
    std::set<pid_t> recorded_;  // the targets and the children followed, as polls saw them
    bool all_processes_ = false;
    std::string unavailable_;                // why nothing is recorded
    std::map<pid_t, std::string> binaries_;  // per target, the binaries its names were read from
    std::chrono::steady_clock::time_point binaries_read_{};
    std::atomic<bool> stop_{false};
    std::thread drainer_;
};

}  // namespace lockscope::record
