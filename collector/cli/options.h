// Boost.Program_options glue shared by the subcommands.
#pragma once

#include <boost/program_options.hpp>
#include <string>

#include "cli/commands.h"
#include "core/analysis/lock_filter.h"

namespace lockscope::cli {

namespace po = boost::program_options;

// Parses args; unknown options, bad values and missing arguments become
// lockscope::UsageError. Returns false (after printing `usage` and the
// options) when --help was given.
bool parse(const Args& args, const po::options_description& visible, const po::options_description& all,
           const po::positional_options_description& positional, po::variables_map& vm, const char* usage,
           bool allow_trailing = false, std::vector<std::string>* trailing = nullptr);

// --kind, --lock and --caller, shared by record, top, report and export.
struct FilterArgs {
    std::vector<std::string> kinds, locks, callers;
};
void add_filter_options(po::options_description& options, FilterArgs& args);
// Throws UsageError (exit 2) for an unknown kind or a malformed pattern.
LockFilter filter_from(const FilterArgs& args);

}  // namespace lockscope::cli
