// The overview's key figures as a row of cards, fed by KeyFiguresModel.
#pragma once

#include <QAbstractItemModel>
#include <QWidget>

class QGridLayout;

namespace lockscope::gui {

class KeyFiguresView : public QWidget {
    Q_OBJECT
public:
    explicit KeyFiguresView(QWidget* parent = nullptr);
    void setModel(QAbstractItemModel* model);

private:
    void rebuild();

    QAbstractItemModel* model_ = nullptr;
    QGridLayout* grid_ = nullptr;
};

}  // namespace lockscope::gui
