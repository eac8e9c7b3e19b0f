// Follows a session that is still being recorded. The recorder appends to
// the SQLite write-ahead log, so the main file may not change for a long
// time: we watch both, and poll once a second because file-change
// notifications are not delivered on every file system.
#pragma once

#include <QDateTime>
#include <QFileSystemWatcher>
#include <QObject>
#include <QString>
#include <QTimer>

namespace lockscope::gui {

class SessionFollower : public QObject {
    Q_OBJECT
public:
    explicit SessionFollower(QObject* parent = nullptr);

    void follow(const QString& path, int poll_ms = 1000);
    void stop();
    bool following() const { return !path_.isEmpty(); }
    QString path() const { return path_; }

signals:
    // The file or its log changed since the last signal (or since follow()).
    void changed(const QString& path);

private:
    QString signature() const;
    void check();

    QString path_;
    QString last_signature_;
    QTimer timer_;
    QFileSystemWatcher watcher_;
};

}  // namespace lockscope::gui
