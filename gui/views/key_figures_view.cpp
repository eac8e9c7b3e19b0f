#include "views/key_figures_view.h"

#include "models/key_figures_model.h"

#include <QFrame>
#include <QGridLayout>
#include <QLabel>
#include <QVBoxLayout>

namespace lockscope::gui {

KeyFiguresView::KeyFiguresView(QWidget* parent) : QWidget(parent)
{
    grid_ = new QGridLayout(this);
    grid_->setContentsMargins(0, 0, 0, 0);
    grid_->setSpacing(6);
}

void KeyFiguresView::setModel(QAbstractItemModel* model)
{
    if (model_)
        disconnect(model_, nullptr, this, nullptr);
    model_ = model;
    connect(model_, &QAbstractItemModel::modelReset, this, &KeyFiguresView::rebuild);
    connect(model_, &QAbstractItemModel::dataChanged, this, &KeyFiguresView::rebuild);
    rebuild();
}

void KeyFiguresView::rebuild()
{
    while (QLayoutItem* item = grid_->takeAt(0)) {
        delete item->widget();
        delete item;
    }
    if (!model_)
        return;
    const int rows = model_->rowCount();
    const int per_line = 6;  // two lines of six cards fit 1280 px
    for (int r = 0; r < rows; ++r) {
        auto* card = new QFrame(this);
        card->setObjectName(QStringLiteral("keyFigure"));
        card->setFrameShape(QFrame::StyledPanel);
        const bool alert = model_->index(r, 0).data(KeyFiguresModel::AlertRole).toBool();
        card->setStyleSheet(alert ? QStringLiteral("#keyFigure { background: #fdecea; border: 1px solid #c62828; }")
                                  : QStringLiteral("#keyFigure { background: #f6f8fa; border: 1px solid #d0d7de; }"));
        card->setToolTip(model_->index(r, 0).data(Qt::ToolTipRole).toString());
        auto* box = new QVBoxLayout(card);
        box->setContentsMargins(10, 6, 10, 6);
        box->setSpacing(0);
        auto* label = new QLabel(model_->index(r, KeyFiguresModel::Label).data().toString(), card);
        label->setStyleSheet(QStringLiteral("color: #57606a;"));
        auto* value = new QLabel(model_->index(r, KeyFiguresModel::Value).data().toString(), card);
        QFont f = value->font();
        f.setPointSizeF(f.pointSizeF() * 1.45);
        f.setBold(true);
        value->setFont(f);
        value->setTextInteractionFlags(Qt::TextSelectableByMouse);
        if (alert)
            value->setStyleSheet(QStringLiteral("color: #c62828;"));
        auto* detail = new QLabel(model_->index(r, KeyFiguresModel::Detail).data().toString(), card);
        detail->setStyleSheet(QStringLiteral("color: #57606a;"));
        // Title and detail wrap, so six cards fit a line at 1280 px.
        label->setWordWrap(true);
        detail->setWordWrap(true);
        for (QLabel* l : {label, value, detail})
            box->addWidget(l);
        grid_->addWidget(card, r / per_line, r % per_line);
    }
}

}  // namespace lockscope::gui
