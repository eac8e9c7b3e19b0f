#include "models/diff_models.h"

#include "models/display.h"

#include <QFont>

#include <cmath>
#include <limits>

namespace lockscope::gui {
namespace {

// The columns a MetricDiff fills, shared by totals and lock rows.
enum class Cell { Metric, A, B, Change, Interval, P, Verdict };

QVariant metric_cell(const MetricDiff& m, Cell cell, int role)
{
    const stats::TestResult& t = m.test;
    if (role == Qt::DisplayRole) {
        switch (cell) {
            case Cell::Metric:
                return display::metric_label(m);
            case Cell::A:
                return display::metric_value(m, t.center_a);
            case Cell::B:
                return display::metric_value(m, t.center_b);
            case Cell::Change:
                return display::metric_change(m);
            case Cell::Interval:
                return display::metric_interval(m);
            case Cell::P:
                return display::metric_p(m);
            case Cell::Verdict:
                return display::verdict_text(m.verdict);
        }
    }
    if (role == DiffTotalsModel::SortRole) {
        switch (cell) {
            case Cell::Metric:
                return display::metric_label(m);
            case Cell::A:
                return t.center_a;
            case Cell::B:
                return t.center_b;
            case Cell::Change:
            case Cell::Interval:
                return std::isfinite(t.relative) ? t.relative : 0.0;
            case Cell::P:
                return m.p_adjusted;
            case Cell::Verdict:
                return int(m.verdict);
        }
    }
    if (cell == Cell::Verdict && role == Qt::ForegroundRole)
        return display::verdict_colour(m.verdict);
    if (cell == Cell::Verdict && role == Qt::BackgroundRole && m.verdict != Verdict::NoSignificantDifference &&
        m.verdict != Verdict::NotEnoughData && m.verdict != Verdict::BelowMinEffect) {
        QColor tint = display::verdict_colour(m.verdict);
        tint.setAlpha(36);
        return tint;
    }
    if (cell == Cell::Verdict && role == Qt::FontRole &&
        (m.verdict == Verdict::Worse || m.verdict == Verdict::Better)) {
        QFont bold;
        bold.setBold(true);
        return bold;
    }
    if ((cell == Cell::A || cell == Cell::B) && role == Qt::ToolTipRole)
        return display::metric_label(m);
    if (cell == Cell::Verdict && role == Qt::ToolTipRole)
        return t.enough_data ? QStringLiteral("%1, n = %2 vs %3")
                                   .arg(QString::fromUtf8(stats::method_name(t.method)))
                                   .arg(t.n_a)
                                   .arg(t.n_b)
                             : QString::fromStdString(t.reason);
    if (role == Qt::TextAlignmentRole)
        return TableModel::alignment(cell == Cell::Metric || cell == Cell::Verdict);
    return {};
}

}  // namespace

void DiffTableModel::setDiff(DiffPtr diff)
{
    reset(diff_, std::move(diff));
}

DiffTotalsModel::DiffTotalsModel(QObject* parent)
    : DiffTableModel({"Metric", "A", "B", "Change", "95% interval", "p", "Verdict"}, parent)
{
}

int DiffTotalsModel::rows() const
{
    return diff_ ? int(diff_->result.totals.size()) : 0;
}

QVariant DiffTotalsModel::cell(const QModelIndex& index, int role) const
{
    const MetricDiff& m = diff_->result.totals[size_t(index.row())];
    if (role == VerdictRole)
        return int(m.verdict);
    return metric_cell(m, Cell(index.column()), role);
}

DiffLocksModel::DiffLocksModel(QObject* parent)
    : DiffTableModel({"Lock", "Kind", "Metric", "A", "B", "Change", "95% interval", "p", "Verdict", "Effect |B − A|"},
                     parent)
{
}

int DiffLocksModel::rows() const
{
    if (!diff_)
        return 0;
    const DiffResult& d = diff_->result;
    return int(d.locks.size() + d.only_a.size() + d.only_b.size());
}

QVariant DiffLocksModel::matched(const LockDiff& lock, int column, int role) const
{
    if (column == Lock || column == Kind) {
        if (role == Qt::DisplayRole || role == SortRole)
            return column == Lock
                       ? QString::fromStdString(lock.name_b.empty() ? lock.name : lock.name + " → " + lock.name_b)
                       : display::kind(lock.kind_b.empty() ? lock.kind : lock.kind + " → " + lock.kind_b, lock.mode);
        if (role == Qt::TextAlignmentRole)
            return alignment(true);
        return {};
    }
    if (lock.metrics.empty())
        return {};
    const MetricDiff& m = lock.metrics.front();
    if (role == VerdictRole)
        return int(m.verdict);
    if (role == RelativeRole)
        return m.test.relative;
    if (column == Effect) {
        if (role == Qt::DisplayRole)
            return display::metric_value(m, lock.effect);
        if (role == SortRole)
            return lock.effect;
        if (role == Qt::TextAlignmentRole)
            return alignment(false);
        return {};
    }
    return metric_cell(m, Cell(column - Metric), role);
}

QVariant DiffLocksModel::oneSided(const OneSidedLock& lock, bool in_a, int column, int role) const
{
    if (role == VerdictRole)
        return -1;
    if (role == RelativeRole)
        return std::numeric_limits<double>::quiet_NaN();
    const QString wait = display::duration(lock.wait_per_s) + "/s";
    // The text columns sort as they read.
    if (role == Qt::DisplayRole || role == SortRole) {
        switch (column) {
            case Lock:
                return QString::fromStdString(lock.name);
            case Kind:
                return display::kind(lock.kind, lock.mode);
            case Metric:
                return QStringLiteral("wait per second");
        }
    }
    if (role == Qt::DisplayRole) {
        switch (column) {
            case A:
                return in_a ? wait : QStringLiteral("–");
            case B:
                return in_a ? QStringLiteral("–") : wait;
            case Verdict:
                return in_a ? QStringLiteral("only in A") : QStringLiteral("only in B");
            case Effect:
                return wait;
        }
        return QStringLiteral("–");
    }
    if (role == SortRole) {
        switch (column) {
            case A:
                return in_a ? lock.wait_per_s : 0.0;
            case B:
                return in_a ? 0.0 : lock.wait_per_s;
            case Verdict:
                return -1;
            // Below every matched lock: its wait per second does not compare
            // with their headline (often wait per op).
            case Effect:
                return -1.0;
        }
        return 0.0;
    }
    if (role == Qt::ToolTipRole)
        return QStringLiteral("Seen in one session only (%1 contentions): no test is possible")
            .arg(display::count(lock.contentions));
    if (role == Qt::TextAlignmentRole)
        return alignment(column == Lock || column == Kind || column == Metric || column == Verdict);
    return {};
}

QVariant DiffLocksModel::cell(const QModelIndex& index, int role) const
{
    const DiffResult& d = diff_->result;
    size_t row = size_t(index.row());
    if (row < d.locks.size())
        return matched(d.locks[row], index.column(), role);
    row -= d.locks.size();
    if (row < d.only_a.size())
        return oneSided(d.only_a[row], true, index.column(), role);
    return oneSided(d.only_b[row - d.only_a.size()], false, index.column(), role);
}

MetaDiffModel::MetaDiffModel(QObject* parent) : DiffTableModel({"Differs", "A", "B"}, parent) {}

int MetaDiffModel::rows() const
{
    return diff_ ? int(diff_->result.metadata.size()) : 0;
}

QVariant MetaDiffModel::cell(const QModelIndex& index, int role) const
{
    const MetaDifference& m = diff_->result.metadata[size_t(index.row())];
    if (role != Qt::DisplayRole && role != Qt::ToolTipRole)
        return {};
    auto shown = [](const std::string& v) {
        return v.empty() ? QStringLiteral("(not recorded)") : QString::fromStdString(v);
    };
    switch (index.column()) {
        case Key:
            return QString::fromStdString(m.key);
        case A:
            return shown(m.a);
        case B:
            return shown(m.b);
    }
    return {};
}

}  // namespace lockscope::gui
