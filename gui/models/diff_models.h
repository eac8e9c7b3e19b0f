// The diff page's models, over one DiffSnapshot: the session totals, the
// per-lock deltas (sortable by effect size) and the metadata differences.
// Every verdict is text in its own column; colour only repeats it.
#pragma once

#include "session/diff_loader.h"

#include "models/table_model.h"

namespace lockscope::gui {

// What the three diff models share: one DiffSnapshot, swapped whole.
class DiffTableModel : public TableModel {
    Q_OBJECT
public:
    void setDiff(DiffPtr diff);

protected:
    using TableModel::TableModel;

    DiffPtr diff_;
};

class DiffTotalsModel : public DiffTableModel {
    Q_OBJECT
public:
    enum Columns { Metric, A, B, Change, Interval, P, Verdict, ColumnCount };
    enum Roles { SortRole = Qt::UserRole + 1, VerdictRole };

    explicit DiffTotalsModel(QObject* parent = nullptr);

private:
    int rows() const override;
    QVariant cell(const QModelIndex& index, int role) const override;
};

class DiffLocksModel : public DiffTableModel {
    Q_OBJECT
public:
    enum Columns { Lock, Kind, Metric, A, B, Change, Interval, P, Verdict, Effect, ColumnCount };
    enum Roles {
        SortRole = Qt::UserRole + 1,
        VerdictRole,   // int(lockscope::Verdict); -1 for a lock seen in one session only
        RelativeRole,  // headline relative change (double, NaN when undefined)
    };

    explicit DiffLocksModel(QObject* parent = nullptr);

private:
    int rows() const override;
    QVariant cell(const QModelIndex& index, int role) const override;
    QVariant matched(const LockDiff& lock, int column, int role) const;
    QVariant oneSided(const OneSidedLock& lock, bool in_a, int column, int role) const;
};

class MetaDiffModel : public DiffTableModel {
    Q_OBJECT
public:
    enum Columns { Key, A, B, ColumnCount };

    explicit MetaDiffModel(QObject* parent = nullptr);

private:
    int rows() const override;
    QVariant cell(const QModelIndex& index, int role) const override;
};

}  // namespace lockscope::gui
