// The Locks page's "Holders" tab for the selected lock: its holder split
// (a stacked bar and the four figures), the holders followed with the wait
// each caused in each state and the tasks that preempted a runnable holder,
// beside the sampled holder stacks.
#pragma once

#include "core/analysis/report.h"

#include <QWidget>

#include <array>

class QLabel;
class QTreeView;

namespace lockscope::gui {

class HolderTimeModel;
class StackModel;

// Four segments in proportion to the holder split's parts; grey and empty
// where there is no split.
class HolderSplitBar : public QWidget {
    Q_OBJECT
public:
    explicit HolderSplitBar(QWidget* parent = nullptr);
    void setPercents(const std::array<int, 4>& percents, bool known);
    QSize sizeHint() const override;

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    std::array<int, 4> percents_{};
    bool known_ = false;
};

class HolderTab : public QWidget {
    Q_OBJECT
public:
    HolderTab(StackModel* stacks, QWidget* parent = nullptr);

    // The row's split and tasks; `kept`: the session keeps the holder split.
    void setRow(const ReportRow* row, bool kept);

    HolderTimeModel* times() const { return times_; }
    QLabel* summary() const { return summary_; }
    HolderSplitBar* bar() const { return bar_; }

private:
    HolderTimeModel* times_;
    HolderSplitBar* bar_;
    QLabel* summary_;
    QTreeView* times_view_;
};

}  // namespace lockscope::gui
