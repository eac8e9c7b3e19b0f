#include "session/follower.h"

#include <QFileInfo>

namespace lockscope::gui {

SessionFollower::SessionFollower(QObject* parent) : QObject(parent)
{
    connect(&timer_, &QTimer::timeout, this, &SessionFollower::check);
    connect(&watcher_, &QFileSystemWatcher::fileChanged, this, &SessionFollower::check);
}

void SessionFollower::follow(const QString& path, int poll_ms)
{
    if (path == path_ && timer_.isActive())
        return;
    stop();
    path_ = path;
    last_signature_ = signature();
    for (const QString& f : {path, path + "-wal"})
        if (QFileInfo::exists(f))
            watcher_.addPath(f);
    timer_.start(poll_ms);
}

void SessionFollower::stop()
{
    timer_.stop();
    if (!watcher_.files().isEmpty())
        watcher_.removePaths(watcher_.files());
    path_.clear();
    last_signature_.clear();
}

QString SessionFollower::signature() const
{
    QString sig;
    for (const QString& f : {path_, path_ + "-wal"}) {
        QFileInfo info(f);
        sig += info.exists() ? QStringLiteral("%1:%2;").arg(info.size()).arg(info.lastModified().toMSecsSinceEpoch())
                             : QStringLiteral("-;");
    }
    return sig;
}

void SessionFollower::check()
{
    if (path_.isEmpty())
        return;
    // The log appears after the recorder's first commit; watch it from then.
    const QString wal = path_ + "-wal";
    if (!watcher_.files().contains(wal) && QFileInfo::exists(wal))
        watcher_.addPath(wal);
    QString sig = signature();
    if (sig == last_signature_)
        return;
    last_signature_ = sig;
    emit changed(path_);
}

}  // namespace lockscope::gui
