// The BPF layer: owns the loaded and attached lockscope programs (a
// move-only RAII wrapper over the libbpf skeleton; probe.cpp) and reads
// their maps into the pipeline's RawSnapshot values (map_snapshot.cpp) and,
// in trace mode, their ring buffer into episodes (trace_stream.h).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "probe/contention_state_fds.h"
#include "core/model.h"
#include "pipeline/snapshot.h"
#include "lockscope_abi.h"
#include "probe/cgroups.h"

struct lockscope_bpf;
struct bpf_link;
struct ls_lock_stats;

namespace lockscope::probe {

struct ProbeOptions {
    uint32_t tgid = 0;            // 0: every process
    bool children = true;         // with tgid: also every process it creates after the attach, and theirs
    uint32_t stack_period = 256;  // one stack per N episodes per CPU (plus each lock's first); 0: none
    uint32_t holder_period = 16;  // the holder's stack at one queued begin in N per CPU; 0: none
    // With holder_period: a CPU-clock tick per CPU at this rate takes the
    // stack of a holder a waiter saw running, on its own CPU; 0: none.
    uint32_t running_holder_hz = 99;
    uint32_t kind_bits = 0;             // record --kind: 1 << ls_kind_bit() of the kinds counted; 0: all
    uint32_t tid = 0;                   // record --tid: only this thread; 0: all
    std::vector<unsigned> cpus;         // record -C: only waits that begin on these CPUs; empty: all
    std::vector<CgroupTarget> cgroups;  // record --cgroup: only tasks in these (or below); empty: all
    uint32_t time_period = 1;  // record --sample: time one episode in N per CPU (core/analysis/estimate.h); 1: all
    uint32_t max_locks = LS_MAX_LOCKS_DEFAULT;  // distinct (lock, kind) keys
    uint32_t max_stacks = LS_MAX_STACKS_DEFAULT;
    uint32_t max_tasks = 8192;
    bool trace = false;              // stream every finished episode (record --trace)
    uint32_t trace_buffer_mib = 16;  // ring buffer, rounded up to a power of two
    // The user stacks of sampled kernel-lock waiters (sleeping kinds), at
    // most this many a second, sent through a ring buffer for a user-space
    // unwinder (ContentionStateFds::user_stacks); 0: none.
    uint32_t user_stacks_per_sec = 0;
};

// What became of the kernel-lock waiters' user stacks (ls_user_stack_counts).
struct UserStackCounts {
    uint64_t sent = 0;
    uint64_t rate_limited = 0;
    uint64_t lost = 0;     // the ring buffer was full
    uint64_t no_user = 0;  // a waiter without user registers or stack (a kernel thread)
};

class TraceStream;
class RwsemSpin;

class Probe {
public:
    // Checks features, opens, sets rodata and map sizes, loads, attaches.
    // Throws lockscope::Error with the reason and a remedy.
    static Probe attach(const ProbeOptions& options);

    Probe(Probe&& other) noexcept;
    Probe& operator=(Probe&& other) noexcept;
    Probe(const Probe&) = delete;
    Probe& operator=(const Probe&) = delete;
    ~Probe();

    // Cumulative counters now. Stack frames are delivered once per stack id.
    RawSnapshot snapshot();
    // The USDT probes (reflock's) of process tgid, in binary (its executable
    // by default: a command not yet exec'd names the file it will run); a
    // process without them is not an error. The recorder attaches them after
    // its baseline snapshot: a program waiting on the probes' semaphores
    // starts the moment they are set.
    void attach_user_probes(uint32_t tgid, const std::string& binary = {});

    // With ProbeOptions::trace: the episodes read from the ring buffer since
    // the last call (their run is not set). Empty otherwise.
    std::vector<Episode> take_episodes();

    // Stops every program; what they counted stays readable. Afterwards
    // snapshot() and take_episodes() see the final state: nothing can end
    // between them, so the trace and the counters cover the same episodes,
    // and the episodes still pending on a CPU (an end's aggregation waits for
    // the CPU's next event, episode.h) are added to their locks.
    void detach();

    // True when lock rows record their slab cache (bpf_get_kmem_cache).
    bool slab_lookup() const { return slab_lookup_; }

    // Per CPU, the address of its `runqueues` per-CPU variable, read by
    // running one of this probe's programs once on each CPU (identity/ names
    // per-CPU locks from it); empty when it cannot be read (the reason in
    // `why`).
    std::vector<uint64_t> percpu_runqueues(std::string* why = nullptr) const;

    // The processes of the traced tree (tgid, parent tgid) since the last
    // call, the target itself excluded, exited ones included (and then
    // forgotten by the kernel); empty when no tree is followed.
    std::vector<std::pair<uint32_t, uint32_t>> traced_processes();

    // Which lock each task is waiting for, to follow a user lock's owner into the kernel.
    ContentionStateFds contention_state_fds() const;

    // Kernel-lock waiters' user stacks sent so far (ProbeOptions::user_stacks_per_sec).
    UserStackCounts user_stack_counts() const;

    // True when the target process fires lockscope's USDT probes (reflock).
    bool user_probes() const { return user_probes_; }

    // The optional fentry view of the rwsem writer's spin: "on (...)" or
    // "unavailable (why)" (probe/rwsem_spin.h).
    std::string rwsem_spin_status() const;

    // The running holders' stacks (ProbeOptions::running_holder_hz): "on
    // (N CPUs, H Hz)", "off (...)" or "unavailable (why)".
    const std::string& running_holders_status() const { return running_holders_; }

private:
    explicit Probe(lockscope_bpf* skel, uint32_t cpus, uint32_t time_period);
    void read_locks(RawSnapshot& out);
    void add_pending(std::vector<ls_lock_stats>& stats, uint32_t rows);
    void read_stacks(RawSnapshot& out);
    void read_tasks(RawSnapshot& out);
    void read_edges(RawSnapshot& out);
    void read_holder_tasks(RawSnapshot& out);
    void read_holder_times(RawSnapshot& out);
    void read_lock_cgroups(RawSnapshot& out);
    void read_cpu_state(RawSnapshot& out);
    const RawIdentity& identity_of(uint32_t row);
    void reset() noexcept;  // releases everything, in the order the programs need

    // Owns a bpf_link: destroying it detaches the program.
    struct LinkDeleter {
        void operator()(::bpf_link* link) const noexcept;
    };
    using Link = std::unique_ptr<::bpf_link, LinkDeleter>;

    lockscope_bpf* skel_ = nullptr;
    uint32_t possible_cpus_ = 0;
    uint32_t time_period_ = 1;  // the kernel's time sums are scaled by it on reading
    std::set<int32_t> delivered_stacks_;
    std::vector<Link> user_links_;
    std::vector<Link> clock_links_;  // on_cpu_clock, one per online CPU
    std::string running_holders_;
    bool user_stacks_ = false;  // ProbeOptions::user_stacks_per_sec
    bool user_probes_ = false;
    bool slab_lookup_ = false;
    bool detached_ = false;
    std::set<uint32_t> exited_seen_;                      // processes of the tree seen exited at the last read
    std::vector<std::optional<RawIdentity>> identities_;  // by lock row
    CgroupNames cgroup_names_;
    std::unique_ptr<TraceStream> trace_;
    std::unique_ptr<RwsemSpin> rwsem_spin_;
};

}  // namespace lockscope::probe
