// `lockscope top`: the latest interval rolled up like a report (the same
// build_report), sorted and rendered as lines. By lock (or instance) the
// recorded processes' user-space locks are rows too (scope user): their
// waits in the interval, from the run's rows the recorder hands over. No terminal handling here
// (top_terminal.h), so the view is tested without root or a terminal.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/analysis/report.h"
#include "core/model.h"

namespace lockscope::cli {

// The rows' order: the report's (-k/--sort, report.h).
using TopSort = RowSort;

// perf's keys (wait_total, contended, wait_max, avg_wait), spinfail and the
// older wait and contentions; anything else is a UsageError.
TopSort parse_top_sort(const std::string& text);
const char* top_sort_name(TopSort sort);
// Key s: wait, contentions, spin failures, round again.
TopSort next_sort(TopSort sort);
GroupBy next_group(GroupBy by);

struct TopSettings {
    GroupBy by = GroupBy::Lock;
    TopSort sort = TopSort::Wait;
    size_t lines = 20;  // rows shown at most
};

struct TopFrame {
    IntervalTotals totals;   // the interval the rows cover
    double run_seconds = 0;  // since the run started
    std::string run_label;
    std::vector<ReportRow> rows;  // sorted, at most TopSettings::lines; kernel and user locks
    size_t rows_total = 0;        // before the cut
    bool user_locks = false;      // the recorder records user locks: the header has their totals
    uint64_t user_waits = 0;      // the user locks' futex waits in the interval, and their wait
    uint64_t user_wait_ns = 0;
};

class TopModel {
public:
    // Takes the interval the recorder just drained. `locks` is every lock
    // seen so far (locks[id - 1] has that id).
    void update(const IntervalBatch& batch, const std::vector<LockInfo>& locks, const std::string& run_label);
    bool has_interval() const { return !latest_.intervals.empty(); }
    TopFrame frame(const TopSettings& settings) const;

private:
    Session latest_;  // the latest interval as a one-interval session
    std::string run_label_;
    uint64_t run_start_ns_ = 0;
    int64_t run_ = -1;
    // Tasks come cumulative over the run; the view shows the interval's share.
    std::map<uint32_t, LockCounters> task_before_;
    // So do a run's user-lock rows: by (process, name, kind, module).
    std::map<std::tuple<uint32_t, std::string, std::string, std::string>, UserLockRow> user_before_;
    void update_user_locks(const IntervalBatch& batch);
};

// Header, column titles and rows, each at most `width` columns. `keys`
// adds the key help line of the interactive view.
std::vector<std::string> render_top(const TopFrame& frame, const TopSettings& settings, const std::string& scope,
                                    size_t width, bool keys);

}  // namespace lockscope::cli
