// Common base of the chart widgets: a frame that the screenshot test and
// the documentation renderer can find, with a title above the plot.
#pragma once

#include <QWidget>

QT_FORWARD_DECLARE_CLASS(QChartView)
QT_FORWARD_DECLARE_CLASS(QLabel)

namespace lockscope::gui::charts {

class ChartWidget : public QWidget {
    Q_OBJECT
public:
    using QWidget::QWidget;
    // The rectangle (in this widget's coordinates) where data is drawn; the
    // blank-chart test looks there.
    QRect plotRect() const;
    // True when the chart has data to show (false: it shows a message).
    virtual bool hasData() const = 0;
    // The message shown in place of a plot without data.
    void setEmptyText(const QString& text);

protected:
    // Called once by the subclass's constructor: the view that draws the
    // chart and the label over it (chart_style.h's empty_label).
    void setChartView(QChartView* view, QLabel* empty);

private:
    QChartView* view_ = nullptr;
    QLabel* empty_ = nullptr;
};

}  // namespace lockscope::gui::charts
