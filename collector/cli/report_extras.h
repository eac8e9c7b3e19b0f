// What report's view prints beside the report itself: perf's --lock-owner
// rows (the sampled lock holders), -v's waiter stacks, and -x's separator.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "core/analysis/report.h"
#include "core/model.h"

namespace lockscope::cli {

struct HolderRowOptions {
    bool by_task = false;        // -o -t: the holders' tasks, not their stacks
    size_t top = 20;             // SIZE_MAX: all
    std::optional<int64_t> run;  // one run only
    bool rows_only = false;      // -q
    bool csv = false;
    std::string separator = ",";  // for csv
};

// perf's --lock-owner: one row per holder waiters queued behind, from the
// session's sampled holder stacks (or holder tasks), most wait first.
std::string holder_rows(const Session& session, const HolderRowOptions& options);

// perf's -v: each lock row's sampled waiter stacks, innermost first (rows
// grouped by lock; other groupings have none).
std::string waiter_stacks_text(const Session& session, const Report& report, std::optional<int64_t> run,
                               bool rows_only);

// A CSV (RFC 4180, comma-separated) with its fields joined by `separator`
// instead, quoted where they hold the separator, a quote or a line break.
std::string with_separator(const std::string& csv, const std::string& separator);

}  // namespace lockscope::cli
