#include "views/chain_view.h"

#include "models/display.h"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QToolTip>

#include <algorithm>
#include <cmath>

namespace lockscope::gui {
namespace {

// Boxes shrink to fit the view down to kMinNodeW; below that the view
// scrolls. Gaps between columns leave room for the wait labels; between
// rows, for the loops of cycles and their labels when there are any.
constexpr double kMinNodeW = 130, kMaxNodeW = 220, kNodeH = 46, kMinGapX = 76, kMaxGapX = 160, kGapY = 22,
                 kLoopGapY = 44, kMargin = 16, kTitleH = 20;

// Line width by explained wait: 1.5 px for the lightest, 9 px for the heaviest.
double edge_width(uint64_t wait, uint64_t max_wait)
{
    if (!max_wait)
        return 1.5;
    return 1.5 + 7.5 * std::sqrt(double(wait) / double(max_wait));
}

void arrow_head(QPainter& p, QPointF tip, QPointF from, double size)
{
    const double angle = std::atan2(tip.y() - from.y(), tip.x() - from.x());
    const QPointF a = tip - QPointF(std::cos(angle - 0.45) * size, std::sin(angle - 0.45) * size);
    const QPointF b = tip - QPointF(std::cos(angle + 0.45) * size, std::sin(angle + 0.45) * size);
    p.drawPolygon(QPolygonF({tip, a, b}));
}

}  // namespace

ChainView::ChainView(QWidget* parent) : QWidget(parent)
{
    setMinimumSize(240, 120);
}

void ChainView::setGraph(ChainGraph graph)
{
    graph_ = std::move(graph);
    const QSize least = sizeHint();
    setMinimumSize(std::max(240, least.width()), std::max(120, least.height()));
    updateGeometry();
    update();
}

void ChainView::setSelectedLock(const QString& name)
{
    if (selected_ == name)
        return;
    selected_ = name;
    update();
}

double ChainView::rowGap() const
{
    const bool loops = std::any_of(graph_.edges.begin(), graph_.edges.end(),
                                   [&](const ChainGraph::Edge& e) { return e.back || e.from == e.to; });
    return loops ? kLoopGapY : kGapY;
}

QSize ChainView::sizeHint() const
{
    const int gaps = std::max(0, graph_.columns - 1);
    // Room below the last row for a cycle's loop.
    return QSize(
        int(2 * kMargin + graph_.columns * kMinNodeW + gaps * kMinGapX),
        int(2 * kMargin + kTitleH + graph_.rows * kNodeH + std::max(0, graph_.rows - 1) * rowGap() + rowGap() + kGapY));
}

QRectF ChainView::nodeRect(size_t i) const
{
    const ChainGraph::Node& n = graph_.nodes[i];
    const int columns = std::max(1, graph_.columns);
    const double room = width() - 2 * kMargin;
    const double node_w = std::clamp((room - (columns - 1) * kMinGapX) / columns, kMinNodeW, kMaxNodeW);
    const double gap = columns > 1 ? std::clamp((room - columns * node_w) / (columns - 1), kMinGapX, kMaxGapX) : 0;
    return QRectF(kMargin + n.column * (node_w + gap), kMargin + kTitleH + n.row * (kNodeH + rowGap()), node_w, kNodeH);
}

QPainterPath ChainView::edgePath(const ChainGraph::Edge& e, QPointF* tip) const
{
    const QRectF a = nodeRect(e.from), b = nodeRect(e.to);
    QPointF start, end;
    QPainterPath path;
    if (e.from != e.to && !e.back && b.left() > a.right()) {
        start = QPointF(a.right(), a.center().y());
        end = QPointF(b.left(), b.center().y());
        const double dx = (end.x() - start.x()) / 2;
        path.moveTo(start);
        path.cubicTo(start + QPointF(dx, 0), end - QPointF(dx, 0), end);
    } else {
        // A cycle, or holders waiting for another lock of the same class: a
        // loop below the boxes, wide enough to read, back up onto the target.
        const double spread = e.from == e.to ? a.width() * 0.3 : 8;
        start = QPointF(a.center().x() - (e.from == e.to ? spread : 0), a.bottom());
        end = QPointF(b.center().x() + spread, b.bottom());
        const double drop = rowGap() * 0.9;
        path.moveTo(start);
        path.cubicTo(start + QPointF(0, drop), end + QPointF(0, drop), end);
    }
    if (tip)
        *tip = end;
    return path;
}

int ChainView::nodeAt(QPointF pos) const
{
    for (size_t i = 0; i < graph_.nodes.size(); ++i)
        if (nodeRect(i).contains(pos))
            return int(i);
    return -1;
}

QString ChainView::nodeTip(size_t i) const
{
    const ChainGraph::Node& n = graph_.nodes[i];
    QString tip = QString::fromStdString(n.name);
    if (n.wait_out)
        tip += tr("\nits holders waited for other locks: %1 of waiters' wait behind them")
                   .arg(display::duration(double(n.wait_out)));
    if (n.wait_in)
        tip += tr("\nholders of other locks waited for it: %1 of wait explained")
                   .arg(display::duration(double(n.wait_in)));
    for (const ChainGraph::Edge& e : graph_.edges)
        if (e.from == i)
            tip += tr("\n  → %1%2: %3 of wait, %4 holder sample(s)")
                       .arg(QString::fromStdString(graph_.nodes[e.to].name),
                            e.to == i ? tr(" (another lock of this class)") : QString(),
                            display::duration(double(e.wait_ns)))
                       .arg(e.samples);
    if (!n.root_state.empty()) {
        tip += tr("\nroot of a chain: holders %1").arg(QString::fromStdString(n.root_state));
        for (size_t f = 0; f < n.root_frames.size() && f < 6; ++f)
            tip += QStringLiteral("\n    ") + QString::fromStdString(n.root_frames[f]);
    }
    return tip + tr("\nclick to select it in the table");
}

bool ChainView::event(QEvent* e)
{
    if (e->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(e);
        const int i = nodeAt(help->pos());
        if (i >= 0)
            QToolTip::showText(help->globalPos(), nodeTip(size_t(i)), this);
        else
            QToolTip::hideText();
        return true;
    }
    return QWidget::event(e);
}

void ChainView::mousePressEvent(QMouseEvent* e)
{
    const int i = nodeAt(e->position());
    if (i >= 0 && e->button() == Qt::LeftButton)
        emit lockClicked(QString::fromStdString(graph_.nodes[size_t(i)].name));
    QWidget::mousePressEvent(e);
}

void ChainView::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    const QPalette& pal = palette();
    p.fillRect(rect(), pal.base());
    if (graph_.empty()) {
        p.setPen(pal.color(QPalette::PlaceholderText));
        p.drawText(rect().adjusted(12, 12, -12, -12), Qt::AlignCenter | Qt::TextWordWrap,
                   tr("No wait chains: no sampled holder was itself waiting for a lock.\n"
                      "Holders are sampled at queued contentions on mutexes and rwsems "
                      "(record --holder-period)."));
        return;
    }
    p.setPen(pal.color(QPalette::PlaceholderText));
    p.drawText(QRectF(kMargin, 4, width() - 2 * kMargin, kTitleH), Qt::AlignLeft | Qt::AlignVCenter,
               tr("waiter's lock → the lock its holder waited for; width: wait explained"));

    const QColor edge_color = pal.color(QPalette::Text);
    for (const ChainGraph::Edge& e : graph_.edges) {
        const double w = edge_width(e.wait_ns, graph_.max_wait);
        QColor c = edge_color;
        c.setAlphaF(0.55);
        p.setPen(QPen(c, w, Qt::SolidLine, Qt::FlatCap));
        p.setBrush(Qt::NoBrush);
        QPointF end;
        const QPainterPath path = edgePath(e, &end);
        // The line stops short of the tip so its flat end hides in the head.
        const double head = 6 + w;
        const double stop = std::max(0.5, 1 - head * 0.7 / std::max(1.0, path.length()));
        QPainterPath shaft;
        shaft.moveTo(path.pointAtPercent(0));
        for (int k = 1; k <= 32; ++k)
            shaft.lineTo(path.pointAtPercent(stop * k / 32));
        p.drawPath(shaft);
        p.setPen(Qt::NoPen);
        p.setBrush(c);
        arrow_head(p, end, path.pointAtPercent(0.95), head);
        // The wait it explains, on the curve in the gap between the columns.
        const QPointF mid = path.pointAtPercent(0.5);
        const QString label = display::duration(double(e.wait_ns));
        const QFontMetrics fm(font());
        QRectF text_rect(0, 0, fm.horizontalAdvance(label) + 6, fm.height());
        text_rect.moveCenter(mid);
        p.fillRect(text_rect, pal.color(QPalette::Base));
        p.setPen(pal.color(QPalette::Text));
        p.drawText(text_rect, Qt::AlignCenter, label);
    }

    const QColor highlight = pal.color(QPalette::Highlight);
    for (size_t i = 0; i < graph_.nodes.size(); ++i) {
        const ChainGraph::Node& n = graph_.nodes[i];
        const QRectF r = nodeRect(i);
        const bool selected = !selected_.isEmpty() && selected_.toStdString() == n.name;
        p.setPen(QPen(selected ? highlight : pal.color(QPalette::Mid), selected ? 2.5 : 1));
        p.setBrush(selected ? highlight.lighter(185) : pal.color(QPalette::AlternateBase));
        p.drawRoundedRect(r, 5, 5);
        p.setPen(pal.color(QPalette::Text));
        QFont bold = font();
        bold.setBold(true);
        p.setFont(bold);
        const QFontMetrics fm(bold);
        p.drawText(r.adjusted(8, 4, -8, -kNodeH / 2), Qt::AlignLeft | Qt::AlignVCenter,
                   fm.elidedText(QString::fromStdString(n.name), Qt::ElideMiddle, int(r.width()) - 16));
        p.setFont(font());
        QString second;
        if (!n.root_state.empty())
            second = tr("root: %1").arg(QString::fromStdString(n.root_state));
        else if (n.wait_out) {
            // An arrow from here ends on another box, or loops back onto
            // this one when holders waited for another lock of this class.
            const bool elsewhere = std::any_of(graph_.edges.begin(), graph_.edges.end(),
                                               [&](const ChainGraph::Edge& e) { return e.from == i && e.to != i; });
            second = elsewhere ? tr("holders waited on →") : tr("holders waited on this class ↺");
        }
        p.setPen(pal.color(QPalette::PlaceholderText));
        p.drawText(r.adjusted(8, kNodeH / 2, -8, -4), Qt::AlignLeft | Qt::AlignVCenter,
                   QFontMetrics(font()).elidedText(second, Qt::ElideRight, int(r.width()) - 16));
    }
}

}  // namespace lockscope::gui
