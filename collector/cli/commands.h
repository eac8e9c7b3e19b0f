// The subcommands of `lockscope`. Each parses its own arguments (those after
// the subcommand name) with Boost.Program_options, binds them into an
// options struct and returns an exit code (core/error.h). Usage errors are
// thrown as lockscope::UsageError, failures as lockscope::Error; main()
// turns both into one sentence on stderr.
#pragma once

#include <string>
#include <vector>

namespace lockscope::cli {

using Args = std::vector<std::string>;

int cmd_record(const Args& args);
int cmd_top(const Args& args);
int cmd_report(const Args& args);
int cmd_contention(const Args& args);
int cmd_diff(const Args& args);
int cmd_export(const Args& args);
int cmd_workload(const Args& args);
int cmd_info(const Args& args);
int cmd_bench(const Args& args);
int cmd_lab(const Args& args);

}  // namespace lockscope::cli
