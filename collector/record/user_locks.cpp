#include "record/user_locks.h"

#include <sched.h>
#include <unistd.h>

#include <chrono>
#include <mutex>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>

#include "core/error.h"
#include "probe/user_probe.h"

namespace lockscope::record {
namespace {

// The file-backed mappings of a process ("start-end path" lines): they
// change on exec and dlopen, not as threads and the heap come and go.
// Empty once it has exited.
std::string binaries_of(pid_t tgid)
{
    std::ifstream maps("/proc/" + std::to_string(tgid) + "/maps");
    std::string out;
    for (std::string line; std::getline(maps, line);) {
        const auto path = line.find(" /");
        if (path != std::string::npos)
            out += line.substr(0, line.find(' ')) + line.substr(path) + "\n";
    }
    return out;
}

template <typename Set>
std::string joined(const Set& items)
{
    std::ostringstream out;
    for (const auto& item : items)
        out << (out.tellp() > 0 ? " " : "") << item;
    return out.str();
}

UserLockRow row_of(int64_t run, const userlock::UserLock& lock)
{
    UserLockRow row{lock};
    row.run = run;
    row.pid = uint32_t(lock.tgid);
    row.owner_tids = joined(lock.owner_tids);
    row.ops = joined(lock.ops);
    return row;
}

// "sleeping:12 running:1"
std::string states_text(const std::map<std::string, uint64_t>& states)
{
    std::string out;
    for (const auto& [state, waits] : states)
        out += (out.empty() ? "" : " ") + state + ":" + std::to_string(waits);
    return out;
}

void add_chains(int64_t run, const userlock::UserLock& lock, const UserLockRecording::KernelLockId& kernel_lock,
                std::vector<UserLockChain>& out)
{
    for (const userlock::KernelChain& c : lock.kernel_chains) {
        const std::optional<int64_t> id = kernel_lock(c.kernel_lock, c.kernel_flags);
        if (!id)
            continue;
        out.push_back({.run = run,
                       .pid = uint32_t(lock.tgid),
                       .name = lock.name,
                       .kind = lock.kind,
                       .kernel_lock_id = *id,
                       .kernel_mode = c.kernel_mode,
                       .waits = c.waits,
                       .wait_ns = c.wait_ns,
                       .max_wait_ns = c.max_wait_ns,
                       .owner_tids = joined(c.owner_tids),
                       .root_tids = joined(c.root_tids),
                       .root_states = states_text(c.root_states)});
    }
}

// A row of `out` made from `from`, under the lock's key: its run, process,
// name and kind.
template <typename Row>
Row& keyed_row(std::vector<Row>& out, int64_t run, const userlock::UserLock& lock, Row from)
{
    Row& row = out.emplace_back(std::move(from));
    row.run = run;
    row.pid = uint32_t(lock.tgid);
    row.name = lock.name;
    row.kind = lock.kind;
    return row;
}

// Each of the lock's rows of one table (its wakers, holders, stacks or
// futex words), under the lock's key.
template <typename Row, typename Item>
void add_keyed(std::vector<Row>& out, int64_t run, const userlock::UserLock& lock, const std::vector<Item>& items)
{
    for (const Item& item : items)
        keyed_row(out, run, lock, Row{item});
}

// The user frames above the kernel locks' waiter stacks, under the run's
// lock rows and the kernel frames its stacks are stored with. A stack of a
// lock without a row (filtered out) is left out.
void add_kernel_user_stacks(int64_t run, const userlock::Recording& r, const UserLockRecording::KernelSide& kernel,
                            std::vector<KernelUserStack>& out)
{
    for (const RawUserStack& s : r.kernel_user_stacks) {
        const std::optional<int64_t> id = kernel.lock_id(s.address, s.flags);
        if (!id)
            continue;
        std::vector<std::string> kernel_frames = kernel.stack_frames(s.stack_id);
        if (kernel_frames.empty())
            continue;
        out.push_back({.run = run,
                       .lock_id = *id,
                       .pid = s.tgid,
                       .kernel_frames = std::move(kernel_frames),
                       .frames = s.frames,
                       .samples = s.samples,
                       .wait_ns = s.wait_ns});
    }
}

}  // namespace

UserLockRecording::UserLockRecording(const std::vector<pid_t>& tgids, const probe::ContentionStateFds& kernel,
                                     bool children, bool all_processes, uint32_t trace_bytes)
    : tgids_(tgids), recorded_(tgids.begin(), tgids.end()), all_processes_(all_processes)
{
    trace_ = trace_bytes != 0;
    try {
        recorder_ =
            std::make_unique<userlock::Recorder>(userlock::Recorder::prepare({.tgids = tgids,
                                                                              .follow_children = children,
                                                                              .all_processes = all_processes,
                                                                              .kernel = kernel,
                                                                              .trace_waits = trace_,
                                                                              .trace_buffer_bytes = trace_bytes}));
        recorder_->start();
    } catch (const Error& e) {
        recorder_.reset();
        unavailable_ = e.what();
        std::fprintf(stderr, "lockscope: user-space locks are not recorded (kernel locks are): %s\n", e.what());
        return;
    }
}

void UserLockRecording::target_running()
{
    if (recorder_ && !drainer_.joinable())
        drainer_ = std::thread([this] { drain(); });
}

UserLockRecording::~UserLockRecording()
{
    stop_draining();
}

void UserLockRecording::stop_draining()
{
    stop_ = true;
    if (drainer_.joinable())
        drainer_.join();
}

void UserLockRecording::drain()
{
    // At the recorder's real-time priority, where record --realtime gave its
    // main thread one (which threads do not inherit: SCHED_RESET_ON_FORK
    // keeps the workloads' threads and the command at the normal policy):
    // samples are unwound while their processes still run.
    sched_param param{};
    const int policy = sched_getscheduler(getpid());
    if (policy >= 0 && (policy & ~SCHED_RESET_ON_FORK) == SCHED_FIFO && sched_getparam(getpid(), &param) == 0)
        sched_setscheduler(0, policy, &param);
    // A turn at least every 50 ms, at once when a sample arrives.
    while (!stop_ && recorder_)
        poll(false, 50);
}

void UserLockRecording::poll(bool read_binaries, int wait_ms)
{
    if (!recorder_)
        return;
    try {
        // A process's binaries are looked at when its samples came (it runs:
        // a waiter of its own just woke), and every target's once a second:
        // reading every process's maps every turn would cost more than the
        // rest of the turn, with many children followed.
        recorder_->poll(wait_ms);
        if (trace_) {
            std::vector<Episode> waits = recorder_->take_waits();
            unresolved_.insert(unresolved_.end(), std::make_move_iterator(waits.begin()),
                               std::make_move_iterator(waits.end()));
        }
        std::set<pid_t> look = recorder_->take_sampled();
        const auto now = std::chrono::steady_clock::now();
        if (read_binaries || now - binaries_read_ >= std::chrono::seconds(1)) {
            binaries_read_ = now;
            for (pid_t tgid : recorder_->targets())
                look.insert(tgid);
        }
        for (pid_t tgid : look) {
            {
                std::lock_guard lock(latest_mutex_);
                recorded_.insert(tgid);
            }
            std::string binaries = binaries_of(tgid);
            if (binaries.empty() || binaries == binaries_[tgid])
                continue;
            recorder_->read_names(tgid);
            binaries_[tgid] = std::move(binaries);
        }
        // What the recording holds so far, for the intervals before the
        // last (the session's rows and the exporter's series): read here,
        // on the thread that owns the recorder, once a second.
        if (now - snapshot_read_ >= std::chrono::seconds(1)) {
            snapshot_read_ = now;
            userlock::Recording r = recorder_->read();
            resolve_waits(r, false);
            std::lock_guard lock(latest_mutex_);
            latest_ = std::move(r);
        }
    } catch (const Error& e) {
        recorder_.reset();
        unavailable_ = e.what();
        std::fprintf(stderr, "lockscope: user-space locks are no longer recorded: %s\n", e.what());
    }
}

void UserLockRecording::finish(int64_t run, IntervalBatch& batch, const KernelSide& kernel)
{
    if (!recorder_) {
        batch.user_lock_runs.push_back({.run = run, .status = "unavailable: " + unavailable_, .pids = run_pids()});
        return;
    }
    stop_draining();
    // What arrived last, without waiting for more (the probes are still
    // attached); a target still running may have loaded a library since.
    poll(true, 0);
    if (!recorder_)
        return finish(run, batch, kernel);
    recorder_->stop();
    const userlock::Recording r = recorder_->read();
    if (trace_) {
        std::vector<Episode> waits = recorder_->take_waits();
        unresolved_.insert(unresolved_.end(), std::make_move_iterator(waits.begin()),
                           std::make_move_iterator(waits.end()));
        resolve_waits(r, true);
    }
    recorder_.reset();
    put(run, r, batch, kernel);
    take_traced(run, batch);
    if (trace_)
        std::fprintf(stderr,
                     "lockscope: user-lock waits traced: %llu lock waits kept, %llu on words that are no locks "
                     "and %llu on words never classified left out, %llu lost (ring buffer full)\n",
                     static_cast<unsigned long long>(traced_waits_), static_cast<unsigned long long>(traced_other_),
                     static_cast<unsigned long long>(traced_unresolved_),
                     static_cast<unsigned long long>(r.lost_events));
    if (r.lost_holders > 0)
        std::fprintf(stderr,
                     "lockscope: %llu user-lock owners were not followed for the holder split (no room, or their "
                     "record busy): those waits' holder part is unknown\n",
                     static_cast<unsigned long long>(r.lost_holders));
    if (r.lost_targets > 0)
        std::fprintf(stderr,
                     "lockscope: %llu processes the target created were not followed for user-space locks (the "
                     "recorder follows 1,024 at once); their kernel locks are recorded\n",
                     static_cast<unsigned long long>(r.lost_targets));
}

void UserLockRecording::interval(int64_t run, IntervalBatch& batch, const KernelSide& kernel)
{
    std::optional<userlock::Recording> latest;
    {
        std::lock_guard lock(latest_mutex_);
        latest = latest_;
    }
    if (latest)
        put(run, *latest, batch, kernel);
    take_traced(run, batch);
}

void UserLockRecording::resolve_waits(const userlock::Recording& r, bool last)
{
    std::vector<Episode> named, later;
    for (Episode& e : unresolved_) {
        const std::pair<pid_t, uint64_t> word{pid_t(e.tgid), e.lock_address};
        if (r.lock_words.count(word))
            named.push_back(std::move(e));
        else if (r.other_words.count(word))
            ++traced_other_;
        else if (last)
            ++traced_unresolved_;
        else
            later.push_back(std::move(e));
    }
    unresolved_ = std::move(later);
    traced_waits_ += named.size();
    std::lock_guard lock(latest_mutex_);
    traced_.insert(traced_.end(), std::make_move_iterator(named.begin()), std::make_move_iterator(named.end()));
}

void UserLockRecording::take_traced(int64_t run, IntervalBatch& batch)
{
    std::vector<Episode> episodes;
    {
        std::lock_guard lock(latest_mutex_);
        episodes.swap(traced_);
    }
    for (Episode& e : episodes) {
        e.run = run;
        batch.episodes.push_back(std::move(e));
    }
}

std::string UserLockRecording::run_pids() const
{
    std::lock_guard lock(latest_mutex_);
    return all_processes_ ? "all" : joined(recorded_);
}

void UserLockRecording::put(int64_t run, const userlock::Recording& r, IntervalBatch& batch,
                            const KernelSide& kernel) const
{
    for (const userlock::UserLock& lock : r.locks) {
        batch.user_locks.push_back(row_of(run, lock));
        add_chains(run, lock, kernel.lock_id, batch.user_lock_chains);
        add_keyed(batch.user_lock_wakers, run, lock, lock.wakers);
        add_keyed(batch.user_lock_holders, run, lock, lock.holders);
        add_keyed(batch.user_lock_stacks, run, lock, lock.stacks);
        add_keyed(batch.user_lock_instances, run, lock, lock.words);
    }
    add_kernel_user_stacks(run, r, kernel, batch.kernel_user_stacks);
    if (trace_)
        for (const auto& [word, row] : r.lock_words)
            batch.user_lock_words.push_back({.run = run,
                                             .pid = uint32_t(word.first),
                                             .address = word.second,
                                             .name = row.first,
                                             .kind = row.second});
    for (const auto& [reason, left] : r.left_out)
        batch.user_lock_left_out.emplace_back(left).run = run;
    UserLockRun& recorded = batch.user_lock_runs.emplace_back(r.counts);
    recorded.run = run;
    recorded.status = "recorded";
    recorded.pids = run_pids();
}

}  // namespace lockscope::record
