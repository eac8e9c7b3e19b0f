#include "session/loader.h"

#include "core/error.h"

#include <QtConcurrent/QtConcurrentRun>

#include <exception>

namespace lockscope::gui {

LoadResult load_snapshot(const QString& path, SessionSnapshot::Level level)
{
    LoadResult r;
    r.path = path;
    try {
        r.snapshot = build_snapshot(path, level);
    } catch (const std::exception& e) {
        r.error = QString::fromStdString(e.what());
    } catch (...) {
        r.error = QStringLiteral("'%1' could not be read.").arg(path);
    }
    return r;
}

SessionLoader::SessionLoader(QObject* parent) : QObject(parent)
{
    qRegisterMetaType<SnapshotPtr>();
}

SessionLoader::~SessionLoader() = default;

void SessionLoader::load(const QString& path, bool summary_first)
{
    const quint64 generation = ++generation_;
    if (pending_++ == 0)
        emit busyChanged(true);
    start(path, summary_first ? SessionSnapshot::Level::Intervals : SessionSnapshot::Level::Detailed, generation);
}

void SessionLoader::start(const QString& path, SessionSnapshot::Level level, quint64 generation)
{
    using Level = SessionSnapshot::Level;
    auto* watcher = new QFutureWatcher<LoadResult>(this);
    connect(watcher, &QFutureWatcher<LoadResult>::finished, this, [this, watcher, generation, level, path] {
        LoadResult r = watcher->result();
        watcher->deleteLater();
        const bool detailed = level == Level::Detailed;
        if (generation == generation_ && r.snapshot && !detailed) {
            // Show this step now; the next one loads in the background.
            emit loaded(r.snapshot);
            if (generation == generation_) {
                start(path, level == Level::Intervals ? Level::Totals : Level::Detailed, generation);
                return;  // still pending
            }
        }
        const bool current = generation == generation_;
        if (--pending_ == 0)
            emit busyChanged(false);
        if (!current || (r.snapshot && !detailed))
            return;  // superseded by a newer request
        if (r.snapshot)
            emit loaded(r.snapshot);
        else
            emit failed(r.path, r.error);
    });
    watcher->setFuture(QtConcurrent::run(load_snapshot, path, level));
}

}  // namespace lockscope::gui
