// Loads two sessions and compares them with the core diff engine, off the
// UI thread, like SessionLoader.
#pragma once

#include "core/analysis/diff.h"

#include <QFutureWatcher>
#include <QMetaType>
#include <QObject>
#include <QString>

#include <memory>

namespace lockscope::gui {

struct DiffSnapshot {
    QString path_a, path_b;
    DiffResult result;
};
using DiffPtr = std::shared_ptr<const DiffSnapshot>;

struct DiffLoadResult {
    DiffPtr diff;
    QString error;
};

// Never throws. Sessions are labelled by file name in the engine's messages.
DiffLoadResult load_diff(const QString& path_a, const QString& path_b);

class DiffLoader : public QObject {
    Q_OBJECT
public:
    explicit DiffLoader(QObject* parent = nullptr);
    void load(const QString& path_a, const QString& path_b);
    bool busy() const { return pending_ > 0; }

signals:
    void loaded(lockscope::gui::DiffPtr diff);
    void failed(const QString& message);

private:
    quint64 generation_ = 0;
    int pending_ = 0;
};

}  // namespace lockscope::gui

Q_DECLARE_METATYPE(lockscope::gui::DiffPtr)
