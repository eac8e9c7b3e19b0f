// The summary `lockscope bench` prints: per lock and thread count, the
// median over repeats with its min–max spread, and the ratio to the first
// lock computed per repeat (runs of one repeat are neighbours in time, so
// the ratio cancels the machine's slow drifts that the raw numbers carry).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "reflock/bench/bench.h"

namespace lockscope::bench_table {

struct Spread {
    double median = 0, min = 0, max = 0;
    std::vector<double> values;  // per repeat, in repeat order
};
Spread spread_of(std::vector<double> values);

struct Row {
    std::string lock;
    std::string baseline;         // the lock `ratio` is against
    unsigned threads = 0;
    bool has_counters = false;    // reflock locks count; pthread/std locks do not
    Spread ops_per_s;
    Spread ratio;                 // ops/s over the baseline's ops/s of the same repeat
    Spread spin_failure_rate;     // failures / attempts
    Spread sleeps_per_kop;        // futex sleeps per 1000 operations
    Spread idle;                  // fraction of CPU capacity left unused
};

// results[variant][repeat]; variants come in groups of `locks_per_group`
// (one group per thread count), the first of each group is the baseline.
std::vector<Row> summarize(const std::vector<std::vector<reflock::bench::RunResult>>& results,
                           std::size_t locks_per_group);

// `context` is one line of parameters printed above (text) or below
// (markdown) the table and stored as "params" (json).
std::string format_text(const std::vector<Row>& rows, const std::string& context);
std::string format_markdown(const std::vector<Row>& rows, const std::string& context);
// extra_fields: more top-level members, each starting with a comma.
std::string format_json(const std::vector<Row>& rows, const std::string& context,
                        const std::string& extra_fields = {});

}  // namespace lockscope::bench_table
