// lockscope: parses the subcommand and dispatches; each subcommand owns its
// options (commands.h). Errors become one sentence on stderr.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "cli/commands.h"
#include "core/error.h"
#include "lockscope_version.h"

namespace {

struct Command {
    const char* name;
    int (*run)(const lockscope::cli::Args&);
    const char* summary;
    const char* alias = nullptr;  // perf's short name, accepted as the command's
};

constexpr Command kCommands[] = {
    {"record", lockscope::cli::cmd_record, "record kernel lock contention into a session file"},
    {"top", lockscope::cli::cmd_top, "live view of lock contention, refreshed every interval"},
    {"report", lockscope::cli::cmd_report, "print a session as text, JSON or CSV"},
    {"contention", lockscope::cli::cmd_contention,
     "perf lock contention's one-shot form (alias con): record, then print the report", "con"},
    {"diff", lockscope::cli::cmd_diff, "compare two sessions: changes, confidence intervals, verdicts"},
    {"export", lockscope::cli::cmd_export, "write a session as a Perfetto trace, folded stacks, pprof or CSV"},
    {"workload", lockscope::cli::cmd_workload, "run a kernel lock workload (pipe, unlink1, ...)"},
    {"info", lockscope::cli::cmd_info, "what this machine supports and what will work"},
    {"bench", lockscope::cli::cmd_bench, "replay kernel lock algorithms in user space (reference locks)"},
    {"lab", lockscope::cli::cmd_lab, "record other kernels under qemu and diff them (the kernel lab)"},
};

void print_usage(FILE* out)
{
    std::fprintf(out,
                 "lockscope %s - kernel lock contention profiler\n\n"
                 "usage: lockscope <command> [options]\n\ncommands:\n",
                 LOCKSCOPE_VERSION);
    for (const Command& c : kCommands)
        std::fprintf(out, "  %-10s %s\n", c.name, c.summary);
    std::fprintf(out,
                 "\n'lockscope <command> --help' explains a command.\n\n"
                 "exit status: 0 done, 1 failure, 2 usage error; diff --fail-on: 3 when tripped\n\n"
                 "examples:\n"
                 "  lockscope record --workload pipe -t 4 -d 5 -o pipe.lockscope\n"
                 "  lockscope report pipe.lockscope\n"
                 "  lockscope con -a -E 5 -- make -j8\n");
}

}  // namespace

int main(int argc, char** argv)
{
    if (argc < 2) {
        print_usage(stderr);
        return lockscope::kExitUsage;
    }
    const std::string name = argv[1];
    if (name == "-h" || name == "--help" || name == "help") {
        print_usage(stdout);
        return lockscope::kExitOk;
    }
    if (name == "--version" || name == "version") {
        std::printf("lockscope %s\n", LOCKSCOPE_VERSION);
        return lockscope::kExitOk;
    }
    for (const Command& c : kCommands) {
        if (name != c.name && !(c.alias && name == c.alias))
            continue;
        lockscope::cli::Args args(argv + 2, argv + argc);
        try {
            return c.run(args);
        } catch (const lockscope::UsageError& e) {
            std::fprintf(stderr, "lockscope %s: %s\n(see 'lockscope %s --help')\n", c.name, e.what(), c.name);
            return lockscope::kExitUsage;
        } catch (const lockscope::Error& e) {
            std::fprintf(stderr, "lockscope %s: %s\n", c.name, e.what());
            return lockscope::kExitFailure;
        } catch (const std::exception& e) {
            std::fprintf(stderr, "lockscope %s: %s\n", c.name, e.what());
            return lockscope::kExitFailure;
        }
    }
    std::fprintf(stderr, "lockscope: unknown command '%s'\n\n", name.c_str());
    print_usage(stderr);
    return lockscope::kExitUsage;
}
