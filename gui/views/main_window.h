// The main window: pages in tabs, opening (command line, dialog, drag and
// drop, recent files), live follow and the status line.
#pragma once

#include "session/diff_loader.h"
#include "session/snapshot.h"

#include <QMainWindow>

class QLabel;
class QMenu;
class QTabWidget;

namespace lockscope::gui {

class DiffLoader;
class DiffPage;
class LocksPage;
class OverviewPage;
class SessionFollower;
class SessionLoader;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    enum Page { Overview, Locks, Diff };

    // `interactive`: failures also raise a message box (off for screenshots).
    explicit MainWindow(bool interactive = true, QWidget* parent = nullptr);
    ~MainWindow() override;

    void openSession(const QString& path);
    void openDiff(const QString& path_a, const QString& path_b);
    // Compares two groups of hosts in Prometheus on the Diff page; a request
    // the CLI would refuse is shown there as its sentence.
    void openFleetDiff(const fleet::FleetRequest& request);
    void showPage(Page page);

    OverviewPage* overview() const { return overview_; }
    LocksPage* locks() const { return locks_; }
    DiffPage* diff() const { return diff_; }
    QTabWidget* tabs() const { return tabs_; }
    const SnapshotPtr& snapshot() const { return snapshot_; }
    SessionFollower* follower() const { return follower_; }

signals:
    // Every snapshot put on the pages, the fast summary of a newly opened
    // file included (first paint).
    void sessionShown();
    // The complete snapshot (per-lock time series included) is on the pages.
    void sessionLoaded();
    void sessionFailed(const QString& message);
    void diffLoaded();
    void diffFailed(const QString& message);

protected:
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    void buildMenus();
    void rebuildRecentMenu();
    void onLoaded(const SnapshotPtr& snapshot);
    void onFailed(const QString& path, const QString& message);
    void openDialog();
    void compareDialog();
    void fleetDialog();

    bool interactive_;
    QTabWidget* tabs_;
    OverviewPage* overview_;
    LocksPage* locks_;
    DiffPage* diff_;
    SessionLoader* loader_;
    DiffLoader* diff_loader_;
    SessionFollower* follower_;
    QMenu* recent_menu_ = nullptr;
    QLabel* live_label_;
    SnapshotPtr snapshot_;
    QString current_path_;
    bool reload_pending_ = false;
    fleet::FleetRequest last_fleet_;
};

}  // namespace lockscope::gui
