#include "views/holder_tab.h"

#include "charts/chart_data.h"
#include "core/analysis/stack_frames.h"
#include "core/format.h"
#include "models/display.h"
#include "models/holder_time_model.h"
#include "models/lock_table_model.h"
#include "models/stack_model.h"
#include "views/panes.h"

#include <QHeaderView>
#include <QLabel>
#include <QPainter>
#include <QSplitter>
#include <QTreeView>
#include <QVBoxLayout>

namespace lockscope::gui {
namespace {

// Unknown is grey: it is the part not followed, not a state.
QColor part_colour(int part)
{
    return part == display::HolderUnknown ? QColor(0xbb, 0xbb, 0xbb) : charts::palette(part);
}

QTreeView* table_view(QAbstractItemModel* model, QWidget* parent)
{
    auto* view = new QTreeView(parent);
    view->setModel(model);
    view->setRootIsDecorated(false);
    view->setUniformRowHeights(true);
    view->setAlternatingRowColors(true);
    view->header()->setStretchLastSection(false);
    view->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
    return view;
}

}  // namespace

HolderSplitBar::HolderSplitBar(QWidget* parent) : QWidget(parent)
{
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
}

void HolderSplitBar::setPercents(const std::array<int, 4>& percents, bool known)
{
    percents_ = percents;
    known_ = known;
    update();
}

QSize HolderSplitBar::sizeHint() const
{
    return {300, fontMetrics().height() + 8};
}

void HolderSplitBar::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    const QRect whole = rect().adjusted(0, 0, -1, -1);
    if (!known_) {
        p.setPen(QColor(0xd0, 0xd7, 0xde));
        p.setBrush(QColor(0xf6, 0xf8, 0xfa));
        p.drawRect(whole);
        return;
    }
    int x = whole.left(), done = 0;
    for (int part = 0; part < display::HolderPartCount; ++part) {
        done += percents_[size_t(part)];
        // Segments end where the running sum of the percentages does: no gap, no overlap.
        const int end = whole.left() + whole.width() * done / 100;
        const QRect segment(x, whole.top(), end - x, whole.height());
        p.fillRect(segment, part_colour(part));
        if (segment.width() > p.fontMetrics().horizontalAdvance(QStringLiteral("100% runnable")) + 6) {
            p.setPen(part == display::HolderUnknown ? Qt::black : Qt::white);
            p.drawText(segment, Qt::AlignCenter,
                       QStringLiteral("%1% %2").arg(percents_[size_t(part)]).arg(display::holder_part_name(part)));
        }
        x = end;
    }
}

HolderTab::HolderTab(StackModel* stacks, QWidget* parent) : QWidget(parent)
{
    times_ = new HolderTimeModel(this);
    bar_ = new HolderSplitBar(this);
    summary_ = new QLabel(this);
    summary_->setWordWrap(true);
    summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    times_view_ = table_view(times_, this);

    auto* stack_view = table_view(stacks, this);
    stack_view->setRootIsDecorated(true);
    stack_view->header()->setSectionResizeMode(StackModel::Frames, QHeaderView::Stretch);
    auto* stacks_box = new QWidget(this);
    auto* stacks_layout = new QVBoxLayout(stacks_box);
    stacks_layout->setContentsMargins(0, 0, 0, 0);
    auto* stacks_title = new QLabel(tr("Sampled holder stacks"), this);
    stacks_title->setToolTip(tr("The holder's kernel stack when a waiter queued, sampled; first what it was doing"));
    stacks_layout->addWidget(stacks_title);
    stacks_layout->addWidget(stack_view);

    auto* split = split_panes(Qt::Horizontal, {times_view_, stacks_box}, this);
    // The tasks' five numbers need the wider half; frames elide.
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(bar_);
    layout->addWidget(summary_);
    layout->addWidget(split, 1);
    setRow(nullptr, true);
}

void HolderTab::setRow(const ReportRow* row, bool kept)
{
    const bool followed = row && LockTableModel::holderFollowed(*row, kept);
    const LockCounters& c = row ? row->counters : LockCounters{};
    const bool known = followed && c.wait_ns;
    bar_->setPercents(display::holder_part_percents(c), known);
    if (!row)
        summary_->setText(tr("Select a lock to see what its holders were doing"));
    else if (!followed)
        summary_->setText(LockTableModel::noHolderSplitReason(*row, kept));
    else if (!known)
        summary_->setText(tr("No wait on this lock."));
    else {
        const auto percents = display::holder_part_percents(c);
        QStringList parts;
        for (int part = 0; part < display::HolderPartCount; ++part)
            parts << QStringLiteral("<span style=\"color:%1\">&#9632;</span> %2 %3 %4%")
                         .arg(part_colour(part).name(), display::holder_part_name(part),
                              display::duration(double(display::holder_part_ns(c, part))))
                         .arg(percents[size_t(part)]);
        QString text = tr("While waiters waited %1, the holder was: %2")
                           .arg(display::duration(double(c.wait_ns)), parts.join(QStringLiteral(", ")));
        // Where it slept holding the lock: every sleep (the report's "asleep in").
        QStringList slept;
        for (size_t i = 0; i < row->holder_sleeps.size() && i < 2; ++i) {
            const HolderShare& h = row->holder_sleeps[i];
            QStringList where;
            for (const std::string& fn : sleep_functions(h.frames, 3))
                where << QString::fromStdString(fn).toHtmlEscaped();
            slept << tr("%1 %2 (%3, %4 %5)")
                         .arg(where.join(QStringLiteral(" &larr; ")),
                              QString::fromStdString(format_percent_cell(h.share)),
                              display::duration(double(h.wait_ns)), QString::fromStdString(format_count(h.samples)),
                              h.samples == 1 ? tr("sleep") : tr("sleeps"));
        }
        if (!slept.isEmpty())
            text += tr("<br>It slept holding the lock in: %1").arg(slept.join(QStringLiteral("; ")));
        summary_->setText(text);
    }
    if (followed)
        times_->setTasks(row->holder_times, row->preemptors);
    else
        times_->setTasks({}, {});
}

}  // namespace lockscope::gui
