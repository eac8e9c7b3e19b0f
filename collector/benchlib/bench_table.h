// The summary `lockscope bench` prints: per lock and thread count, the
// median over repeats with its min–max spread, and the ratio to the first
// lock computed per repeat (runs of one repeat are neighbours in time, so
// the ratio cancels the machine's slow drifts that the raw numbers carry).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reflock/harness/harness.h"

namespace lockscope::bench_table {

struct Spread {
    double median = 0, min = 0, max = 0;
    std::vector<double> values;  // per repeat, in repeat order
};
Spread spread_of(std::vector<double> values);

struct Row {
    std::string lock;
    std::string baseline;  // the lock `ratio` is against
    unsigned threads = 0;
    bool has_counters = false;  // reflock locks count; pthread/std locks do not
    Spread ops_per_s;
    Spread ratio;              // ops/s over the baseline's ops/s of the same repeat
    Spread spin_failure_rate;  // failures / attempts
    Spread sleeps_per_kop;     // futex sleeps per 1000 operations
    Spread handoffs_per_kop;   // HANDOFF requests per 1000 operations
    Spread idle;               // fraction of CPU capacity left unused
};

// results[variant][repeat]; variants come in groups of `locks_per_group`
// (one group per thread count), the first of each group is the baseline.
std::vector<Row> summarize(const std::vector<std::vector<reflock::harness::RunResult>>& results,
                           std::size_t locks_per_group);

// `context` is one line of parameters printed above (text) or below
// (markdown) the table and stored as "params" (json).
std::string format_text(const std::vector<Row>& rows, const std::string& context);
std::string format_markdown(const std::vector<Row>& rows, const std::string& context);
// {"params": context, "rows": [...]}, members in that order; callers may add more.
nlohmann::ordered_json to_json(const std::vector<Row>& rows, const std::string& context);

}  // namespace lockscope::bench_table
