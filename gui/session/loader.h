// Loads sessions off the UI thread and hands the snapshot over by signal.
// Only the newest request is delivered: a reload that finishes after a
// newer open is dropped, so the pages never flip back to an older file.
#pragma once

#include "session/snapshot.h"

#include <QFutureWatcher>
#include <QObject>
#include <QString>

namespace lockscope::gui {

struct LoadResult {
    SnapshotPtr snapshot;  // null on failure
    QString path;
    QString error;  // one sentence for the user
};

// Never throws: every failure becomes LoadResult::error.
LoadResult load_snapshot(const QString& path, SessionSnapshot::Level level = SessionSnapshot::Level::Detailed);

class SessionLoader : public QObject {
    Q_OBJECT
public:
    explicit SessionLoader(QObject* parent = nullptr);
    ~SessionLoader() override;

    // With `summary_first`, the snapshot comes in steps (Intervals, then
    // Totals, then Detailed; see SessionSnapshot::Level), each from its own
    // background load started when the previous one is delivered; busy()
    // stays true until the detailed one. Without it (a live reload), only
    // the detailed snapshot.
    void load(const QString& path, bool summary_first = true);
    bool busy() const { return pending_ > 0; }

signals:
    void loaded(lockscope::gui::SnapshotPtr snapshot);
    void failed(const QString& path, const QString& message);
    void busyChanged(bool busy);

private:
    void start(const QString& path, SessionSnapshot::Level level, quint64 generation);

    quint64 generation_ = 0;
    int pending_ = 0;
};

}  // namespace lockscope::gui
