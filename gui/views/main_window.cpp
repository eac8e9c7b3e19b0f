#include "views/main_window.h"

#include "session/follower.h"
#include "session/loader.h"
#include "session/recent_files.h"
#include "views/diff_page.h"
#include "views/fleet_dialog.h"
#include "views/locks_page.h"
#include "views/overview_page.h"

#include <QAction>
#include <QApplication>
#include <QDateTime>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QShortcut>
#include <QStatusBar>
#include <QTabWidget>

namespace lockscope::gui {
namespace {
const char* const kSessionFilter = "lockscope sessions (*.lockscope *.db);;All files (*)";
}

MainWindow::MainWindow(bool interactive, QWidget* parent) : QMainWindow(parent), interactive_(interactive)
{
    setWindowTitle(tr("lockscope"));
    setAcceptDrops(true);
    tabs_ = new QTabWidget(this);
    tabs_->setDocumentMode(true);
    overview_ = new OverviewPage(this);
    locks_ = new LocksPage(this);
    diff_ = new DiffPage(this);
    tabs_->addTab(overview_, tr("&Overview"));
    tabs_->addTab(locks_, tr("&Locks"));
    tabs_->addTab(diff_, tr("&Diff"));
    setCentralWidget(tabs_);

    loader_ = new SessionLoader(this);
    diff_loader_ = new DiffLoader(this);
    follower_ = new SessionFollower(this);
    connect(loader_, &SessionLoader::loaded, this, &MainWindow::onLoaded);
    connect(loader_, &SessionLoader::failed, this, &MainWindow::onFailed);
    connect(loader_, &SessionLoader::busyChanged, this, [this](bool busy) {
        if (busy && !follower_->following())
            statusBar()->showMessage(tr("Loading…"));
        if (!busy && reload_pending_ && follower_->following()) {
            reload_pending_ = false;
            loader_->load(follower_->path(), false);
        }
    });
    // One load at a time: changes that land during a load fold into one
    // reload after it, so a slow disk cannot build a backlog.
    connect(follower_, &SessionFollower::changed, this, [this](const QString& path) {
        if (loader_->busy())
            reload_pending_ = true;
        else
            loader_->load(path, false);  // a live reload: no summary flash
    });
    connect(diff_loader_, &DiffLoader::loaded, this, [this](const DiffPtr& diff) {
        diff_->setDiff(diff);
        statusBar()->showMessage(
            diff->fleet
                ? tr("Compared %1 hosts with %2 hosts").arg(diff->result.runs_a).arg(diff->result.runs_b)
                : tr("Compared %1 with %2").arg(QFileInfo(diff->path_a).fileName(), QFileInfo(diff->path_b).fileName()),
            5000);
        emit diffLoaded();
    });
    connect(diff_loader_, &DiffLoader::failed, this, [this](const QString& message) {
        diff_->setError(message);
        statusBar()->showMessage(message);
        emit diffFailed(message);
    });
    connect(diff_loader_, &DiffLoader::cancelled, this, [this] {
        diff_->setBusy(false);
        diff_->notes()->setText(tr("The comparison was cancelled."));
        statusBar()->showMessage(tr("Cancelled"), 5000);
    });
    connect(diff_, &DiffPage::cancelRequested, diff_loader_, &DiffLoader::cancel);
    connect(diff_, &DiffPage::compareRequested, this, &MainWindow::openDiff);

    live_label_ = new QLabel(this);
    statusBar()->addPermanentWidget(live_label_);
    buildMenus();
    resize(1280, 800);
}

MainWindow::~MainWindow() = default;

void MainWindow::buildMenus()
{
    QMenu* file = menuBar()->addMenu(tr("&File"));
    file->addAction(tr("&Open…"), QKeySequence::Open, this, &MainWindow::openDialog);
    recent_menu_ = file->addMenu(tr("Open &Recent"));
    connect(recent_menu_, &QMenu::aboutToShow, this, &MainWindow::rebuildRecentMenu);
    file->addAction(tr("&Compare With…"), QKeySequence(tr("Ctrl+D")), this, &MainWindow::compareDialog);
    file->addAction(tr("Compare &Fleet from Prometheus…"), this, &MainWindow::fleetDialog);
    file->addAction(tr("Re&load"), QKeySequence::Refresh, this, [this] {
        if (!current_path_.isEmpty())
            loader_->load(current_path_, false);
    });
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, qApp, &QApplication::closeAllWindows);

    QMenu* view = menuBar()->addMenu(tr("&View"));
    const QString names[] = {tr("&Overview"), tr("&Locks"), tr("&Diff")};
    for (int i = 0; i < 3; ++i)
        view->addAction(names[i], QKeySequence(QStringLiteral("Ctrl+%1").arg(i + 1)), this,
                        [this, i] { showPage(Page(i)); });
    view->addSeparator();
    view->addAction(tr("&Find Lock"), QKeySequence::Find, this, [this] {
        showPage(Locks);
        locks_->focusFilter();
    });
}

void MainWindow::rebuildRecentMenu()
{
    recent_menu_->clear();
    const QStringList files = RecentFiles::list();
    for (const QString& f : files)
        recent_menu_->addAction(f, this, [this, f] { openSession(f); });
    if (files.isEmpty())
        recent_menu_->addAction(tr("(none)"))->setEnabled(false);
    else
        recent_menu_->addSeparator(), recent_menu_->addAction(tr("Clear"), [] { RecentFiles::clear(); });
}

void MainWindow::showPage(Page page)
{
    tabs_->setCurrentIndex(int(page));
}

void MainWindow::openSession(const QString& path)
{
    follower_->stop();
    current_path_ = path;
    loader_->load(path);
}

void MainWindow::openDiff(const QString& path_a, const QString& path_b)
{
    diff_->setBusy(true, tr("Comparing…"));
    diff_->setPaths(path_a, path_b);
    statusBar()->showMessage(tr("Comparing…"));
    diff_loader_->load(path_a, path_b);
    showPage(Diff);
}

void MainWindow::openFleetDiff(const fleet::FleetRequest& request)
{
    last_fleet_ = request;
    showPage(Diff);
    fleet::FleetOptions options;
    try {
        options = fleet::fleet_options(request, double(QDateTime::currentSecsSinceEpoch()));
    } catch (const std::exception& e) {
        const QString message = QString::fromStdString(e.what());
        diff_->setDiff(nullptr);
        diff_->setError(message);
        statusBar()->showMessage(message);
        emit diffFailed(message);
        return;
    }
    diff_->setFleet(options);
    const QString what = tr("Querying Prometheus at %1…").arg(QString::fromStdString(options.url));
    diff_->setBusy(true, what);
    statusBar()->showMessage(what);
    diff_loader_->loadFleet(options);
}

void MainWindow::onLoaded(const SnapshotPtr& snapshot)
{
    if (snapshot->path != current_path_)
        return;  // a reload of a file we have since left
    const bool first = !snapshot_ || snapshot_->path != snapshot->path;
    const size_t old_intervals = snapshot_ ? snapshot_->session->intervals.size() : 0;
    const bool was_summary = snapshot_ && !snapshot_->detailed();
    snapshot_ = snapshot;
    // A live poll that brought no new interval changes nothing on screen;
    // the detail that follows a summary always does.
    if (first || was_summary || snapshot->session->intervals.size() != old_intervals || !snapshot->recording) {
        overview_->setSnapshot(snapshot);
        locks_->setSnapshot(snapshot);
    }
    setWindowTitle(tr("%1 — lockscope").arg(QFileInfo(snapshot->path).fileName()));
    if (first)
        RecentFiles::add(snapshot->path);
    // A program's session with user-lock waits and no kernel contention
    // (the totals are final at every level) opens on its locks.
    if (first && snapshot->report.totals.counters.contentions == 0 &&
        snapshot->report.rows.size() > snapshot->user_rows_from) {
        showPage(Locks);
        locks_->selectFirstRow();
    }
    if (snapshot->recording) {
        follower_->follow(snapshot->path);
        live_label_->setText(tr("● live: %1 intervals").arg(snapshot->session->intervals.size()));
        live_label_->setStyleSheet(QStringLiteral("color: #c62828; font-weight: bold;"));
    } else {
        follower_->stop();
        live_label_->clear();
    }
    for (const std::string& w : snapshot->session->warnings)
        statusBar()->showMessage(QString::fromStdString(w));
    if (snapshot->session->warnings.empty())
        statusBar()->showMessage(tr("Opened %1").arg(QFileInfo(snapshot->path).fileName()), 5000);
    emit sessionShown();
    if (snapshot->detailed())
        emit sessionLoaded();
}

void MainWindow::onFailed(const QString& path, const QString& message)
{
    statusBar()->showMessage(message);
    if (follower_->following() && path == current_path_)
        return;  // mid-write hiccup while following: the next poll retries
    if (interactive_) {
        auto* box = new QMessageBox(QMessageBox::Warning, tr("Cannot open session"),
                                    tr("%1 cannot be opened.").arg(QFileInfo(path).fileName()), QMessageBox::Ok, this);
        box->setInformativeText(message);
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open();  // window-modal, does not block the event loop
    }
    emit sessionFailed(message);
}

void MainWindow::openDialog()
{
    const QString path = QFileDialog::getOpenFileName(this, tr("Open session"), QString(), tr(kSessionFilter));
    if (!path.isEmpty())
        openSession(path);
}

void MainWindow::compareDialog()
{
    QString a = current_path_;
    if (a.isEmpty())
        a = QFileDialog::getOpenFileName(this, tr("Session A (baseline)"), QString(), tr(kSessionFilter));
    if (a.isEmpty())
        return;
    const QString b = QFileDialog::getOpenFileName(this, tr("Compare %1 with…").arg(QFileInfo(a).fileName()),
                                                   QFileInfo(a).absolutePath(), tr(kSessionFilter));
    if (!b.isEmpty())
        openDiff(a, b);
}

void MainWindow::fleetDialog()
{
    auto* dialog = new FleetDialog(this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setRequest(last_fleet_);
    connect(dialog, &QDialog::accepted, this, [this, dialog] { openFleetDiff(dialog->request()); });
    dialog->open();  // window-modal, does not block the event loop
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event)
{
    if (event->mimeData()->hasUrls())
        event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event)
{
    QStringList files;
    for (const QUrl& url : event->mimeData()->urls())
        if (url.isLocalFile())
            files << url.toLocalFile();
    if (files.isEmpty())
        return;
    // One file opens; two are compared (and the first opened as A).
    openSession(files.first());
    if (files.size() >= 2)
        openDiff(files[0], files[1]);
    event->acceptProposedAction();
}

}  // namespace lockscope::gui
