#include "session/snapshot.h"

#include "core/analysis/user_lock_rows.h"
#include "core/storage/session_store.h"

#include <algorithm>
#include <map>

namespace lockscope::gui {
namespace {

// Real elapsed time when the intervals are ordered on one clock; otherwise
// (a damaged or foreign file) lay them end to end so the axis stays monotonic.
void build_timeline(const Session& s, SessionSnapshot& snap)
{
    Timeline& t = snap.timeline;
    const auto& iv = s.intervals;
    bool monotonic = !iv.empty();
    for (size_t i = 0; i < iv.size() && monotonic; ++i)
        monotonic = iv[i].end_ns >= iv[i].start_ns && iv[i].start_ns >= iv.front().start_ns &&
                    (i == 0 || iv[i].start_ns >= iv[i - 1].end_ns);
    double cumulative = 0;
    int64_t last_run = -1;
    for (size_t i = 0; i < iv.size(); ++i) {
        double start = monotonic ? double(iv[i].start_ns - iv.front().start_ns) / 1e9 : cumulative;
        double end = monotonic ? double(iv[i].end_ns - iv.front().start_ns) / 1e9 : cumulative + iv[i].seconds();
        cumulative = end;
        if (iv[i].run != last_run) {
            t.run_starts_s.push_back(start);
            last_run = iv[i].run;
        }
        t.start_s.push_back(start);
        t.x_s.push_back(end);
        snap.slot_of[SessionSnapshot::slot_key(iv[i].run, iv[i].index)] = i;
    }
}

void build_series(const Session& s, SessionSnapshot& snap)
{
    const size_t n = s.intervals.size();
    snap.spin_failure_rate.name = "spin-failure rate";
    snap.idle_fraction.name = "CPU idle";
    snap.ops_per_s.name = "throughput";
    bool any_ops = false;
    for (const IntervalTotals& in : s.intervals)
        any_ops = any_ops || in.ops.has_value();
    for (const IntervalTotals& in : s.intervals) {
        snap.spin_failure_rate.y.push_back(in.counters.spin_failure_rate());
        snap.idle_fraction.y.push_back(in.idle_fraction());
        if (any_ops)
            snap.ops_per_s.y.push_back(in.seconds() > 0 && in.ops ? *in.ops / in.seconds() : 0.0);
    }

    if (!snap.detailed())
        return;  // per-run totals only: no per-interval lock rows yet
    // Contentions per kind and interval, from the sparse per-lock rows.
    std::unordered_map<int64_t, std::string> kind_of;
    for (const LockInfo& l : s.locks)
        kind_of[l.id] = l.kind;
    std::map<std::string, std::vector<double>> by_kind;
    std::map<std::string, uint64_t> kind_total;
    for (size_t row = 0; row < s.lock_intervals.size(); ++row) {
        const LockInterval& li = s.lock_intervals[row];
        snap.lock_rows[li.lock_id].push_back(row);
        auto slot = snap.slot_of.find(SessionSnapshot::slot_key(li.run, li.index));
        auto kind = kind_of.find(li.lock_id);
        if (slot == snap.slot_of.end() || kind == kind_of.end())
            continue;
        auto& ys = by_kind[kind->second];
        ys.resize(n);
        ys[slot->second] += double(li.counters.contentions);
        kind_total[kind->second] += li.counters.contentions;
    }
    for (auto& [kind, ys] : by_kind) {
        for (size_t i = 0; i < n; ++i) {
            double secs = s.intervals[i].seconds();
            ys[i] = secs > 0 ? ys[i] / secs : 0.0;
        }
        snap.contentions_by_kind.push_back({kind, std::move(ys)});
    }
    std::stable_sort(snap.contentions_by_kind.begin(), snap.contentions_by_kind.end(),
                     [&](const Series& a, const Series& b) { return kind_total[a.name] > kind_total[b.name]; });
}

}  // namespace

SnapshotPtr build_snapshot(const QString& path, std::shared_ptr<const Session> session, SessionSnapshot::Level level)
{
    auto snap = std::make_shared<SessionSnapshot>();
    snap->path = path;
    snap->level = level;
    snap->session = session;
    ReportOptions all;
    all.top = 0;
    snap->report = build_report(*session, all);
    snap->user_rows_from = snap->report.rows.size();
    for (ReportRow& row : user_lock_rows(snap->report.user_locks))
        snap->report.rows.push_back(std::move(row));
    snap->recording =
        std::any_of(session->runs.begin(), session->runs.end(), [](const RunInfo& r) { return r.status == "running"; });
    build_timeline(*session, *snap);
    build_series(*session, *snap);
    return snap;
}

SnapshotPtr build_snapshot(const QString& path)
{
    auto session = std::make_shared<Session>(load_session(path.toStdString()));
    return build_snapshot(path, std::move(session));
}

SnapshotPtr build_snapshot(const QString& path, SessionSnapshot::Level level)
{
    if (level == SessionSnapshot::Level::Detailed)
        return build_snapshot(path);
    LoadOptions options;
    options.lock_intervals = false;
    options.lock_totals = level == SessionSnapshot::Level::Totals;
    auto session = std::make_shared<Session>(load_session(path.toStdString(), options));
    return build_snapshot(path, std::move(session), level);
}

}  // namespace lockscope::gui
