// Internal to the report's renderings: the holder split (DESIGN.md
// "Metrics") as text lines and JSON members.
#pragma once

#include <nlohmann/json.hpp>

#include <sstream>
#include <string>

#include "core/analysis/report.h"

namespace lockscope::report_holders {

// "running 1.23 s 61%, runnable 600 ms 30%, asleep 20.1 ms 1%, unknown 8%":
// a wait's holder split, whole percentages that add up to 100.
std::string split_text(const LockCounters& c);

// The totals' line under the wait's four parts (`timed`: its times are known).
void totals_line(std::ostringstream& out, const Report& rep, bool timed);

// By lock or instance: the rows' holder splits and the tasks behind them
// (names cut to fit, but with `full_names`). By task: the waiting each
// task caused as a holder.
void text_block(std::ostringstream& out, const Report& rep, bool full_names);

// One row's lines of the text block: its split under `name`, the tasks
// that held it and what preempted them.
void row_lines(std::ostringstream& out, const std::string& name, const ReportRow& r);

// A lock row's holder tasks and preempters; the report's holders by task.
nlohmann::ordered_json row_json(const ReportRow& r);
nlohmann::ordered_json by_task_json(const Report& rep);

}  // namespace lockscope::report_holders
