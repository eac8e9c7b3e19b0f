// The diff page's models, over one DiffSnapshot: the session totals, the
// per-lock deltas (sortable by effect size) and the metadata differences.
// Every verdict is text in its own column; colour only repeats it.
#pragma once

#include "session/diff_loader.h"

#include <QAbstractTableModel>

namespace lockscope::gui {

class DiffTotalsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Columns { Metric, A, B, Change, Interval, P, Verdict, ColumnCount };
    enum Roles { SortRole = Qt::UserRole + 1, VerdictRole };

    explicit DiffTotalsModel(QObject* parent = nullptr);
    void setDiff(DiffPtr diff);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

private:
    DiffPtr diff_;
};

class DiffLocksModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Columns { Lock, Kind, Metric, A, B, Change, Interval, P, Verdict, Effect, ColumnCount };
    enum Roles {
        SortRole = Qt::UserRole + 1,
        VerdictRole,   // int(lockscope::Verdict); -1 for a lock seen in one session only
        RelativeRole,  // headline relative change (double, NaN when undefined)
    };

    explicit DiffLocksModel(QObject* parent = nullptr);
    void setDiff(DiffPtr diff);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

private:
    QVariant matched(const LockDiff& lock, int column, int role) const;
    QVariant oneSided(const OneSidedLock& lock, bool in_a, int column, int role) const;

    DiffPtr diff_;
};

class MetaDiffModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Columns { Key, A, B, ColumnCount };

    explicit MetaDiffModel(QObject* parent = nullptr);
    void setDiff(DiffPtr diff);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

private:
    DiffPtr diff_;
};

}  // namespace lockscope::gui
