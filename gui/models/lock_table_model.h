// The locks table: one row per lock (name, kind, mode), exactly the rows of
// `lockscope report --by lock`, kernel and user-space locks alike; a
// column a user lock's futex waits do not give (spins, sleeps, cgroups) is
// "–" on its row.
#pragma once

#include "session/snapshot.h"

#include "models/table_model.h"

namespace lockscope::gui {

class LockTableModel : public TableModel {
    Q_OBJECT
public:
    enum Columns {
        Name,
        Kind,
        Scope,  // kernel or user: a kernel lock, or a user-space lock of a recorded process
        Caller,
        Source,
        Contentions,
        SpinAttempts,
        SpinFailureRate,
        WaitTotal,
        WaitMean,
        WaitMax,
        // The wait's four parts as shares of the row's wait (display::WaitPart
        // order); whole percentages that add up to 100 per row.
        SpinningShare,
        QueuedOnCpuShare,
        AsleepShare,
        RunnableShare,
        // The holder split: the same wait by what the lock's holder was
        // doing (display::HolderPart order), whole percentages that add up
        // to 100; "–" where the session or the lock keeps none.
        HolderRunningShare,
        HolderRunnableShare,
        HolderAsleepShare,
        HolderUnknownShare,
        Sleeps,
        ShareOfWait,
        Cgroups,  // the cgroups whose tasks were sampled waiting on it
        ColumnCount
    };
    enum Roles {
        SortRole = Qt::UserRole + 1,  // raw number (exact integer for counters) or text
        GroupIndexRole,               // index into SessionSnapshot::groups
        LockKeyRole,                  // the row's LockKey: survives a reload
        // int: a wait part's (or holder part's) whole percentage, as shown;
        // the four add up to 100. Invalid where not known (no wait, not
        // timed, not split).
        PercentRole,
        // qulonglong: the exact count or nanoseconds behind a number column
        // (a wait part's column: the part's ns), as `lockscope report
        // --format json` has it; invalid where the report has null.
        ExactRole,
    };

    explicit LockTableModel(QObject* parent = nullptr);

    void setSnapshot(SnapshotPtr snapshot);
    const SnapshotPtr& snapshot() const { return snapshot_; }

    // Whether a row has a holder split: the session keeps it (`kept`), and
    // it is a kernel lock's row with a holder followed (spinlocks, rwlocks
    // and reader-owned rwsems have no owner to follow). Otherwise, why not,
    // in one sentence (empty where it has one).
    static bool holderFollowed(const ReportRow& row, bool kept);
    static QString noHolderSplitReason(const ReportRow& row, bool kept);

    // Every cgroup of the row, most sampled first, one per line.
    static QString cgroupList(const ReportRow& row);

private:
    int rows() const override;
    QVariant cell(const QModelIndex& index, int role) const override;
    QVariant display(const ReportRow& row, int column) const;
    QVariant sortValue(const ReportRow& row, int column) const;
    QVariant partPercent(const ReportRow& row, int column) const;
    QVariant exact(const ReportRow& row, int column) const;
    // Whether the row's wait is split into parts that add up (a user lock's
    // by its own format version).
    bool split(const ReportRow& row) const;
    bool holderSplit(const ReportRow& row) const;
    QVariant holderCell(const ReportRow& row, int column, int role) const;
    uint32_t period(const ReportRow& row) const;  // record --sample N's N; 1 for user locks

    SnapshotPtr snapshot_;
};

}  // namespace lockscope::gui

Q_DECLARE_METATYPE(lockscope::LockKey)
