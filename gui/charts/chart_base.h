// Common base of the chart widgets: a frame that the screenshot test and
// the documentation renderer can find, with a title above the plot.
#pragma once

#include <QWidget>

namespace lockscope::gui::charts {

class ChartWidget : public QWidget {
    Q_OBJECT
public:
    using QWidget::QWidget;
    // The rectangle (in this widget's coordinates) where data is drawn; the
    // blank-chart test looks there.
    virtual QRect plotRect() const = 0;
    // True when the chart has data to show (false: it shows a message).
    virtual bool hasData() const = 0;
};

}  // namespace lockscope::gui::charts
