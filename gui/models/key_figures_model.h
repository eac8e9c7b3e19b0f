// The overview's key figures, one row each, computed from the report totals
// so they agree with `lockscope report` to the last digit.
#pragma once

#include "session/snapshot.h"

#include "models/table_model.h"

namespace lockscope::gui {

class KeyFiguresModel : public TableModel {
    Q_OBJECT
public:
    enum Figures {
        ContentionsPerSecond,
        SpinFailureRate,
        WaitSpinning,  // the wait's four parts (display::WaitPart), in that order
        WaitQueuedOnCpu,
        WaitAsleep,
        WaitRunnable,
        // The holder split: running / runnable / asleep as shares of the
        // wait (display::HolderPart), unknown in its detail.
        HolderSplit,
        IdleFraction,
        Throughput,
        TopLock,
        Lost,
        FigureCount
    };
    enum Columns { Label, Value, Detail, ColumnCount };
    enum Roles {
        ValueRole = Qt::UserRole + 1,  // raw number (double); invalid when not applicable
        AlertRole,                     // bool: the figure needs the reader's attention
        // int: a wait part's whole percentage; the four add up to 100.
        // Invalid for other figures and where the session cannot split the wait.
        PercentRole,
        // QVariantList of four ints: the holder split's whole percentages
        // (display::HolderPart order), adding up to 100. Invalid for other
        // figures and where the session keeps no split or has no timed wait.
        HolderPercentsRole,
    };

    explicit KeyFiguresModel(QObject* parent = nullptr);
    void setSnapshot(SnapshotPtr snapshot);

    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    int rows() const override;
    QVariant cell(const QModelIndex& index, int role) const override;
    QVariant value(int figure) const;
    QString valueText(int figure) const;
    QString detail(int figure) const;
    // Whether the four wait parts are known and add up (a session format
    // that splits the wait, with timed episodes).
    bool partsKnown() const;
    // Whether the holder split is kept and the wait it splits is known.
    bool holderKnown() const;
    QString holderText(int column) const;

    SnapshotPtr snapshot_;
};

}  // namespace lockscope::gui
