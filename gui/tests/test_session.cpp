#include "test_session.h"

#include "core/storage/session_store.h"

#include <QDir>

#include <array>
#include <cmath>
#include <map>
#include <random>
#include <tuple>
#include <string>
#include <vector>

namespace lockscope::gui::testing {
namespace {

struct LockSpec {
    const char* name;
    const char* kind;
    const char* mode;
    const char* caller;
    double weight;  // relative contention rate
};

// The shapes of real kernel locks; further locks are "<kind>@<caller>".
const LockSpec kKnown[] = {
    {"pipe->mutex", "mutex", "", "anon_pipe_write", 40},
    {"i_rwsem", "rwsem", "write", "do_unlinkat", 25},
    {"i_rwsem", "rwsem", "read", "lookup_slow", 8},
    {"mmap_lock", "rwsem", "read", "do_user_addr_fault", 12},
    {"mmap_lock", "rwsem", "write", "vm_mmap_pgoff", 10},
    {"rtnl_mutex", "mutex", "", "rtnl_lock", 3},
    {"pipe->mutex.wait_lock", "spinlock", "", "anon_pipe_write", 2},
    {"kernfs_mutex", "mutex", "", "kernfs_iop_lookup", 1.5},
};

LockInfo lock_info(int id)
{
    LockInfo l;
    l.id = id;
    const int known = int(std::size(kKnown));
    if (id <= known) {
        const LockSpec& s = kKnown[id - 1];
        l.name = s.name;
        l.kind = s.kind;
        l.mode = s.mode;
        l.caller = s.caller;
    } else {
        static const char* kinds[] = {"mutex", "spinlock", "rwsem"};
        l.kind = kinds[id % 3];
        l.mode = l.kind == "rwsem" ? "write" : "";
        l.caller = "driver_func_" + std::to_string(id);
        l.name = l.kind + "@" + l.caller;
    }
    l.address = 0xffff888100000000ull + uint64_t(id) * 0x40;
    l.flags = l.kind == "mutex" ? 33 : l.kind == "rwsem" ? (l.mode == "read" ? 2 : 4) : 1;
    return l;
}

double weight(int id)
{
    const int known = int(std::size(kKnown));
    return id <= known ? kKnown[id - 1].weight : 1.0 / (id - known + 1);
}

std::map<std::string, std::string> meta(const SessionShape& shape)
{
    return {{"tool_version", "0.1.0"},
            {"host", "testhost"},
            {"kernel_release", shape.contention_scale > 1 ? "6.1.0-patched" : "6.1.0-18-amd64"},
            {"kernel_version", "#1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1"},
            {"config.CONFIG_MUTEX_SPIN_ON_OWNER", "y"},
            {"config.CONFIG_RWSEM_SPIN_ON_OWNER", "y"},
            {"config.CONFIG_PREEMPT_DYNAMIC", "y"},
            {"cpu_model", "Test CPU @ 3.0GHz"},
            {"online_cpus", "4"},
            {"workload", "pipe"},
            {"workload.threads", "4"},
            {"interval_ms", std::to_string(int(shape.interval_s * 1000))},
            {"start_time", "2024-05-01T10:00:00+00:00"},
            {"scope", "system"}};
}

}  // namespace

struct LiveSession::State {
    SessionShape shape;
    SessionWriter writer;
    std::mt19937_64 rng;
    int64_t run = 0;
    int run_number = 0;
    int64_t next_index = 0;
    uint64_t clock_ns = 5'000'000'000ull;
    uint64_t run_start_ns = 0;
    double run_ops = 0;
    LostCounters lost;
    std::vector<TaskStats> tasks;
    // The run's holder split so far, per lock: running, runnable, asleep.
    std::map<int, std::array<uint64_t, 3>> holder_parts;

    State(const QString& path, const SessionShape& s)
        : shape(s), writer(SessionWriter::create(path.toStdString(), true)), rng(s.seed)
    {
        writer.set_meta(meta(shape));
    }

    double noise(double spread)
    {
        std::normal_distribution<double> n(1.0, spread);
        return std::max(0.05, n(rng));
    }

    void begin_run()
    {
        ++run_number;
        clock_ns += 300'000'000ull;  // the workload restarts between repeats
        run_start_ns = clock_ns;
        run = writer.begin_run("run " + std::to_string(run_number), clock_ns);
        next_index = 0;
        run_ops = 0;
        lost = {};
        tasks.clear();
        holder_parts.clear();
        for (uint32_t t = 0; t < 4; ++t) {
            TaskStats task;
            task.run = run;
            task.pid = 1000 + uint32_t(run_number) * 10 + t;
            task.tgid = 1000 + uint32_t(run_number) * 10;
            task.comm = "lockscope-pipe";
            tasks.push_back(task);
        }
    }

    std::vector<StackSample> stacks(int locks) const
    {
        std::vector<StackSample> out;
        for (int id = 1; id <= locks; ++id) {
            const LockInfo l = lock_info(id);
            const std::string lock_fn = l.kind == "mutex"   ? "__mutex_lock.constprop.0+0x8b"
                                        : l.kind == "rwsem" ? (l.mode == "read" ? "rwsem_down_read_slowpath+0x2a1"
                                                                                : "rwsem_down_write_slowpath+0x2f1")
                                                            : "_raw_spin_lock+0x2c";
            for (int variant = 0; variant < 2; ++variant) {
                StackSample s;
                s.run = run;
                s.lock_id = id;
                s.role = "waiter";
                s.frames = {lock_fn, l.caller + "+0x" + std::to_string(0x40 + variant * 0x30),
                            variant ? "vfs_write+0x249" : "ksys_write+0x6f", "do_syscall_64+0x5b",
                            "entry_SYSCALL_64_after_hwframe+0x6e"};
                s.samples = uint64_t(std::max(1.0, weight(id) * (variant ? 3 : 7)) * double(next_index + 1));
                s.wait_ns = s.samples * 4200;
                out.push_back(s);
            }
            if (l.kind != "spinlock") {
                StackSample w;
                w.run = run;
                w.lock_id = id;
                w.role = "waker";
                w.frames = {"try_to_wake_up+0x1f4",
                            "wake_up_q+0x4a",
                            l.kind == "mutex" ? "__mutex_unlock_slowpath+0x15c" : "rwsem_wake+0x7a",
                            l.caller + "+0x" + std::to_string(0x90),
                            "vfs_write+0x249",
                            "do_syscall_64+0x5b"};
                w.samples = uint64_t(std::max(1.0, weight(id) * 2) * double(next_index + 1));
                out.push_back(w);
                // The holder: preempted inside the caller, or running elsewhere (no frames).
                StackSample h = w;
                h.role = "holder:preempted";
                h.frames = {l.caller + "+0x" + std::to_string(0x60), "vfs_write+0x249", "do_syscall_64+0x5b"};
                h.wait_ns = h.samples * 9000;
                out.push_back(h);
                h.role = "holder:running";
                h.frames.clear();
                h.samples = 1;
                out.push_back(h);
                // Where a followed holder slept holding it: every sleep, its time.
                h.role = "holder:asleep";
                h.frames = {"__schedule+0x2d1", "schedule+0x4e", "io_schedule+0x12", "folio_wait_bit_common+0x12c",
                            l.caller + "+0x" + std::to_string(0x60)};
                h.samples = 2;
                h.wait_ns = 5'000'000;
                out.push_back(h);
            }
        }
        return out;
    }

    // Wait chains, cumulative per run: pipe writers and unlinkers queue behind
    // holders that fault and wait for mmap_lock, whose holders wait for
    // kernfs_mutex (when the session has that many locks).
    std::vector<WaitEdge> edges(int locks) const
    {
        std::vector<WaitEdge> out;
        const uint64_t n = uint64_t(next_index + 1);
        if (locks >= 4)
            out.push_back({run, 1, 4, 6 * n, 6 * n * 52'000});  // pipe->mutex -> mmap_lock
        if (locks >= 5)
            out.push_back({run, 2, 5, 2 * n, 2 * n * 90'000});  // i_rwsem -> mmap_lock
        if (locks >= 8)
            out.push_back({run, 4, 8, 1 * n, 1 * n * 30'000});  // mmap_lock -> kernfs_mutex
        return out;
    }

    // The holder split of a lock with an owner to follow (mutexes, writers'
    // rwsems): its holders ran for a fifth of the wait, were preempted for
    // 45% and asleep for a tenth; the rest is unknown.
    void split_by_holder(const LockInfo& l, LockCounters& c)
    {
        if (!shape.holder_split || !(l.kind == "mutex" || (l.kind == "rwsem" && l.mode == "write")))
            return;
        c.holder_running_ns = c.wait_ns * 2 / 10;
        c.holder_runnable_ns = c.wait_ns * 45 / 100;
        c.holder_asleep_ns = c.wait_ns / 10;
        std::array<uint64_t, 3>& sum = holder_parts[int(l.id)];
        sum[0] += c.holder_running_ns;
        sum[1] += c.holder_runnable_ns;
        sum[2] += c.holder_asleep_ns;
    }

    // The run's holder tasks so far, cumulative: two of the workload's
    // threads held each lock (60% and 40% of each part), and a compiler and
    // a softirq thread preempted them (two thirds and the rest of the wait
    // behind a runnable holder).
    std::vector<HolderTime> holder_times() const
    {
        std::vector<HolderTime> out;
        for (const auto& [id, sum] : holder_parts) {
            HolderTime first{.run = run,
                             .lock_id = id,
                             .role = "holder",
                             .tid = tasks[0].pid,
                             .tgid = tasks[0].tgid,
                             .comm = tasks[0].comm,
                             .running_ns = sum[0] * 6 / 10,
                             .runnable_ns = sum[1] * 6 / 10,
                             .asleep_ns = sum[2] * 6 / 10,
                             .waits = uint64_t(next_index + 1) * 30};
            HolderTime second = first;
            second.tid = tasks[1].pid;
            second.running_ns = sum[0] - first.running_ns;
            second.runnable_ns = sum[1] - first.runnable_ns;
            second.asleep_ns = sum[2] - first.asleep_ns;
            second.waits = uint64_t(next_index + 1) * 20;
            HolderTime compiler{.run = run,
                                .lock_id = id,
                                .role = "preemptor",
                                .tid = 9000,
                                .tgid = 9000,
                                .comm = "cc1plus",
                                .runnable_ns = sum[1] * 2 / 3,
                                .waits = uint64_t(next_index + 1) * 12};
            HolderTime softirq = compiler;
            softirq.tid = softirq.tgid = 14;
            softirq.comm = "ksoftirqd/0";
            softirq.runnable_ns = sum[1] - compiler.runnable_ns;
            softirq.waits = uint64_t(next_index + 1) * 5;
            out.insert(out.end(), {first, second, compiler, softirq});
        }
        return out;
    }

    // The sampled waiters' cgroups, cumulative per run: the pipe is shared by
    // a web service and a user session, the rest is the database's.
    std::vector<LockCgroup> lock_cgroups(int locks) const
    {
        std::vector<LockCgroup> out;
        const uint64_t n = uint64_t(next_index + 1);
        for (int id = 1; id <= locks; ++id) {
            if (id == 1) {
                out.push_back({run, id, "/system.slice/web.service", 5 * n});
                out.push_back({run, id, "/user.slice/user-1000.slice", 2 * n});
            } else {
                out.push_back({run, id, "/system.slice/db.service", n});
            }
        }
        return out;
    }

    void interval()
    {
        const int locks = shape.locks;
        IntervalBatch b;
        IntervalTotals& t = b.totals;
        t.run = run;
        t.index = next_index;
        t.start_ns = clock_ns;
        t.end_ns = clock_ns + uint64_t(shape.interval_s * 1e9);
        clock_ns = t.end_ns;
        const double secs = shape.interval_s;
        t.cpu_ns = uint64_t(4 * secs * 1e9);
        // Idle grows when spinning fails and waiters sleep: the 4.7 story.
        const double phase = std::sin(double(next_index) / 5.0);
        const double idle = std::clamp(0.18 + 0.08 * phase + 0.1 * (shape.contention_scale - 1), 0.01, 0.95);
        t.idle_ns = uint64_t(double(t.cpu_ns) * idle * noise(0.05));
        t.ops = 380'000.0 * secs * noise(0.03) / shape.contention_scale;
        for (int id = 1; id <= locks; ++id) {
            if (next_index == 0 && run_number == 1)
                b.new_locks.push_back(lock_info(id));
            const LockInfo l = lock_info(id);
            LockInterval li;
            li.run = run;
            li.index = next_index;
            li.lock_id = id;
            LockCounters& c = li.counters;
            const double rate = 900.0 * weight(id) * shape.contention_scale * (1 + 0.3 * phase);
            c.contentions = uint64_t(std::max(1.0, rate * secs * noise(0.08)));
            const double mean_ns = (l.kind == "spinlock" ? 900.0 : 5200.0) * shape.contention_scale * noise(0.1) *
                                   (1 + 0.2 * double(id % 4));
            c.wait_ns = uint64_t(double(c.contentions) * mean_ns);
            c.max_wait_ns = uint64_t(mean_ns * 18 * noise(0.2));
            if (l.kind == "mutex") {
                c.spin_attempts = c.contentions + c.contentions / 9;
                const double fail = std::clamp(shape.spin_failure * shape.contention_scale * noise(0.1), 0.0, 0.95);
                c.spin_failures = uint64_t(double(c.spin_attempts) * fail);
                c.spin_successes = c.spin_attempts - c.spin_failures;
                c.spin_ns = c.wait_ns * 6 / 10;
            } else if (l.kind == "spinlock") {
                c.spin_ns = c.wait_ns;
            }
            const uint64_t queued = l.kind == "mutex" ? c.spin_failures : l.kind == "rwsem" ? c.contentions / 3 : 0;
            c.sleeps = queued;
            c.wakeups = queued;
            c.sleep_ns = l.kind == "spinlock" ? 0 : (c.wait_ns - c.spin_ns) * 7 / 10;
            c.preempt_ns = (c.wait_ns - c.spin_ns) / 10;
            c.preemptions = c.contentions / 50;
            split_by_holder(l, c);
            // Why the spinners queued: mostly a sleeping or reader owner.
            const uint64_t shares[kOwnerStates] = {queued * 2 / 10, queued * 4 / 10,
                                                   l.kind == "rwsem" ? queued * 3 / 10 : 0, queued / 20, 0};
            uint64_t assigned = 0;
            for (int s = 0; s < kOwnerStates - 1; ++s)
                assigned += c.owner[size_t(s)] = shares[s];
            c.owner[kOwnerStates - 1] = queued - assigned;
            // Wait histogram: log-normal around the mean.
            const int centre = int(std::log2(mean_ns));
            uint64_t left = c.contentions;
            for (int k = -4; k <= 4 && left; ++k) {
                const int bucket = std::clamp(centre + k, 0, kHistBuckets - 1);
                const uint64_t n =
                    k == 4 ? left : std::min(left, uint64_t(double(c.contentions) * std::exp(-0.5 * k * k) / 2.5));
                c.hist[size_t(bucket)] += n;
                left -= n;
            }
            t.counters.add(c);
            b.locks.push_back(li);
        }
        t.events = t.counters.contentions * 2 + t.counters.sleeps * 2;
        run_ops += *t.ops;
        for (TaskStats& task : tasks) {
            LockCounters share = {};
            share.contentions = t.counters.contentions / 4;
            share.wait_ns = t.counters.wait_ns / 4;
            share.spin_attempts = t.counters.spin_attempts / 4;
            share.spin_failures = t.counters.spin_failures / 4;
            task.counters.add(share);
        }
        b.stacks = stacks(locks);
        b.edges = edges(locks);
        b.lock_cgroups = lock_cgroups(locks);
        b.holder_times = holder_times();
        b.tasks = tasks;
        b.run.id = run;
        b.run.lost = lost;
        b.run.stack_samples = 64 * uint64_t(next_index + 1);
        b.run.ops = run_ops;
        if (shape.user_locks)  // a run's rows, replaced by each interval's
            add_user_locks(b);
        writer.write_interval(b);
        ++next_index;
    }

    // A run's user-space locks (their totals over the run so far).
    void add_user_locks(IntervalBatch& b) const
    {
        const uint32_t pid = 1000 + uint32_t(run_number) * 10;
        for (const auto& [name, kind, waits] : {std::tuple{"g_cache_lock", "pthread_mutex", 4000u},
                                                std::tuple{"g_table_lock", "pthread_rwlock/r", 900u}}) {
            UserLockRow row{{.name = name,
                             .name_source = "user-symbol",
                             .module = "app",
                             .kind = kind,
                             .caller = std::string("update_") + name,
                             .waits = waits,
                             .wait_ns = waits * 5000ull,
                             .max_wait_ns = 90'000,
                             .samples = waits / 16}};
            // The wait's parts (on a CPU, asleep, runnable) and its
            // histogram: every wait in the 4 µs bucket.
            row.oncpu_ns = row.wait_ns / 10;
            row.asleep_ns = row.wait_ns * 7 / 10;
            row.runnable_ns = row.wait_ns - row.oncpu_ns - row.asleep_ns;
            row.wakes = waits / 2;
            row.hist[12] = waits;
            row.run = run;
            row.pid = pid;
            row.owner_tids = std::to_string(pid + 1);
            if (std::string(kind) == "pthread_mutex") {
                // The holder split: half of the sleep behind the owner
                // running, a quarter behind it preempted by a kernel worker.
                row.holder_running_ns = row.asleep_ns / 2;
                row.holder_runnable_ns = row.asleep_ns / 4;
                UserLockHolder owner;
                owner.role = "holder";
                owner.tid = pid + 1;
                owner.tgid = pid;
                owner.comm = "worker-1";
                owner.running_ns = row.holder_running_ns;
                owner.runnable_ns = row.holder_runnable_ns;
                owner.waits = waits / 2;
                UserLockHolder preemptor = owner;
                preemptor.role = "preemptor";
                preemptor.tid = 77;
                preemptor.tgid = 77;
                preemptor.comm = "kworker/0:1";
                preemptor.running_ns = 0;
                for (UserLockHolder* h : {&owner, &preemptor}) {
                    h->run = run;
                    h->pid = pid;
                    h->name = name;
                    h->kind = kind;
                    b.user_lock_holders.push_back(*h);
                }
            }
            b.user_locks.push_back(row);
            b.user_lock_wakers.push_back({.run = run,
                                          .pid = pid,
                                          .name = name,
                                          .kind = kind,
                                          .waker_tid = pid + 2,
                                          .waker_pid = pid,
                                          .waker_comm = "worker-2",
                                          .wakes = waits / 2});
            b.user_lock_stacks.push_back({.run = run,
                                          .pid = pid,
                                          .name = name,
                                          .kind = kind,
                                          .frames = {"__lll_lock_wait", std::string("update_") + name, "worker"},
                                          .samples = waits / 16,
                                          .wait_ns = waits * 300ull});
        }
        if (shape.locks >= 1)  // g_cache_lock's owners wait for pipe->mutex
            b.user_lock_chains.push_back({.run = run,
                                          .pid = pid,
                                          .name = "g_cache_lock",
                                          .kind = "pthread_mutex",
                                          .kernel_lock_id = 1,
                                          .waits = 40,
                                          .wait_ns = 40 * 9000,
                                          .max_wait_ns = 20'000});
        b.user_lock_left_out.push_back({.run = run, .reason = "condition", .addresses = 2, .waits = 300});
        b.user_lock_runs.push_back({.run = run, .status = "recorded", .pids = std::to_string(pid), .samples = 300});
    }

    void end_run()
    {
        RunInfo r;
        r.id = run;
        r.start_ns = run_start_ns;
        r.end_ns = clock_ns;
        r.status = "complete";
        r.lost = lost;
        r.ops = run_ops;
        r.stack_samples = 64 * uint64_t(next_index);
        writer.end_run(r);
    }
};

void write_session(const QString& path, const SessionShape& shape)
{
    LiveSession live(path, shape);
    live.finish();
}

LiveSession::LiveSession(const QString& path, const SessionShape& shape) : state_(new State(path, shape))
{
    for (int r = 0; r < shape.runs; ++r) {
        state_->begin_run();
        for (int i = 0; i < shape.intervals; ++i)
            state_->interval();
        if (r + 1 < shape.runs || shape.finish_last_run)
            state_->end_run();
    }
}

LiveSession::~LiveSession()
{
    delete state_;
}

void LiveSession::append(int intervals)
{
    for (int i = 0; i < intervals; ++i)
        state_->interval();
}

void LiveSession::finish()
{
    if (!state_->shape.finish_last_run) {
        state_->end_run();
        state_->shape.finish_last_run = true;
    }
    state_->writer.close();
}

SessionPair write_session_pair(const QString& dir, uint64_t seed_b)
{
    const SessionPair pair{QDir(dir).filePath("a.lockscope"), QDir(dir).filePath("b.lockscope")};
    write_session(pair.a, {});
    SessionShape worse;
    worse.seed = seed_b;
    worse.contention_scale = 1.4;
    write_session(pair.b, worse);
    return pair;
}

}  // namespace lockscope::gui::testing
