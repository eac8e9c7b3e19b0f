// What the pages hand to charts: plain values, so that nothing outside
// gui/charts includes Qt Charts (deprecated upstream after 6.10; a move to
// Qt Graphs stays inside this directory).
#pragma once

#include <QColor>
#include <QList>
#include <QPointF>
#include <QString>
#include <QStringList>

namespace lockscope::gui::charts {

struct Line {
    QString name;
    QList<QPointF> points;  // x in seconds, y in the chart's unit
    QColor colour;
};

// How a value axis reads: fractions are shown as percentages, rates get a
// k/M scale in the axis title rather than long digit strings.
enum class Unit { Fraction, PerSecond, Count };

struct Bar {
    QString label;
    double value = 0;
    QString group;  // bars of one group share colour and a legend entry
    QColor colour;
};

// Okabe–Ito: distinguishable with the common colour-vision deficiencies.
QColor palette(int index);

}  // namespace lockscope::gui::charts
