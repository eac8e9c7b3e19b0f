#include "cli/options.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "core/error.h"
#include "probe/cgroups.h"
#include "probe/probe.h"
#include "record/recorder.h"

namespace lockscope::cli {
namespace {

constexpr const char* kDefaultExitStatus =
    "exit status: 0 done, 1 failure (an unreadable session, missing privileges, ...),\n"
    "             2 usage error (a bad option or value, a missing file)";

// "0-3,8" or "1,2,4": each item a number or an ascending range. `what`
// names the option in errors.
std::vector<unsigned> parse_number_list(const std::string& spec, const char* what, unsigned lowest, unsigned highest)
{
    auto number = [&](const std::string& s) {
        size_t used = 0;
        long long v = -1;
        try {
            v = std::stoll(s, &used);
        } catch (const std::exception&) {
        }
        if (s.empty() || used != s.size())
            throw UsageError(std::string(what) + ": '" + s + "' is not a number (use N, 1,2,4 or 1-8)");
        if (v < lowest || v > highest)
            throw UsageError(std::string(what) + ": " + s + " is out of range (" + std::to_string(lowest) + " to " +
                             std::to_string(highest) + ")");
        return unsigned(v);
    };
    std::vector<unsigned> out;
    size_t start = 0;
    while (start <= spec.size()) {
        const size_t comma = std::min(spec.find(',', start), spec.size());
        const std::string item = spec.substr(start, comma - start);
        const size_t dash = item.find('-', 1);  // from 1: "-3" is a negative number, not a range
        if (dash == std::string::npos) {
            out.push_back(number(item));
        } else {
            const unsigned lo = number(item.substr(0, dash)), hi = number(item.substr(dash + 1));
            if (lo > hi)
                throw UsageError(std::string(what) + ": range " + item + " runs backwards");
            for (unsigned t = lo; t <= hi; t++)
                out.push_back(t);
        }
        start = comma + 1;
    }
    return out;
}

}  // namespace

bool parse(const Args& args, const po::options_description& visible, const po::options_description& all,
           const po::positional_options_description& positional, po::variables_map& vm, const HelpText& help,
           bool allow_trailing, std::vector<std::string>* trailing)
{
    Args own = args;
    if (allow_trailing) {
        // Everything after "--" is the traced command, untouched.
        for (size_t i = 0; i < args.size(); i++) {
            if (args[i] == "--") {
                own.assign(args.begin(), args.begin() + long(i));
                if (trailing)
                    trailing->assign(args.begin() + long(i) + 1, args.end());
                break;
            }
        }
    }
    try {
        po::store(po::command_line_parser(own).options(all).positional(positional).run(), vm);
        if (vm.count("help")) {
            std::cout << help.usage << "\n\n"
                      << visible << "\n"
                      << (help.exit_status ? help.exit_status : kDefaultExitStatus) << "\n\nexamples:\n"
                      << help.examples << "\n";
            return false;
        }
        po::notify(vm);
    } catch (const po::error& e) {
        throw UsageError(e.what());
    }
    return true;
}

bool parse(const Args& args, const po::options_description& visible, const po::options_description& all,
           const po::positional_options_description& positional, po::variables_map& vm, const char* usage,
           const char* examples)
{
    const std::string text = usage;
    const size_t exit = text.find("\n\nexit status:");
    const std::string description = text.substr(0, exit),
                      exit_status = exit == std::string::npos ? "" : text.substr(exit + 2);
    return parse(args, visible, all, positional, vm,
                 {description.c_str(), examples, exit_status.empty() ? nullptr : exit_status.c_str()});
}

bool is_output_format(const std::string& value)
{
    for (const char* f : {"text", "json", "csv", "markdown", "chrome-trace", "folded", "pprof"})
        if (value == f)
            return true;
    return false;
}

void reject_perf_fields(const Args& args, const char* formats)
{
    for (size_t i = 0; i < args.size() && args[i] != "--"; i++) {
        const std::string& a = args[i];
        const bool field = a == "--field" || a.rfind("--field=", 0) == 0 ||
                           (a == "-F" && !(i + 1 < args.size() && is_output_format(args[i + 1]))) ||
                           (a.size() > 2 && a.rfind("-F", 0) == 0 && !is_output_format(a.substr(2)));
        if (field)
            throw UsageError(std::string("perf's -F/--field (a choice of columns) is not offered: the columns are "
                                         "fixed; --format picks ") +
                             formats);
    }
}

bool is_group_name(const std::string& value)
{
    for (const char* g : {"lock", "caller", "task", "kind", "instance", "cgroup"})
        if (value == g)
            return true;
    return false;
}

namespace {

struct NotOffered {
    const char* short_spelling;  // "-J", or nullptr
    const char* long_spelling;   // "--inject-delay"
    const char* why;
};

constexpr NotOffered kNotOffered[] = {
    {nullptr, "--max-stack",
     "lockscope keeps up to 16 frames of every sampled stack, a depth fixed in its BPF program"},
    {nullptr, "--stack-skip",
     "lockscope finds a wait's caller by skipping the locking functions by name, not a count of frames"},
    {"-J", "--inject-delay", "lockscope only observes locks: it never delays them"},
    {"-D", "--dump-raw-trace",
     "lockscope keeps no raw events; 'record --trace' keeps every wait, which 'lockscope export --format "
     "chrome-trace' shows"},
    {nullptr, "--vmlinux",
     "lockscope names kernel addresses when it records, from that machine's kallsyms: a session needs no "
     "symbol file later"},
    {nullptr, "--kallsyms",
     "lockscope names kernel addresses when it records, from that machine's kallsyms: a session needs no "
     "symbol file later"},
};

}  // namespace

void reject_not_offered(const Args& args, const char* command)
{
    for (size_t i = 0; i < args.size() && args[i] != "--"; i++) {
        const std::string& a = args[i];
        for (const NotOffered& n : kNotOffered) {
            const std::string long_spelling = n.long_spelling;
            const bool is_long = a == long_spelling || a.rfind(long_spelling + "=", 0) == 0;
            const bool is_short = n.short_spelling && a.rfind(n.short_spelling, 0) == 0;
            if (is_long || is_short)
                throw UsageError(std::string("perf's ") +
                                 (n.short_spelling ? n.short_spelling + std::string("/") : "") + n.long_spelling +
                                 " is not offered by 'lockscope " + command + "': " + n.why);
        }
    }
}

void add_map_entries_option(po::options_description& options, uint32_t& entries)
{
    options.add_options()("map-nr-entries,M", po::value(&entries),
                          "perf's spelling: the kernel's lock table and stack table hold N entries each (default "
                          "16384; more locks or stacks are counted as lost)");
}

void apply_map_entries(const po::variables_map& vm, uint32_t entries, probe::ProbeOptions& probe)
{
    if (!vm.count("map-nr-entries"))
        return;
    constexpr uint32_t kLowest = 64, kHighest = 1u << 20;
    if (entries < kLowest || entries > kHighest)
        throw UsageError("-M/--map-nr-entries must be between " + std::to_string(kLowest) + " and " +
                         std::to_string(kHighest) + ", not " + std::to_string(entries));
    if (vm.count("max-locks") && !vm["max-locks"].defaulted() && probe.max_locks != entries)
        throw UsageError("give the lock table's size once: -M/--map-nr-entries or --max-locks");
    probe.max_locks = entries;
    probe.max_stacks = entries;
}

Args rewrite_old_spellings(const Args& args, const char* command, std::initializer_list<OldSpelling> old)
{
    Args out;
    for (size_t i = 0; i < args.size(); i++) {
        if (args[i] == "--") {  // the traced command's own arguments
            out.insert(out.end(), args.begin() + long(i), args.end());
            break;
        }
        const OldSpelling* match = nullptr;
        std::string value;
        for (const OldSpelling& o : old) {
            const std::string spelling = o.spelling;
            if (args[i] == spelling && i + 1 < args.size() && o.accepts(args[i + 1]))
                value = args[i + 1];
            else if (args[i].size() > spelling.size() && args[i].rfind(spelling, 0) == 0 &&
                     o.accepts(args[i].substr(spelling.size())))
                value = args[i].substr(spelling.size());
            else
                continue;
            match = &o;
            break;
        }
        if (!match) {
            out.push_back(args[i]);
            continue;
        }
        if (args[i] == match->spelling)
            i++;
        std::fprintf(stderr, "lockscope %s: note: %s %s is read as %s %s (in perf, %s is another option: write %s)\n",
                     command, match->spelling, value.c_str(), match->replacement, value.c_str(), match->spelling,
                     match->replacement);
        out.push_back(match->replacement);
        out.push_back(value);
    }
    return out;
}

void add_filter_options(po::options_description& options, FilterArgs& args)
{
    options.add_options()(
        "kind", po::value(&args.kinds)->composing(),
        "only these lock kinds, comma-separated or repeated: mutex, rwsem, spinlock, rwlock, rtmutex, "
        "rt-rwlock, percpu-rwsem, semaphore, user-mutex, user-rwsem (the reference locks of bench), the "
        "user-space locks' pthread_mutex, pthread_rwlock, futex, or perf's spellings (rwsem:R, rwsem:W, "
        "rwlock:R, rt-mutex, rwlock-rt, pcpu-sem; mutex:spin: a mutex's optimistic spin phases only)")(
        "type-filter,Y", po::value(&args.type_filters)->composing(), "perf's spelling of --kind")(
        "lock", po::value(&args.locks)->composing(),
        "only locks whose name matches (a shell pattern: 'inode.*', 'pipe_inode_info.mutex'); repeatable")(
        "lock-filter,L", po::value(&args.lock_lists)->composing(),
        "perf's spelling of --lock: names or patterns, comma-separated (not addresses: sessions keep none)")(
        "caller", po::value(&args.callers)->composing(),
        "only locks whose caller matches (a shell pattern: 'anon_pipe_*'); repeatable")(
        "callstack-filter,S", po::value(&args.callstacks)->composing(),
        "only locks whose caller, or a frame of one of their sampled waiter stacks, contains this text "
        "(as perf's -S, a substring: 'rq' matches raw_spin_rq_lock and irq_enter_rcu); repeatable");
}

LockFilter filter_from(const FilterArgs& args)
{
    LockFilter f;
    for (const std::string& k : args.kinds)
        add_kind_filter(f, k, "--kind");
    for (const std::string& k : args.type_filters)
        add_kind_filter(f, k, "-Y/--type-filter");
    for (const std::string& l : args.locks)
        add_pattern_filter(f.locks, l, "--lock");
    for (const std::string& l : args.lock_lists)
        add_lock_list_filter(f, l);
    for (const std::string& c : args.callers)
        add_pattern_filter(f.callers, c, "--caller");
    for (const std::string& c : args.callstacks)
        add_callstack_filter(f, c);
    return f;
}

LockFilter recording_filter(const FilterArgs& args)
{
    LockFilter f = filter_from(args);
    if (!f.callstacks.empty())
        throw UsageError(
            "-S/--callstack-filter reads a session's sampled stacks: record, then "
            "'lockscope report FILE -S TEXT'");
    for (const auto& [kind, mode] : f.kinds)
        if (mode == kSpinPhases)
            throw UsageError(
                "mutex:spin is a view of a recorded session: record with -Y mutex, then "
                "'lockscope report FILE -Y mutex:spin'");
    return f;
}

void add_row_options(po::options_description& options, RowArgs& args, long long default_entries,
                     const char* entries_help, const char* old_spelling)
{
    args.entries = default_entries;
    options.add_options()("entries,E", po::value(&args.entries)->default_value(default_entries), entries_help);
    if (old_spelling) {
        args.old_name = old_spelling;
        options.add_options()(old_spelling, po::value(&args.old_entries), "the same as -E");
    }
    options.add_options()("sort,k", po::value(&args.sort),
                          "order rows by perf's keys: wait_total (the default), contended, wait_max, avg_wait; "
                          "or spinfail (spin failures)")("key", po::value(&args.key), "perf's long spelling of -k");
}

size_t entries_from(const RowArgs& args, const po::variables_map& vm)
{
    std::string given = "-E/--entries";
    long long entries = args.entries;
    if (args.old_name) {
        const std::string old = std::string(args.old_name).substr(0, std::string(args.old_name).find(','));
        if (vm.count(old)) {
            if (!vm["entries"].defaulted())
                throw UsageError("give the row count once: -E/--entries or --" + old);
            given = "--" + old;
            entries = args.old_entries;
        }
    }
    if (entries < 0)
        throw UsageError(given + " takes a number of rows, 0 or more (0: all), not " + std::to_string(entries));
    return size_t(entries);
}

RowSort sort_from(const RowArgs& args)
{
    if (!args.key.empty() && args.sort != "wait_total" && args.key != args.sort)
        throw UsageError("give the sort key once: -k/--sort or --key");
    return parse_row_sort(args.key.empty() ? args.sort : args.key);
}

void add_target_options(po::options_description& options, TargetArgs& args, TargetParts parts)
{
    if (parts == TargetParts::ThreadsOnly) {
        options.add_options()("threads,t", po::value(&args.threads)->default_value("2"),
                              "threads: N, a list 1,2,4 or a range 1-8");
        return;
    }
    options.add_options()("all-cpus,a", po::bool_switch(&args.all_cpus),
                          "system-wide (the default), also while a -- COMMAND runs")(
        "pid,p", po::value(&args.pid),
        "only this process and the processes it creates from now on (as -- COMMAND records the command's "
        "whole process tree)")("tid", po::value(&args.tid), "only this thread")(
        "cpu,C", po::value(&args.cpus)->composing(),
        "only waits that begin on these CPUs: 0-3,8 (a wait's later phases count wherever its task runs)")(
        "no-children", "with -p or a command: that one process only, not the processes it creates")(
        "cgroup", po::value(&args.cgroups)->composing(),
        "only tasks in this cgroup v2 or below it (a container, a systemd unit): a directory under the cgroup2 "
        "mount, absolute or relative to it; repeatable, at most 8")(
        "cgroup-filter,G", po::value(&args.cgroup_filters)->composing(),
        "perf's -G: only tasks in these cgroups v2 or below them, named from the cgroup root as perf and "
        "report --by cgroup name them ('/' the root, '/system.slice/foo.service'); comma-separated");
    args.workload_options = parts != TargetParts::NoWorkload;
    if (!args.workload_options)
        return;
    options.add_options()("workload,w", po::value(&args.workload),
                          "run this built-in workload meanwhile (system-wide)")(
        parts == TargetParts::All ? "threads,t" : "threads", po::value(&args.threads)->default_value("2"),
        "workload threads");
}

void apply_target(const TargetArgs& args, const po::variables_map& vm, record::RecordOptions& o)
{
    o.pid = args.pid;
    o.all_cpus = args.all_cpus;
    o.probe.tid = args.tid;
    o.probe.children = !vm.count("no-children");
    for (const std::string& path : args.cgroups)
        o.probe.cgroups.push_back(probe::resolve_cgroup(path));
    for (const std::string& list : args.cgroup_filters) {  // perf's: comma-separated, from the cgroup root
        size_t start = 0;
        while (start <= list.size()) {
            const size_t comma = std::min(list.find(',', start), list.size());
            std::string name = list.substr(start, comma - start);
            name.erase(0, name.find_first_not_of('/'));
            o.probe.cgroups.push_back(probe::resolve_cgroup(name.empty() ? "." : name));
            start = comma + 1;
        }
    }
    for (const std::string& list : args.cpus) {
        const std::vector<unsigned> cpus = parse_cpu_list(list);
        o.probe.cpus.insert(o.probe.cpus.end(), cpus.begin(), cpus.end());
    }
    if (args.all_cpus && (args.pid || args.tid))
        throw UsageError("-a records every process: it does not go with -p or --tid");
    if (args.tid && access(("/proc/" + std::to_string(args.tid)).c_str(), F_OK) != 0)
        throw Error("no thread with TID " + std::to_string(args.tid), "");
    const bool threads_given = args.workload_options && vm.count("threads") && !vm["threads"].defaulted();
    if (args.workload.empty()) {
        if (threads_given)
            throw UsageError("-t/--threads goes with --workload");
        return;
    }
    const std::vector<unsigned> threads = parse_thread_counts(args.threads);
    if (threads.size() != 1)
        throw UsageError("-t/--threads takes one count here, not '" + args.threads + "' ('lockscope bench' sweeps)");
    o.with_workload = true;
    o.workload.name = args.workload;
    o.workload.threads = threads[0];
    o.workload.duration_s = vm.count("duration") ? o.duration_s : 5.0;
}

std::vector<unsigned> parse_thread_counts(const std::string& spec)
{
    return parse_number_list(spec, "--threads", 1, 1024);
}

std::vector<unsigned> parse_cpu_list(const std::string& spec)
{
    const long online = sysconf(_SC_NPROCESSORS_CONF);
    return parse_number_list(spec, "-C/--cpu", 0, unsigned(std::clamp(online, 1L, 1024L) - 1));
}

SessionFileArgs::SessionFileArgs(const po::options_description& visible, int count)
{
    all.add(visible).add_options()("file", po::value(&files)->composing(), "session file");
    positional.add("file", count);
}

const std::string& SessionFileArgs::one(const char* usage) const
{
    if (files.empty())
        throw UsageError(std::string("no session file given: ") + usage);
    return files.front();
}

void require_session_file(const std::string& path)
{
    std::error_code ec;
    if (path != "-" && !std::filesystem::exists(path, ec))
        throw UsageError("no such session file '" + path + "' (a file 'lockscope record -o FILE' wrote)");
}

}  // namespace lockscope::cli
