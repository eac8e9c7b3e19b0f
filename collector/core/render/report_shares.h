// What the report's text and JSON renderings both compute from a Report.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/analysis/report.h"

namespace lockscope::report_shares {

inline double ratio(uint64_t part, uint64_t whole)
{
    return whole ? double(part) / double(whole) : 0.0;
}

// record --sample N's N (core/analysis/estimate.h); 1 with full timing (and for
// malformed timing keys: the stored totals are read as they are).
uint32_t report_period(const Report& rep);

// How much of the wait and of the distinct locks kernel data named; locks in
// the kernel image's own data that nothing can name are counted apart.
struct NamingShares {
    uint64_t data_wait = 0, other_wait = 0, image_wait = 0;
    size_t data_locks = 0, other_locks = 0, image_locks = 0;
    double wait_share() const { return ratio(data_wait, data_wait + other_wait); }
    double lock_share() const
    {
        return data_locks + other_locks ? double(data_locks) / double(data_locks + other_locks) : 0.0;
    }
};

NamingShares naming_shares(const ReportTotals& t);

// Whether a counter column (a field or a value computed from them:
// counter_columns.h) of `c` is known, so JSON prints it and CSV fills its
// cell: not where sampled timing timed none of the episodes (a time), not
// where the session cannot split the wait (the parts that need the off-CPU
// time of spin phases), and not where `row` does not keep it
// (ReportRow::keeps; `row` null for totals, which keep everything), nor
// the holder split's parts where the session keeps none (`holder` false).
bool counter_known(const LockCounters& c, uint32_t period, bool split, const ReportRow* row, std::string_view field,
                   bool holder = true);

}  // namespace lockscope::report_shares
