// The session's wait chains as a graph: lock classes as boxes, an arrow
// from a waiter's lock to the lock its holder was itself waiting for, as
// thick as the wait it explains; a chain's last lock says what its holders
// were doing (the root). Clicking a box selects that lock.
#pragma once

#include "models/chain_graph.h"

#include <QPainterPath>
#include <QRectF>
#include <QString>
#include <QWidget>

namespace lockscope::gui {

class ChainView : public QWidget {
    Q_OBJECT
public:
    explicit ChainView(QWidget* parent = nullptr);
    void setGraph(ChainGraph graph);
    void setSelectedLock(const QString& name);  // highlighted; "" for none
    const ChainGraph& graph() const { return graph_; }
    // Where node i is drawn, in widget coordinates (tests click there).
    QRectF nodeRect(size_t i) const;
    // Where an edge is drawn; `tip` gets the arrow's tip, which lies on the
    // border of the edge's target box (a lock of the same class included).
    QPainterPath edgePath(const ChainGraph::Edge& edge, QPointF* tip) const;
    QSize sizeHint() const override;

signals:
    void lockClicked(const QString& name);

protected:
    void paintEvent(QPaintEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    bool event(QEvent* event) override;  // tooltips

private:
    int nodeAt(QPointF pos) const;
    double rowGap() const;
    QString nodeTip(size_t i) const;

    ChainGraph graph_;
    QString selected_;
};

}  // namespace lockscope::gui
