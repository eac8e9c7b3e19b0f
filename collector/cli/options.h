// Boost.Program_options glue shared by the subcommands: parsing with the
// help every command prints, the option groups several commands share (the
// target, the lock filters, the rows shown) and the session-file positional.
#pragma once

#include <boost/program_options.hpp>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "core/analysis/lock_filter.h"
#include "core/analysis/report.h"

namespace lockscope::record {
struct RecordOptions;
}
namespace lockscope::probe {
struct ProbeOptions;
}

namespace lockscope::cli {

namespace po = boost::program_options;

// What --help prints around the options: the usage line and description
// first, then the options, then how the command exits and its examples.
struct HelpText {
    const char* usage;
    const char* examples;               // two or three lines "  lockscope ...", each a whole command
    const char* exit_status = nullptr;  // nullptr: 0 ok, 1 failure, 2 usage
};

// Parses args; unknown options, bad values and missing arguments become
// lockscope::UsageError. Returns false (after printing the help) when --help
// was given.
bool parse(const Args& args, const po::options_description& visible, const po::options_description& all,
           const po::positional_options_description& positional, po::variables_map& vm, const HelpText& help,
           bool allow_trailing = false, std::vector<std::string>* trailing = nullptr);

// The same, for a usage text that ends with its own "exit status:" paragraph.
bool parse(const Args& args, const po::options_description& visible, const po::options_description& all,
           const po::positional_options_description& positional, po::variables_map& vm, const char* usage,
           const char* examples);

// An old spelling that still works: `spelling VALUE` (or `spellingVALUE`)
// becomes `--replacement VALUE` when `accepts(VALUE)`, with a one-line note
// on stderr, so that scripts keep working while the short option takes
// perf lock contention's meaning.
struct OldSpelling {
    const char* spelling;     // "-b"
    const char* replacement;  // "--by"
    bool (*accepts)(const std::string& value);
};
Args rewrite_old_spellings(const Args& args, const char* command, std::initializer_list<OldSpelling> old);
bool is_output_format(const std::string& value);
// perf's -F/--field (a choice of columns) is a UsageError that says so;
// -F FORMAT, the old spelling of --format, passes.
void reject_perf_fields(const Args& args, const char* formats);  // text, json, csv, chrome-trace, folded, pprof, ...
bool is_group_name(const std::string& value);                    // lock, caller, task, kind, instance, cgroup
// perf lock contention's options lockscope does not offer (--max-stack,
// --stack-skip, -J/--inject-delay, -D/--dump-raw-trace, --vmlinux,
// --kallsyms): a UsageError that says why, not "unrecognised option".
void reject_not_offered(const Args& args, const char* command);

// perf's -M/--map-nr-entries N, on record, top and contention: the kernel's
// lock and stack tables hold N entries each.
void add_map_entries_option(po::options_description& options, uint32_t& entries);
// Applies -M when given; a count out of range, or one that differs from a
// --max-locks also given, is a UsageError.
void apply_map_entries(const po::variables_map& vm, uint32_t entries, probe::ProbeOptions& probe);

// --kind/-Y, --lock, -L, --caller and -S, shared by record, top, report and
// export (lock_filter.h has their meaning).
struct FilterArgs {
    std::vector<std::string> kinds, type_filters, locks, callers, lock_lists, callstacks;
};
void add_filter_options(po::options_description& options, FilterArgs& args);
// Throws UsageError (exit 2) for an unknown kind or a malformed pattern.
LockFilter filter_from(const FilterArgs& args);
// For record and top, which filter as locks are named: -S and mutex:spin,
// views of what was recorded, are UsageErrors that point to report.
LockFilter recording_filter(const FilterArgs& args);

// The rows a report shows, in perf's words: -E/--entries N and -k/--sort
// KEY (perf's --key too), shared by report, top and export. A command's
// older name for the row limit ("top,n", "lines,n") stays an alias.
struct RowArgs {
    long long entries = 20;
    long long old_entries = 0;
    std::string sort = "wait_total", key;
    const char* old_name = nullptr;  // "top", "lines"
};
void add_row_options(po::options_description& options, RowArgs& args, long long default_entries,
                     const char* entries_help, const char* old_spelling = nullptr);
// The row count (0: all); a negative count is a UsageError naming the
// option the user gave.
size_t entries_from(const RowArgs& args, const po::variables_map& vm);
RowSort sort_from(const RowArgs& args);

// Whom record, top and bench follow. record and top: -a, -p, --tid, -C,
// --cgroup/-G, --workload with -t/--threads, -- COMMAND and --no-children;
// bench: -t/--threads only (its own reference locks are the workload).
struct TargetArgs {
    bool all_cpus = false;
    uint32_t pid = 0;
    uint32_t tid = 0;
    std::vector<std::string> cpus;  // "0-3,8"
    std::vector<std::string> cgroups, cgroup_filters;
    std::string workload;
    std::string threads = "2";     // a count; bench: also a list or range to sweep
    bool workload_options = true;  // --workload and --threads are declared (not TargetParts::NoWorkload)
};
// top keeps -t for perf's per-thread rows: its workload threads are --threads
// only; contention has no workload (-t and --threads are perf's per-thread rows).
enum class TargetParts { ThreadsOnly, All, AllButShortThreads, NoWorkload };
void add_target_options(po::options_description& options, TargetArgs& args, TargetParts parts);
// Binds the target into `o` (with its workload's duration from -d);
// inconsistent targets are UsageErrors.
void apply_target(const TargetArgs& args, const po::variables_map& vm, record::RecordOptions& o);

// "4", "1,2,4", "1-8", or a mix, for -t/--threads; every count 1 to 1024.
std::vector<unsigned> parse_thread_counts(const std::string& spec);
// "0-3,8" for -C/--cpu.
std::vector<unsigned> parse_cpu_list(const std::string& spec);

// The session file(s) a command reads, given as positionals: declared
// hidden, and when missing, a UsageError that says so in the user's terms.
struct SessionFileArgs {
    std::vector<std::string> files;
    po::options_description all;  // `visible` and the hidden file positional, for parse()
    po::positional_options_description positional;

    // The command's visible options, all declared by now, and `count` files.
    SessionFileArgs(const po::options_description& visible, int count);
    SessionFileArgs(const SessionFileArgs&) = delete;  // the parser writes into `files`
    SessionFileArgs& operator=(const SessionFileArgs&) = delete;
    // The first file; `usage` is the short form shown when none was given.
    const std::string& one(const char* usage) const;
};

// A session file named on the command line: a UsageError (exit 2) when it
// does not exist; "-" (standard input) passes.
void require_session_file(const std::string& path);

}  // namespace lockscope::cli
