// How the pages lay out their panes: one way to split a page and to frame
// it, so that the pages resize and sit in the window alike.
#pragma once

#include <QList>
#include <QSplitter>
#include <QVBoxLayout>

#include <initializer_list>

namespace lockscope::gui {

// A splitter of `panes`, in order, at `sizes` in pixels (none: Qt shares
// the space out).
inline QSplitter* split_panes(Qt::Orientation orientation, std::initializer_list<QWidget*> panes, QWidget* parent,
                              const QList<int>& sizes = {})
{
    auto* split = new QSplitter(orientation, parent);
    for (QWidget* pane : panes)
        split->addWidget(pane);
    if (!sizes.isEmpty())
        split->setSizes(sizes);
    return split;
}

// A page's own layout, its content 8 pixels in from the window's edges.
inline QVBoxLayout* page_layout(QWidget* page)
{
    auto* layout = new QVBoxLayout(page);
    layout->setContentsMargins(8, 8, 8, 8);
    return layout;
}

}  // namespace lockscope::gui
