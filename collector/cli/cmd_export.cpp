// lockscope export: a session as a Chrome/Perfetto trace, folded stacks, CSV or pprof.
#include <cerrno>
#include <cstdio>
#include <iostream>
#include <optional>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/options.h"
#include "core/analysis/report.h"
#include "core/error.h"
#include "core/analysis/user_locks.h"
#include "core/render/export.h"
#include "core/storage/atomic_file.h"
#include "core/storage/session_store.h"

namespace lockscope::cli {
namespace {

constexpr const char* kExportUsage =
    "usage: lockscope export FILE --format chrome-trace|folded|csv|pprof [-o OUT [-f]] [-E N [-k KEY]] [filters]\n"
    "\n"
    "Writes a session in a format other tools read (to stdout without -o):\n"
    "  chrome-trace  Trace Event JSON for Perfetto UI and chrome://tracing:\n"
    "                one track per thread with each episode's spin and queued phases as\n"
    "                slices named by the lock (args: kind, caller, owner state at queueing,\n"
    "                waker, off-CPU time), and CPU idle and contentions/s as counter tracks.\n"
    "                A queued phase is split where its waiter was woken ('woken' slice),\n"
    "                and a flow arrow runs from the waker's thread (a 'wakes' mark) to it:\n"
    "                who unblocked whom.\n"
    "                A session with user-space locks has their lock waits too, one slice\n"
    "                each (category 'user'; args: on-CPU, asleep and runnable time).\n"
    "                Slices need a session recorded with 'record --trace'; without one the\n"
    "                trace holds the counter tracks only, and a note on stderr says so.\n"
    "                --scope kernel or user keeps one side.\n"
    "  folded        folded stacks 'frame;frame;... weight' for flamegraph.pl and speedscope,\n"
    "                rooted at the lock. Stacks are sampled (--stack-period); each lock's\n"
    "                exact totals are shared among its sampled stacks, contentions in\n"
    "                proportion to their samples and wait to their sampled wait (as\n"
    "                'report --by caller' shares them), so the weights add up to the\n"
    "                report's totals.\n"
    "                --weight wait (ns, the default) or contentions. User-space locks' stacks\n"
    "                are rooted at 'NAME [user KIND]' (the filters choose among both kinds;\n"
    "                -E N keeps the kernel's first N locks alone; --scope kernel or user keeps\n"
    "                one side).\n"
    "  csv           --table locks (the report's per-lock table, every lock), intervals\n"
    "                (one row per interval, times in seconds since the recording started; its\n"
    "                max_wait_ns is empty where the interval's longest wait was not measured)\n"
    "                or user-locks (the user-space locks, as 'report --scope user --format csv').\n"
    "  pprof         a gzipped pprof profile (profile.proto) for 'go tool pprof' and\n"
    "                continuous profilers (Pyroscope, Parca, Grafana): the same stacks as\n"
    "                folded, with Go's mutex-profile sample types contentions/count and\n"
    "                delay/nanoseconds plus the wait's four parts in nanoseconds (spinning,\n"
    "                queued_on_cpu, asleep, runnable: they add up to delay), labels lock,\n"
    "                kind and name_source (and scope=user on user-space locks). Binary:\n"
    "                needs -o (or a pipe).\n"
    "\n"
    "-E N keeps the N locks (by name) first in the -k order, as 'lockscope report -E N -k KEY'\n"
    "lists them; the filters (-Y, -L, -S, ...) apply as in report.\n"
    "\n"
    "-o writes the whole file or nothing: an interrupted export leaves no half file. It never\n"
    "writes over the session it reads, and over another existing file only with --force.";

constexpr const char* kExportExamples =
    "  lockscope export pipe.lockscope --format chrome-trace -o pipe.json\n"
    "  lockscope export pipe.lockscope --format folded -E 10 | flamegraph.pl --countname ns > pipe.svg\n"
    "  lockscope export pipe.lockscope --format pprof -o pipe.pb.gz && go tool pprof -http : pipe.pb.gz";

// "pipe*" matches itself only.
std::string literal_pattern(const std::string& name)
{
    std::string out;
    for (char c : name) {
        if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\')
            out += '\\';
        out += c;
    }
    return out;
}

// The session with only the `entries` locks a report by lock lists first.
Session first_locks(const Session& session, size_t entries, RowSort sort)
{
    ReportOptions ro;
    ro.top = entries;
    ro.sort = sort;
    LockFilter keep;
    for (const ReportRow& row : build_report(session, ro).rows)
        keep.locks.push_back(literal_pattern(row.name));
    if (keep.locks.empty())
        return session;
    return filter_session(session, keep);
}

// The output: a file when -o is given (whole or not at all: atomic_file.h),
// else stdout.
class Output {
public:
    Output(const std::string& path, bool replace)
    {
        if (!path.empty())
            file_.emplace(path, replace);
    }
    std::ostream& stream() { return file_ ? file_->stream() : std::cout; }
    void finish()
    {
        if (file_)
            return file_->commit();
        std::cout.flush();
        if (!std::cout)
            throw Error("cannot write output", "stdout", errno);
    }

private:
    std::optional<AtomicFile> file_;
};

// The session read must never be what is written: not by name, not by a
// link or another path to the same file.
void refuse_writing_over_input(const std::string& input, const std::string& output)
{
    struct stat in {
    }, out{};
    if (output.empty() || ::stat(input.c_str(), &in) != 0 || ::stat(output.c_str(), &out) != 0)
        return;
    if (in.st_dev == out.st_dev && in.st_ino == out.st_ino)
        throw UsageError("-o " + output + " is the session being exported (" + input +
                         "); write the export to another file");
}

// --scope: the kernel's locks, or the user-space locks, alone.
void keep_scope(Session& session, LockScope scope)
{
    if (scope == LockScope::Kernel) {
        session.user_locks.clear();
        session.user_lock_stacks.clear();
    } else if (scope == LockScope::User) {
        session.lock_intervals.clear();
        session.stacks.clear();
    }
}

}  // namespace

int cmd_export(const Args& given)
{
    std::string format, output, weight = "wait", table = "locks", scope = "all";
    bool force = false;
    po::options_description visible("options");
    visible.add_options()("help,h", "show this help")("format", po::value(&format),
                                                      "chrome-trace, folded, csv or pprof")(
        "output,o", po::value(&output), "write here instead of stdout (whole or not at all)")(
        "force,f", po::bool_switch(&force), "overwrite an existing output file")(
        "weight", po::value(&weight)->default_value("wait"), "folded: wait (ns) or contentions")(
        "table", po::value(&table)->default_value("locks"), "csv: locks, intervals or user-locks")(
        "scope", po::value(&scope)->default_value("all"),
        "folded, pprof, chrome-trace: all (the default), kernel (the kernel's locks) or user (the user-space "
        "locks)");
    RowArgs rows;
    add_row_options(visible, rows, 0, "only the N locks first in the -k order (0: all)");
    FilterArgs filter_args;
    add_filter_options(visible, filter_args);
    SessionFileArgs session_file(visible, 1);
    po::variables_map vm;
    reject_perf_fields(given, "chrome-trace, folded, csv or pprof");
    const Args args = rewrite_old_spellings(given, "export", {{"-F", "--format", is_output_format}});
    if (!parse(args, visible, session_file.all, session_file.positional, vm, {kExportUsage, kExportExamples}))
        return kExitOk;
    const std::string& file = session_file.one("lockscope export FILE --format FORMAT");
    if (format.empty())
        throw UsageError("no format given: --format chrome-trace, folded, csv or pprof");
    const size_t entries = entries_from(rows, vm);
    const RowSort sort = sort_from(rows);
    const ExportFormat fmt = parse_export_format(format);
    const FoldedWeight w = parse_folded_weight(weight);
    const CsvTable t = parse_csv_table(table);
    if (!vm["weight"].defaulted() && fmt != ExportFormat::Folded)
        throw UsageError("--weight goes with --format folded");
    if (!vm["table"].defaulted() && fmt != ExportFormat::Csv)
        throw UsageError("--table goes with --format csv");
    const LockScope lock_scope = parse_lock_scope(scope);
    if (!vm["scope"].defaulted() && fmt == ExportFormat::Csv)
        throw UsageError("--scope goes with --format folded, pprof or chrome-trace");

    if (fmt == ExportFormat::Pprof && output.empty() && isatty(STDOUT_FILENO))
        throw UsageError("a pprof profile is binary (gzipped protobuf): give -o FILE.pb.gz, or a pipe");
    require_session_file(file);
    refuse_writing_over_input(file, output);

    // Per-run lock totals are all any format needs; episodes are streamed.
    const LockFilter filter = filter_from(filter_args);
    LoadOptions load;
    // A filter recomputes each interval's counters; the intervals table tells
    // a measured maximum from a bound by the per-interval lock rows.
    load.lock_intervals = !filter.empty() || entries || (fmt == ExportFormat::Csv && t == CsvTable::Intervals);
    Session session = filter_session(load_session(file, load), filter);
    // The locks tables cut their rows as `report -E N` does, shares still of
    // the whole session; the other formats keep the N locks' stacks, episodes
    // or intervals.
    const bool cuts_rows = fmt == ExportFormat::Csv && t != CsvTable::Intervals;
    if (entries && !cuts_rows)
        session = first_locks(session, entries, sort);
    for (const std::string& warning : session.warnings)
        std::fprintf(stderr, "lockscope export: warning: %s\n", warning.c_str());
    keep_scope(session, lock_scope);

    Output out(output, force);
    switch (fmt) {
        case ExportFormat::ChromeTrace: {
            const ChromeTraceSummary sum = export_chrome_trace(file, session, out.stream(), lock_scope);
            out.finish();
            if (!sum.traced)
                std::fprintf(stderr,
                             "lockscope export: %s was recorded without --trace: the trace has the CPU "
                             "idle and contention counters only (record with --trace for per-episode "
                             "slices)\n",
                             file.c_str());
            else
                std::fprintf(stderr,
                             "lockscope export: %llu episodes and %llu user-lock waits (%llu with a wake-up "
                             "arrow), %llu lost while recording, %llu with phases cut short%s\n",
                             (unsigned long long)sum.episodes, (unsigned long long)sum.user_waits,
                             (unsigned long long)sum.flows, (unsigned long long)sum.lost,
                             (unsigned long long)sum.truncated,
                             sum.skipped ? (", " + std::to_string(sum.skipped) + " invalid rows skipped").c_str() : "");
            return kExitOk;
        }
        case ExportFormat::Folded:
            export_folded(session, w, out.stream());
            break;
        case ExportFormat::Csv:
            export_csv(session, t, out.stream(), entries, sort);
            break;
        case ExportFormat::Pprof:
            export_pprof(session, out.stream());
            break;
    }
    out.finish();
    return kExitOk;
}

}  // namespace lockscope::cli
