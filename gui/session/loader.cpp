#include "session/loader.h"

#include "core/error.h"

#include <QtConcurrent/QtConcurrentRun>

#include <exception>

namespace lockscope::gui {

LoadResult load_snapshot(const QString& path)
{
    LoadResult r;
    r.path = path;
    try {
        r.snapshot = build_snapshot(path);
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

void SessionLoader::load(const QString& path)
{
    const quint64 generation = ++generation_;
    if (pending_++ == 0)
        emit busyChanged(true);
    auto* watcher = new QFutureWatcher<LoadResult>(this);
    connect(watcher, &QFutureWatcher<LoadResult>::finished, this, [this, watcher, generation] {
        LoadResult r = watcher->result();
        watcher->deleteLater();
        if (--pending_ == 0)
            emit busyChanged(false);
        if (generation != generation_)
            return;  // superseded by a newer request
        if (r.snapshot)
            emit loaded(r.snapshot);
        else
            emit failed(r.path, r.error);
    });
    watcher->setFuture(QtConcurrent::run(load_snapshot, path));
}

}  // namespace lockscope::gui
