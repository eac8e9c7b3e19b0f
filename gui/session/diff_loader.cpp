#include "session/diff_loader.h"

#include "core/storage/session_store.h"

#include <QFileInfo>
#include <QtConcurrent/QtConcurrentRun>

#include <exception>

namespace lockscope::gui {

DiffLoadResult load_diff(const QString& path_a, const QString& path_b)
{
    DiffLoadResult r;
    try {
        Session a = load_session(path_a.toStdString());
        Session b = load_session(path_b.toStdString());
        DiffOptions options;
        options.label_a = QFileInfo(path_a).fileName().toStdString();
        options.label_b = QFileInfo(path_b).fileName().toStdString();
        auto snap = std::make_shared<DiffSnapshot>();
        snap->path_a = path_a;
        snap->path_b = path_b;
        snap->result = diff_sessions(a, b, options);
        r.diff = std::move(snap);
    } catch (const std::exception& e) {
        r.error = QString::fromStdString(e.what());
    } catch (...) {
        r.error = QStringLiteral("The sessions could not be compared.");
    }
    return r;
}

DiffLoader::DiffLoader(QObject* parent) : QObject(parent)
{
    qRegisterMetaType<DiffPtr>();
}

void DiffLoader::load(const QString& path_a, const QString& path_b)
{
    const quint64 generation = ++generation_;
    ++pending_;
    auto* watcher = new QFutureWatcher<DiffLoadResult>(this);
    connect(watcher, &QFutureWatcher<DiffLoadResult>::finished, this, [this, watcher, generation] {
        DiffLoadResult r = watcher->result();
        watcher->deleteLater();
        --pending_;
        if (generation != generation_)
            return;
        if (r.diff)
            emit loaded(r.diff);
        else
            emit failed(r.error);
    });
    watcher->setFuture(QtConcurrent::run(load_diff, path_a, path_b));
}

}  // namespace lockscope::gui
