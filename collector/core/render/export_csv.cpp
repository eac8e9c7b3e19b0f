// `lockscope export --format csv`: the per-lock, per-interval and user-lock tables.
#include "core/render/export.h"

#include "core/analysis/report.h"
#include "core/format.h"
#include "core/render/counter_columns.h"

namespace lockscope {
namespace {

void intervals_csv(const Session& session, std::ostream& out)
{
    out << "run,interval,start_s,end_s,seconds," << counter_csv_header({kOffcpuNs})
        << ",idle_fraction,events,lost,ops\n";
    // Times in seconds since the session's first run started, like the trace.
    const uint64_t origin = session.runs.empty() ? 0 : session.runs.front().start_ns;
    auto seconds_since = [&](uint64_t ns) { return format_decimal((double(ns) - double(origin)) / 1e9); };
    for (const IntervalTotals& in : session.intervals) {
        out << in.run << ',' << in.index << ',' << seconds_since(in.start_ns) << ',' << seconds_since(in.end_ns) << ','
            << format_decimal(in.seconds());
        for_each_counter_column(
            in.counters, {kOffcpuNs}, [&](const char*, uint64_t v) { out << ',' << v; },
            [&](const char*, double v) { out << ',' << format_decimal(v); });
        out << ',' << format_decimal(in.idle_fraction()) << ',' << in.events << ',' << in.lost << ',';
        if (in.ops)
            out << format_decimal(*in.ops);
        out << '\n';
    }
}

}  // namespace

void export_csv(const Session& session, CsvTable table, std::ostream& out)
{
    if (table == CsvTable::Intervals)
        return intervals_csv(session, out);
    ReportOptions options;
    options.top = 0;  // every lock
    if (table == CsvTable::UserLocks) {
        options.scope = LockScope::User;
        out << format_user_locks_csv(build_report(session, options));
        return;
    }
    out << format_csv(build_report(session, options));
}

}  // namespace lockscope
