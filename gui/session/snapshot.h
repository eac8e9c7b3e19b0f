// Value snapshots of a loaded session: everything the models and charts
// show, computed once off the UI thread and then shared read-only.
#pragma once

#include "core/analysis/report.h"
#include "core/model.h"

#include <QMetaType>
#include <QString>

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace lockscope::gui {

// One line over the recording; `y` is aligned with Timeline::x_s.
struct Series {
    std::string name;
    std::vector<double> y;
};

// The shared time axis: the end of each interval in seconds since the
// session's first interval began, and its start. Runs of a repeat share the
// recorder's clock, so gaps between runs stay visible.
struct Timeline {
    std::vector<double> x_s;
    std::vector<double> start_s;       // parallel to x_s: where each interval begins
    std::vector<double> run_starts_s;  // where each run's first interval begins
    double end_s() const { return x_s.empty() ? 0.0 : x_s.back(); }
};

struct SessionSnapshot {
    QString path;
    std::shared_ptr<const Session> session;
    // By lock, every row: the same numbers `lockscope report` prints; each
    // row's lock ids reach the per-interval rows and stacks behind it. The
    // kernel's rows come first, then from `user_rows_from` on the
    // user-space locks' (report.user_locks.rows, in their order), so a
    // session of a user program lists its locks like any other.
    Report report;
    size_t user_rows_from = 0;
    Timeline timeline;
    Series spin_failure_rate;                 // fraction per interval (0 when nothing spun)
    Series idle_fraction;                     // fraction per interval
    std::vector<Series> contentions_by_kind;  // per second, largest kind first
    Series ops_per_s;                         // empty y when the session ran no workload
    bool recording = false;                   // a run is still being written
    // How much of the file this snapshot holds. A newly opened file comes
    // in three steps so the first paint does not wait for the per-lock rows:
    //  Intervals: no per-lock rows at all (report rows, lock_rows,
    //             contentions_by_kind empty; totals, timeline and the
    //             interval series final);
    //  Totals:    session->lock_intervals holds per-run totals per lock
    //             (LoadOptions::lock_intervals off), so report is
    //             final, the per-lock and per-kind time series still empty;
    //  Detailed:  everything.
    enum class Level { Intervals, Totals, Detailed };
    Level level = Level::Detailed;
    bool detailed() const { return level == Level::Detailed; }
    // (run, index) of an interval to its position on the timeline.
    std::unordered_map<uint64_t, size_t> slot_of;
    // Positions in session->lock_intervals for each lock id.
    std::unordered_map<int64_t, std::vector<size_t>> lock_rows;

    // The user lock behind report row `row`, or none for a kernel row.
    const UserLockReportRow* user_lock(size_t row) const
    {
        return row >= user_rows_from && row - user_rows_from < report.user_locks.rows.size()
                   ? &report.user_locks.rows[row - user_rows_from]
                   : nullptr;
    }

    static uint64_t slot_key(int64_t run, int64_t index) { return (uint64_t(run) << 32) ^ uint64_t(uint32_t(index)); }
};

using SnapshotPtr = std::shared_ptr<const SessionSnapshot>;

// Loads and rolls up a session; throws lockscope::Error like load_session.
SnapshotPtr build_snapshot(const QString& path);
// The same at a lower SessionSnapshot::Level: faster.
SnapshotPtr build_snapshot(const QString& path, SessionSnapshot::Level level);
// The roll-up alone, for sessions already in memory (tests, benchmarks);
// `level` says what `session` was loaded with.
SnapshotPtr build_snapshot(const QString& path, std::shared_ptr<const Session> session,
                           SessionSnapshot::Level level = SessionSnapshot::Level::Detailed);

}  // namespace lockscope::gui

Q_DECLARE_METATYPE(lockscope::gui::SnapshotPtr)
