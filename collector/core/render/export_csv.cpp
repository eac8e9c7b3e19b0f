// `lockscope export --format csv`: the per-lock, per-interval and user-lock tables.
#include "core/render/export.h"

#include "core/analysis/estimate.h"
#include "core/analysis/holder_parts.h"
#include "core/analysis/report.h"
#include "core/analysis/report_max.h"
#include "core/analysis/report_parts.h"
#include "core/format.h"
#include "core/render/counter_columns.h"
#include "core/render/report_shares.h"

namespace lockscope {
namespace {

// One row per interval: its counters as the JSON report's intervals tell
// them (a cell the JSON would have null is empty), then the wait's parts
// and the maximum's upper bound, added after the first columns, then the
// holder split's parts (counter_columns.h's csv_appended()). The stored
// max_wait_ns of an interval is a measurement only where the kernel's
// running maximum rose in it (report_max.h): elsewhere the cell is empty
// and max_wait_bound_ns says what the session knows.
void intervals_csv(const Session& session, std::ostream& out)
{
    out << "run,interval,start_s,end_s,seconds," << counter_csv_header({kOffcpuNs}) << ",idle_fraction,events,lost,ops";
    for (const WaitPart& part : kWaitParts)
        out << ',' << part.key;
    out << ",max_wait_bound_ns";
    for (const HolderPart& part : kHolderParts)
        out << ',' << part.key;
    out << '\n';
    const uint32_t period = timing_period(session.meta).value_or(1);
    const bool split = wait_parts_split(session.schema_version);
    const bool holder = holder_split_kept(session.schema_version);
    const std::vector<std::optional<uint64_t>> maxima = interval_max_waits(session);
    // Times in seconds since the session's first run started, like the trace.
    const uint64_t origin = session.runs.empty() ? 0 : session.runs.front().start_ns;
    auto seconds_since = [&](uint64_t ns) { return format_decimal((double(ns) - double(origin)) / 1e9); };
    for (size_t i = 0; i < session.intervals.size(); ++i) {
        const IntervalTotals& in = session.intervals[i];
        auto known = [&](const char* field) {
            return report_shares::counter_known(in.counters, period, split, nullptr, field, holder);
        };
        out << in.run << ',' << in.index << ',' << seconds_since(in.start_ns) << ',' << seconds_since(in.end_ns) << ','
            << format_decimal(in.seconds());
        for_each_counter_column(
            in.counters, {kOffcpuNs},
            [&](const char* name, uint64_t v) {
                if (csv_appended(name))
                    return;
                out << ',';
                if (std::string_view(name) == "max_wait_ns")
                    out << (maxima[i] && known(name) ? std::to_string(*maxima[i]) : std::string());
                else if (known(name))
                    out << v;
            },
            [&](const char* name, double v) { out << ',' << (known(name) ? format_decimal(v) : std::string()); });
        out << ',' << format_decimal(in.idle_fraction()) << ',' << in.events << ',' << in.lost << ',';
        if (in.ops)
            out << format_decimal(*in.ops);
        for (const WaitPart& part : kWaitParts) {
            out << ',';
            if (known(part.key))
                out << (in.counters.*part.ns)();
        }
        out << ',';
        if (known("max_wait_ns"))
            out << in.counters.max_wait_ns;
        for (const HolderPart& part : kHolderParts) {
            out << ',';
            if (known(part.key))
                out << part.ns(in.counters);
        }
        out << '\n';
    }
}

}  // namespace

void export_csv(const Session& session, CsvTable table, std::ostream& out, size_t top, RowSort sort)
{
    if (table == CsvTable::Intervals)
        return intervals_csv(session, out);
    ReportOptions options;
    options.top = top;  // 0: every lock
    options.sort = sort;
    if (table == CsvTable::UserLocks) {
        options.scope = LockScope::User;
        out << format_user_locks_csv(build_report(session, options));
        return;
    }
    out << format_csv(build_report(session, options));
}

}  // namespace lockscope
