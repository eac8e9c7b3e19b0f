// Recently opened sessions, newest first, kept in QSettings.
#pragma once

#include <QStringList>

namespace lockscope::gui {

class RecentFiles {
public:
    static constexpr int kMax = 10;
    static QStringList list();             // existing files only
    static void add(const QString& path);  // moves it to the front
    static void clear();
};

}  // namespace lockscope::gui
