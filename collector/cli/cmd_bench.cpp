// lockscope bench: the will-it-scale loop over the reference locks (and
// pthread/std locks for comparison), swept over thread counts, repeated with
// the variants interleaved, summarised as medians with their spread, and
// optionally stored as a session that `report` reads.
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/clock.h"
#include "benchlib/bench_session.h"
#include "benchlib/bench_table.h"
#include "cli/options.h"
#include "core/storage/policy_labels.h"
#include "core/error.h"
#include "core/format.h"
#include "core/host/metadata.h"
#include "core/storage/session_store.h"
#include "probe/oncpu_oracle.h"

namespace lockscope::cli {
namespace {

namespace rb = reflock::harness;

struct BenchArgs {
    std::vector<std::string> locks;
    TargetArgs target;  // -t/--threads: the counts to sweep
    // Signed, so that "--cs=-5" is reported as -5 rather than wrapped.
    long long critical_ns = 1000, outside_ns = 1000, read_pct = 0, release_window_ns = 0, repeat = 5;
    double duration_s = 2, interval_s = 0.5, wait_for_tracer_s = 0;
    std::string output, format = "text", oracle = "budget";
    bool force = false;
};

const char* const kBenchUsage =
    "usage: lockscope bench [--lock LOCK]... [-t THREADS] [--cs NS] [--outside NS] [--read-pct P]\n"
    "                       [--release-window NS] [--oracle budget|bpf] [-d SEC] [-i SEC] [--repeat N]\n"
    "                       [-o FILE] [-F FORMAT]\n\n"
    "Replays the kernel's lock algorithms in user space: THREADS threads loop { lock;\n"
    "critical section; unlock; outside work } for -d seconds per run. Every repeat runs\n"
    "each (threads, lock) variant once, in turn, so that the machine's drifts hit all\n"
    "variants alike; ratios to the first --lock are taken within a repeat.\n\n"
    "LOCK: mutex (reflock's replica of the kernel mutex since 4.10), mutex@4.6 (the 4.6\n"
    "mutex: count + owner, no handoff), rwsem@POLICY (the rwsem replica with the policy\n"
    "of the first release that behaved that way, e.g. rwsem@4.2, rwsem@5.4; old labels\n"
    "such as rwsem@5.3 are accepted with a note), pthread_mutex, pthread_rwlock,\n"
    "std_shared_mutex. Repeat --lock or give a comma list.\n"
    "THREADS: a number, a list (1,2,4) or a range swept one by one (1-8).\n\n"
    "--release-window NS is a knob, not a measurement: up_write (and the 4.6\n"
    "mutex_unlock) busy-waits NS between clearing the owner and releasing the count,\n"
    "widening exactly the condition 4.7's owner-NULL-count-busy check fires on. On a\n"
    "large machine that gap is long because other CPUs hammer the count's cache line;\n"
    "on a small VM it is two stores, nanoseconds. It lengthens every hold of those\n"
    "locks; the modern mutex has no such window, so at a non-zero window compare\n"
    "rwsem@4.2 with mutex@4.6 or rwsem@4.7-hacked, which pay the same window.\n\n"
    "--oracle: how a spinner asks \"is the owner running?\". budget: it assumes so and\n"
    "stops after a time budget (cannot see a preempted owner). bpf: a BPF program on\n"
    "sched_switch keeps each thread's on-CPU state in a table the locks read (root, or\n"
    "CAP_BPF + CAP_PERFMON; falls back to budget with a warning).\n\n"
    "Output: per lock and thread count, ops/s, ratio, spin-failure rate, sleeps and\n"
    "handoffs per 1000 ops and CPU idle, each as median (min–max) over repeats. -o stores\n"
    "one session run per (lock, threads, repeat) for 'lockscope report', and each run's\n"
    "handoffs in the session's meta bench.handoffs.";

constexpr const char* kBenchExamples =
    "  lockscope bench --lock pthread_mutex,mutex -t 1-4\n"
    "  lockscope bench --lock rwsem@4.2,rwsem@4.8 -t 4 --release-window 200 -o rwsem.lockscope\n"
    "  lockscope bench --lock mutex --oracle bpf -F markdown";

po::options_description describe(BenchArgs& a)
{
    po::options_description d("options");
    d.add_options()("help,h", "show this help")("list-locks", "print every lock variant, one per line, and exit")(
        "lock,l", po::value(&a.locks)->composing(),
        "lock variant (repeatable, or a comma list); "
        "default pthread_mutex,mutex");
    add_target_options(d, a.target, TargetParts::ThreadsOnly);
    d.add_options()("cs", po::value(&a.critical_ns)->default_value(1000), "critical section length, ns of work")(
        "outside", po::value(&a.outside_ns)->default_value(1000), "work between acquisitions, ns")(
        "read-pct", po::value(&a.read_pct)->default_value(0), "share of acquisitions taken shared, 0-100")(
        "release-window", po::value(&a.release_window_ns)->default_value(0),
        "rwsem and mutex@4.6 unlock: ns between clearing owner and releasing the count (see above)")(
        "oracle", po::value(&a.oracle)->default_value("budget"), "owner on-CPU oracle: budget or bpf (see above)")(
        "duration,d", po::value(&a.duration_s)->default_value(2), "seconds per run")(
        "interval,i", po::value(&a.interval_s), "seconds per interval (default 0.5, at most -d)")(
        "repeat,r", po::value(&a.repeat)->default_value(5), "repeats (5 is the minimum that shows spread)")(
        "output,o", po::value(&a.output), "also store the runs as a session file")("force,f", po::bool_switch(&a.force),
                                                                                   "overwrite an existing output file")(
        "wait-for-tracer", po::value(&a.wait_for_tracer_s),
        "before the first run, wait up to SEC for a tracer on the locks' USDT probes, e.g.\n"
        "'lockscope record -p PID' (so a recording sees every run from its start)")(
        "format,F", po::value(&a.format)->default_value("text"), "text, json or markdown");
    return d;
}

std::vector<std::string> split_locks(const std::vector<std::string>& given)
{
    std::vector<std::string> out;
    for (const std::string& g : given) {
        size_t start = 0;
        while (start <= g.size()) {
            const size_t comma = std::min(g.find(',', start), g.size());
            if (comma > start)
                out.push_back(g.substr(start, comma - start));
            start = comma + 1;
        }
    }
    if (out.empty())
        return {"pthread_mutex", "mutex"};
    // Old policy labels still work, with a note on what they name now.
    for (std::string& name : out) {
        std::string note;
        name = current_lock_name(name, note);
        if (!note.empty())
            std::fprintf(stderr, "lockscope bench: note: %s\n", note.c_str());
    }
    return out;
}

// 1-minute load average: other processes compete with the bench for CPUs
// and show up as noise (and as idle the bench did not leave).
std::string loadavg()
{
    std::ifstream f("/proc/loadavg");
    std::string one;
    f >> one;
    return one.empty() ? "?" : one;
}

std::string num(double v)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

// For `lockscope record -p PID`: started first, the bench would run before
// the recorder has attached and the recording would miss its start.
void wait_for_tracer(double timeout_s)
{
    std::fprintf(stderr, "lockscope bench: pid %d waiting up to %g s for a tracer (lockscope record -p %d)\n",
                 int(getpid()), timeout_s, int(getpid()));
    const uint64_t deadline = monotonic_ns() + uint64_t(timeout_s * 1e9);
    while (!reflock::usdt_tracer_attached()) {
        if (monotonic_ns() > deadline)
            throw Error("no tracer attached to the lockscope USDT probes within " + num(timeout_s) + " s", "", 0,
                        "start 'lockscope record -p " + std::to_string(getpid()) + "' while it waits");
        usleep(10000);
    }
}

// Values the options' types cannot check.
void check_args(BenchArgs& a, const po::variables_map& vm)
{
    if (a.format != "text" && a.format != "json" && a.format != "markdown")
        throw UsageError("--format must be text, json or markdown, not '" + a.format + "'");
    if (a.critical_ns < 0 || a.outside_ns < 0 || a.release_window_ns < 0)
        throw UsageError("--cs, --outside and --release-window must not be negative");
    if (a.read_pct < 0 || a.read_pct > 100)
        throw UsageError("--read-pct must be between 0 and 100");
    if (a.oracle != "budget" && a.oracle != "bpf")
        throw UsageError("--oracle must be budget or bpf, not '" + a.oracle + "'");
    if (a.repeat < 1 || a.repeat > 1000)
        throw UsageError("--repeat must be between 1 and 1000");
    if (!vm.count("interval"))
        a.interval_s = std::min(0.5, a.duration_s);
    if (!(a.duration_s >= 0.001 && a.duration_s <= 86400))
        throw UsageError("--duration must be between 0.001 and 86400 seconds");
    if (!(a.interval_s >= 0.001 && a.interval_s <= a.duration_s))
        throw UsageError("--interval must be at least 0.001 seconds and at most the duration");
    if (vm.count("wait-for-tracer") && !(a.wait_for_tracer_s > 0 && a.wait_for_tracer_s <= 86400))
        throw UsageError("--wait-for-tracer must be more than 0 and at most 86400 seconds");
}

// Variants grouped by thread count, the first lock first in each group:
// bench_table takes the group's first as the ratio baseline.
std::vector<rb::Params> variants_of(const BenchArgs& a, const std::vector<std::string>& lock_names)
{
    std::vector<rb::Params> variants;
    for (unsigned t : parse_thread_counts(a.target.threads))
        for (const std::string& name : lock_names) {
            rb::Params p;
            try {
                p.lock = rb::parse_lock(name);
            } catch (const std::invalid_argument& e) {
                throw UsageError(e.what());
            }
            p.lock.release_window_ns = uint64_t(a.release_window_ns);
            p.threads = t;
            p.critical_ns = uint64_t(a.critical_ns);
            p.outside_ns = uint64_t(a.outside_ns);
            p.read_percent = unsigned(a.read_pct);
            p.duration = std::chrono::milliseconds(std::llround(a.duration_s * 1000));
            p.interval = std::chrono::milliseconds(std::llround(a.interval_s * 1000));
            try {
                rb::validate(p);
            } catch (const std::invalid_argument& e) {
                throw UsageError(e.what());
            }
            variants.push_back(p);
        }
    return variants;
}

// Opened before the first run: an unwritable path fails now, not in an hour.
std::optional<SessionWriter> open_writer(const BenchArgs& a, const bench_session::SweepInfo& sweep)
{
    std::optional<SessionWriter> writer;
    if (a.output.empty())
        return writer;
    writer.emplace(SessionWriter::create(a.output, a.force));
    auto meta = collect_host_metadata();
    for (auto& [k, v] : bench_session::sweep_meta(sweep))
        meta[k] = v;
    meta["bench.oracle"] = a.oracle;
    writer->set_meta(meta);
    return writer;
}

// The variants run in turn, `repeats` times (A B C, A B C ...), each run
// stored in `writer` as it ends. The same order as rb::run_interleaved, but
// with run() called here: its interval callback gives each interval a real
// timestamp for the session, which run_interleaved's results lack.
std::vector<std::vector<rb::RunResult>> run_variants(const BenchArgs& a, const std::vector<rb::Params>& variants,
                                                     unsigned repeats, std::optional<SessionWriter>& writer)
{
    const size_t total_runs = variants.size() * repeats;
    bench_session::LockTable lock_table;
    std::string handoffs;  // meta bench.handoffs, one entry per stored run
    std::vector<std::vector<rb::RunResult>> results(variants.size());
    size_t done = 0;
    for (unsigned r = 0; r < repeats; r++) {
        for (size_t v = 0; v < variants.size(); v++) {
            std::vector<uint64_t> ends;
            ends.reserve(size_t(a.duration_s / a.interval_s) + 2);
            rb::RunResult run = rb::run(variants[v], r, [&](const rb::Sample&) { ends.push_back(monotonic_ns()); });
            const std::string label = bench_session::run_label(variants[v], r);
            std::fprintf(stderr, "  [%zu/%zu] %-28s %s ops/s\n", ++done, total_runs, label.c_str(),
                         format_count_short(run.total.ops_per_s()).c_str());
            // Stored after the run, not from the callback: SQLite writes on the
            // sampling thread would steal CPU from the run being measured.
            if (writer && !run.intervals.empty()) {
                const uint64_t start = ends[0] - uint64_t(run.intervals[0].wall_s * 1e9);
                const int64_t id = writer->begin_run(label, start);
                uint64_t ops = 0;
                for (size_t i = 0; i < run.intervals.size() && i < ends.size(); i++) {
                    writer->write_interval(bench_session::interval_batch(run.intervals[i], variants[v], run.cpus, id,
                                                                         int64_t(i), ends[i], ops, lock_table));
                    ops += run.intervals[i].ops;
                }
                RunInfo info;
                info.id = id;
                info.label = label;
                info.start_ns = start;
                info.end_ns = ends.back();
                info.status = "complete";
                info.ops = double(ops);
                writer->end_run(info);
                handoffs = bench_session::append_handoffs(handoffs, label, run.total.counters.handoffs);
                writer->set_meta({{bench_session::kHandoffsKey, handoffs}});
            }
            results[v].push_back(std::move(run));
        }
    }
    return results;
}

std::string format_results(const BenchArgs& a, const std::vector<bench_table::Row>& rows, const std::string& context)
{
    if (a.format != "json")
        return a.format == "markdown" ? bench_table::format_markdown(rows, context)
                                      : bench_table::format_text(rows, context);
    // Every event the process's reflock locks fired, warm-up included: what a
    // recorder attached to the USDT probes must count.
    const reflock::Counters all = reflock::counters_total();
    auto doc = bench_table::to_json(rows, context);
    doc["process_counters"] = {{"acquisitions", all.acquisitions},
                               {"contended", all.contended},
                               {"spin_attempts", all.spin_attempts},
                               {"spin_successes", all.spin_successes},
                               {"spin_failures", all.spin_failures},
                               {"sleeps", all.sleeps},
                               {"handoffs", all.handoffs}};
    return doc.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

// A lock held longer than the wall clock is impossible: the harness then
// calibrated its work loop while the machine was busy, and every critical
// section ran shorter than --cs. Say so rather than print a quiet lie.
void warn_if_overheld(const BenchArgs& a, const std::vector<bench_table::Row>& rows)
{
    for (const auto& row : rows)
        if (row.ops_per_s.median * double(a.critical_ns) > 1.05e9) {
            std::fprintf(stderr,
                         "lockscope bench: %s at %u threads held the lock %.0f%% of the time: critical sections\n"
                         "  ran shorter than --cs (work calibrated on a busy machine?); rerun when it is quieter\n",
                         row.lock.c_str(), row.threads, row.ops_per_s.median * double(a.critical_ns) / 1e7);
            return;
        }
}

}  // namespace

int cmd_bench(const Args& args)
{
    BenchArgs a;
    const po::options_description visible = describe(a);
    po::variables_map vm;
    if (!parse(args, visible, visible, {}, vm, {kBenchUsage, kBenchExamples}))
        return kExitOk;
    if (vm.count("list-locks")) {
        for (const std::string& name : rb::every_lock_name())
            std::printf("%s\n", name.c_str());
        return kExitOk;
    }
    check_args(a, vm);
    const std::vector<std::string> lock_names = split_locks(a.locks);
    const std::vector<rb::Params> variants = variants_of(a, lock_names);

    // Loaded before the runs and kept until the end: the locks read its table.
    std::optional<probe::OnCpuOracle> oracle;
    if (a.oracle == "bpf") {
        try {
            oracle.emplace(probe::OnCpuOracle::load(getpid()));
            reflock::set_owner_oracle(&oracle->oracle());
        } catch (const Error& e) {
            std::fprintf(stderr, "lockscope bench: --oracle bpf unavailable, using budget: %s\n", e.what());
            a.oracle = "budget";
        }
    }
    struct Uninstall {  // before `oracle` unmaps the table
        ~Uninstall() { reflock::set_owner_oracle(nullptr); }
    } uninstall;

    const unsigned repeats = unsigned(a.repeat);
    std::optional<SessionWriter> writer =
        open_writer(a, {lock_names, a.target.threads, uint64_t(a.critical_ns), uint64_t(a.outside_ns),
                        unsigned(a.read_pct), uint64_t(a.release_window_ns), uint64_t(variants[0].duration.count()),
                        uint64_t(variants[0].interval.count()), repeats});
    if (vm.count("wait-for-tracer"))
        wait_for_tracer(a.wait_for_tracer_s);

    const std::string load_before = loadavg();
    const size_t total_runs = variants.size() * repeats;
    std::fprintf(stderr, "lockscope bench: %zu runs of %g s (about %.0f s), load average %s\n", total_runs,
                 a.duration_s, double(total_runs) * (a.duration_s + 0.05), load_before.c_str());
    const auto results = run_variants(a, variants, repeats, writer);
    if (writer)
        writer->close();

    const unsigned cpus = results[0][0].cpus;
    const std::string context = "threads " + a.target.threads + " on " + std::to_string(cpus) +
                                " CPUs, critical section " + std::to_string(a.critical_ns) + " ns, outside " +
                                std::to_string(a.outside_ns) + " ns, reads " + std::to_string(a.read_pct) +
                                "%, release window " + std::to_string(a.release_window_ns) +
                                " ns (rwsem and mutex@4.6), owner oracle " + a.oracle + ", " + std::to_string(repeats) +
                                " interleaved repeats of " + num(a.duration_s) + " s; load average " + load_before +
                                " before, " + loadavg() + " after";
    const auto rows = bench_table::summarize(results, lock_names.size());
    const std::string out = format_results(a, rows, context);
    std::fwrite(out.data(), 1, out.size(), stdout);
    warn_if_overheld(a, rows);
    if (writer)
        std::fprintf(stderr, "lockscope bench: %zu runs stored in %s\n", total_runs, a.output.c_str());
    return kExitOk;
}

}  // namespace lockscope::cli
