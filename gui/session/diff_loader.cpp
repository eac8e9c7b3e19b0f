#include "session/diff_loader.h"

#include "core/storage/session_store.h"

#include <QFileInfo>
#include <QtConcurrent/QtConcurrentRun>

#include <exception>

namespace lockscope::gui {
namespace {

// Runs `compare`, turning any exception into the one sentence the page shows.
DiffLoadResult guarded(const std::function<DiffPtr()>& compare, const QString& fallback)
{
    DiffLoadResult r;
    try {
        r.diff = compare();
    } catch (const std::exception& e) {
        r.error = QString::fromStdString(e.what());
    } catch (...) {
        r.error = fallback;
    }
    return r;
}

}  // namespace

DiffLoadResult load_diff(const QString& path_a, const QString& path_b)
{
    return guarded(
        [&] {
            Session a = load_session(path_a.toStdString());
            Session b = load_session(path_b.toStdString());
            DiffOptions options;
            options.label_a = QFileInfo(path_a).fileName().toStdString();
            options.label_b = QFileInfo(path_b).fileName().toStdString();
            auto snap = std::make_shared<DiffSnapshot>();
            snap->path_a = path_a;
            snap->path_b = path_b;
            snap->result = diff_sessions(a, b, options);
            return DiffPtr(std::move(snap));
        },
        QStringLiteral("The sessions could not be compared."));
}

DiffLoadResult load_fleet_diff(const fleet::FleetOptions& options)
{
    return guarded(
        [&] {
            auto snap = std::make_shared<DiffSnapshot>();
            snap->result = fleet::diff_fleet(options);
            snap->fleet = options;
            snap->fleet->cancelled = nullptr;  // the flag belongs to the loader
            return DiffPtr(std::move(snap));
        },
        QStringLiteral("The groups of hosts could not be compared."));
}

DiffLoader::DiffLoader(QObject* parent) : QObject(parent)
{
    qRegisterMetaType<DiffPtr>();
}

DiffLoader::~DiffLoader()
{
    // A fleet query still running stops at its next progress callback
    // instead of holding the thread pool (and the exit) for minutes.
    if (cancel_flag_)
        cancel_flag_->store(true);
}

void DiffLoader::load(const QString& path_a, const QString& path_b)
{
    if (cancel_flag_)
        cancel_flag_->store(true);  // a fleet query under way is no longer wanted
    run([path_a, path_b] { return load_diff(path_a, path_b); });
}

void DiffLoader::loadFleet(fleet::FleetOptions options)
{
    if (cancel_flag_)
        cancel_flag_->store(true);  // a newer request replaces the one under way
    auto flag = std::make_shared<std::atomic<bool>>(false);
    cancel_flag_ = flag;
    run([options, flag]() mutable {
        options.cancelled = flag.get();
        return load_fleet_diff(options);
    });
}

void DiffLoader::cancel()
{
    if (!busy())
        return;
    if (cancel_flag_)
        cancel_flag_->store(true);
    ++generation_;  // whatever is under way is no longer wanted
    emit cancelled();
}

void DiffLoader::run(std::function<DiffLoadResult()> work)
{
    const quint64 generation = ++generation_;
    if (pending_++ == 0)
        emit busyChanged(true);
    auto* watcher = new QFutureWatcher<DiffLoadResult>(this);
    connect(watcher, &QFutureWatcher<DiffLoadResult>::finished, this, [this, watcher, generation] {
        DiffLoadResult r = watcher->result();
        watcher->deleteLater();
        if (--pending_ == 0)
            emit busyChanged(false);
        if (generation != generation_)
            return;
        if (r.diff)
            emit loaded(r.diff);
        else
            emit failed(r.error);
    });
    watcher->setFuture(QtConcurrent::run(std::move(work)));
}

}  // namespace lockscope::gui
