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
// scrolls. Gaps between columns leave room for the wait labels.
constexpr double kMinNodeW = 130, kMaxNodeW = 220, kNodeH = 46, kMinGapX = 76, kMaxGapX = 160, kGapY = 22, kMargin = 16,
                 kTitleH = 20;

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

QSize ChainView::sizeHint() const
{
    const int gaps = std::max(0, graph_.columns - 1);
    // Room below the last row for a cycle's loop.
    return QSize(int(2 * kMargin + graph_.columns * kMinNodeW + gaps * kMinGapX),
                 int(2 * kMargin + kTitleH + graph_.rows * kNodeH + std::max(0, graph_.rows - 1) * kGapY + 2 * kGapY));
}

QRectF ChainView::nodeRect(size_t i) const
{
    const ChainGraph::Node& n = graph_.nodes[i];
    const int columns = std::max(1, graph_.columns);
    const double room = width() - 2 * kMargin;
    const double node_w = std::clamp((room - (columns - 1) * kMinGapX) / columns, kMinNodeW, kMaxNodeW);
    const double gap = columns > 1 ? std::clamp((room - columns * node_w) / (columns - 1), kMinGapX, kMaxGapX) : 0;
    return QRectF(kMargin + n.column * (node_w + gap), kMargin + kTitleH + n.row * (kNodeH + kGapY), node_w, kNodeH);
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
            tip += tr("\n  → %1: %2 of wait, %3 holder sample(s)")
                       .arg(QString::fromStdString(graph_.nodes[e.to].name), display::duration(double(e.wait_ns)))
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
        const QRectF a = nodeRect(e.from), b = nodeRect(e.to);
        const double w = edge_width(e.wait_ns, graph_.max_wait);
        QColor c = edge_color;
        c.setAlphaF(0.55);
        p.setPen(QPen(c, w, Qt::SolidLine, Qt::FlatCap));
        p.setBrush(Qt::NoBrush);
        QPointF start, end;
        QPainterPath path;
        if (!e.back && b.left() > a.right()) {
            start = QPointF(a.right(), a.center().y());
            end = QPointF(b.left() - 2, b.center().y());
            const double dx = (end.x() - start.x()) / 2;
            path.moveTo(start);
            path.cubicTo(start + QPointF(dx, 0), end - QPointF(dx, 0), end);
        } else {
            // A cycle (or same column): loop below the boxes.
            start = QPointF(a.center().x(), a.bottom());
            end = QPointF(b.center().x() + 8, b.bottom() + 2);
            const double drop = kGapY * 1.6;
            path.moveTo(start);
            path.cubicTo(start + QPointF(0, drop), end + QPointF(0, drop), end);
        }
        p.drawPath(path);
        p.setPen(Qt::NoPen);
        p.setBrush(c);
        const QPointF before = path.pointAtPercent(0.95);
        arrow_head(p, end, before, 6 + w);
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
        else if (n.wait_out)
            second = tr("holders waited on →");
        p.setPen(pal.color(QPalette::PlaceholderText));
        p.drawText(r.adjusted(8, kNodeH / 2, -8, -4), Qt::AlignLeft | Qt::AlignVCenter,
                   QFontMetrics(font()).elidedText(second, Qt::ElideRight, int(r.width()) - 16));
    }
}

}  // namespace lockscope::gui
