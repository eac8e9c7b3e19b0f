// Compares two sessions, or two groups of hosts in Prometheus, with the core
// diff engine, off the UI thread, like SessionLoader. Both kinds of diff
// reach the diff page as one DiffSnapshot.
#pragma once

#include "core/analysis/diff.h"
#include "fleet/fleet_diff.h"

#include <QFutureWatcher>
#include <QMetaType>
#include <QObject>
#include <QString>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>

namespace lockscope::gui {

struct DiffSnapshot {
    QString path_a, path_b;                    // a session diff: the two files
    std::optional<fleet::FleetOptions> fleet;  // a fleet diff: what was asked of Prometheus
    DiffResult result;
};
using DiffPtr = std::shared_ptr<const DiffSnapshot>;

struct DiffLoadResult {
    DiffPtr diff;
    QString error;
};

// Never throws. Sessions are labelled by file name in the engine's messages.
DiffLoadResult load_diff(const QString& path_a, const QString& path_b);
// Never throws; `options.cancelled` may stop it.
DiffLoadResult load_fleet_diff(const fleet::FleetOptions& options);

class DiffLoader : public QObject {
    Q_OBJECT
public:
    explicit DiffLoader(QObject* parent = nullptr);
    ~DiffLoader() override;
    void load(const QString& path_a, const QString& path_b);
    // `options.cancelled` is the loader's own: cancel() sets it.
    void loadFleet(fleet::FleetOptions options);
    // Stops the fleet query under way (its HTTP request is abandoned) and
    // drops whatever diff is still being computed; emits cancelled().
    void cancel();
    bool busy() const { return pending_ > 0; }

signals:
    void loaded(lockscope::gui::DiffPtr diff);
    void failed(const QString& message);
    void cancelled();
    void busyChanged(bool busy);

private:
    void run(std::function<DiffLoadResult()> work);

    quint64 generation_ = 0;
    int pending_ = 0;
    // One flag per fleet query; a cancelled query keeps its own until it ends.
    std::shared_ptr<std::atomic<bool>> cancel_flag_;
};

}  // namespace lockscope::gui

Q_DECLARE_METATYPE(lockscope::gui::DiffPtr)
