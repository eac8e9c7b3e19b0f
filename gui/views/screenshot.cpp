#include "views/screenshot.h"

#include "views/holder_tab.h"
#include "views/locks_page.h"

#include <QTabWidget>
#include "views/main_window.h"

#include <QApplication>
#include <QEventLoop>
#include <QPixmap>
#include <QStringList>
#include <QTimer>

#include <cstdio>

namespace lockscope::gui {
namespace {

// Runs the event loop until `signal` fires or the error signal or the timeout.
template <typename Ok, typename Fail>
QString wait_for(MainWindow& w, Ok ok, Fail fail, int timeout_ms)
{
    QEventLoop loop;
    QString error;
    QObject::connect(&w, ok, &loop, &QEventLoop::quit);
    QObject::connect(&w, fail, &loop, [&](const QString& message) {
        error = message;
        loop.quit();
    });
    QTimer::singleShot(timeout_ms, &loop, [&] {
        error = QStringLiteral("timed out after %1 s").arg(timeout_ms / 1000);
        loop.quit();
    });
    loop.exec();
    return error;
}

}  // namespace

// The diff page over a fleet comparison: no session to open first.
QString prepare_fleet_diff(MainWindow& w, const fleet::FleetRequest& request, int timeout_ms)
{
    w.resize(1280, 800);
    w.show();
    w.openFleetDiff(request);
    return wait_for(w, &MainWindow::diffLoaded, &MainWindow::diffFailed, timeout_ms);
}

QString prepare_page(MainWindow& w, const ScreenshotRequest& r, int timeout_ms)
{
    const bool diff = r.page == QLatin1String("diff");
    if (r.fleet && !diff)
        return QStringLiteral("--prometheus renders the diff page only: add --page diff");
    if (r.fleet) {
        if (QString error = prepare_fleet_diff(w, *r.fleet, timeout_ms); !error.isEmpty())
            return error;
        w.showPage(MainWindow::Diff);
        for (int i = 0; i < 5; ++i)
            QApplication::processEvents();
        return {};
    }
    if (r.files.isEmpty() || (diff && r.files.size() < 2))
        return diff ? QStringLiteral("the diff page needs two session files") : QStringLiteral("no session file given");
    w.resize(1280, 800);
    w.show();
    w.openSession(r.files.first());
    QString error = wait_for(w, &MainWindow::sessionLoaded, &MainWindow::sessionFailed, timeout_ms);
    if (!error.isEmpty())
        return error;
    if (diff) {
        w.openDiff(r.files[0], r.files[1]);
        error = wait_for(w, &MainWindow::diffLoaded, &MainWindow::diffFailed, timeout_ms);
        if (!error.isEmpty())
            return error;
    }
    const bool locks =
        r.page == QLatin1String("locks") || r.page == QLatin1String("chains") || r.page == QLatin1String("holders");
    w.showPage(diff ? MainWindow::Diff : locks ? MainWindow::Locks : MainWindow::Overview);
    if (locks)
        w.locks()->selectFirstRow();
    if (r.page == QLatin1String("chains"))  // the Locks page with its Wait chains tab open
        w.locks()->detailTabs()->setCurrentIndex(w.locks()->chainsTab());
    if (r.page == QLatin1String("holders"))  // the Locks page with its Holders tab open
        w.locks()->detailTabs()->setCurrentWidget(w.locks()->holderTab());
    // Let layouts settle and charts lay out their plot areas.
    for (int i = 0; i < 5; ++i)
        QApplication::processEvents();
    return {};
}

int render_screenshot(const ScreenshotRequest& r)
{
    static const QStringList pages = {"overview", "locks", "chains", "holders", "diff"};
    if (!pages.contains(r.page)) {
        std::fprintf(stderr, "lockscope-gui: unknown page '%s': use overview, locks, chains, holders or diff\n",
                     qPrintable(r.page));
        return 2;
    }
    if (r.fleet && r.page != QLatin1String("diff")) {
        std::fprintf(stderr, "lockscope-gui: --prometheus renders the diff page only: add --page diff\n");
        return 2;
    }
    MainWindow w(false);
    const QString error = prepare_page(w, r);
    if (!error.isEmpty()) {
        std::fprintf(stderr, "lockscope-gui: %s\n", qPrintable(error));
        return 1;
    }
    if (!w.grab().save(r.output)) {
        std::fprintf(stderr, "lockscope-gui: cannot write '%s'\n", qPrintable(r.output));
        return 1;
    }
    return 0;
}

}  // namespace lockscope::gui
