// Time to first paint of a one-hour session at 1 s intervals with a few
// hundred locks (a benchmark, not a test: it prints timings, it asserts
// nothing about them).
//
//   lockscope-gui-open-bench [--locks N] [--intervals N] [--keep FILE]
//
// The session is generated through SessionWriter; --keep reuses (or keeps)
// it between runs, since writing an hour of intervals takes a while.
//
// The GUI opens a file in steps (SessionSnapshot::Level): the overview
// paints from the intervals alone, the locks table follows with per-run
// lock totals, the per-lock time series with the full rows; each step's
// time is printed.
#include "core/storage/session_store.h"
#include "session/snapshot.h"
#include "test_session.h"
#include "views/locks_page.h"
#include "views/main_window.h"
#include "views/overview_page.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QTemporaryDir>

#include <cstdio>

namespace {

// Records when the overview first paints after the session arrived.
class PaintWatch : public QObject {
public:
    explicit PaintWatch(QElapsedTimer* clock) : clock_(clock) {}
    bool armed = false;
    bool seen = false;
    qint64 painted_ms = -1;

protected:
    bool eventFilter(QObject* watched, QEvent* event) override
    {
        if (armed && !seen && event->type() == QEvent::Paint) {
            seen = true;
            // Children (the charts) paint in the same flush; the queued call
            // runs once the whole frame is done.
            QMetaObject::invokeMethod(
                qApp,
                [this] {
                    painted_ms = clock_->elapsed();
                    QCoreApplication::quit();
                },
                Qt::QueuedConnection);
        }
        return QObject::eventFilter(watched, event);
    }

private:
    QElapsedTimer* clock_;
};

}  // namespace

int main(int argc, char** argv)
{
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    lockscope::gui::testing::SessionShape shape;
    shape.runs = 1;
    shape.intervals = 3600;
    shape.locks = 300;
    QString keep;
    const QStringList args = app.arguments();
    for (int i = 1; i + 1 < args.size(); i += 2) {
        if (args[i] == "--locks")
            shape.locks = args[i + 1].toInt();
        else if (args[i] == "--intervals")
            shape.intervals = args[i + 1].toInt();
        else if (args[i] == "--keep")
            keep = args[i + 1];
    }
    QTemporaryDir dir;
    const QString path = keep.isEmpty() ? dir.filePath("hour.lockscope") : keep;
    if (!QFileInfo::exists(path)) {
        QElapsedTimer gen;
        gen.start();
        std::printf("generating %d intervals × %d locks … ", shape.intervals, shape.locks);
        std::fflush(stdout);
        lockscope::gui::testing::write_session(path, shape);
        std::printf("%.1f s, %.1f MB\n", gen.elapsed() / 1000.0, QFileInfo(path).size() / 1e6);
    }

    lockscope::gui::MainWindow window(false);
    window.resize(1280, 800);
    window.show();
    QApplication::processEvents();  // the empty window is not what we measure

    QElapsedTimer clock;
    PaintWatch watch(&clock);
    qint64 shown_ms = -1, totals_ms = -1, loaded_ms = -1;
    // The first snapshot on screen (the fast summary) arms the paint watch;
    // the detailed one (per-lock time series) follows in the background.
    QObject::connect(&window, &lockscope::gui::MainWindow::sessionShown, [&] {
        if (window.snapshot()->level == lockscope::gui::SessionSnapshot::Level::Totals)
            totals_ms = clock.elapsed();
        if (shown_ms >= 0)
            return;
        shown_ms = clock.elapsed();
        watch.armed = true;
        window.overview()->update();
    });
    QObject::connect(&window, &lockscope::gui::MainWindow::sessionLoaded, [&] { loaded_ms = clock.elapsed(); });
    QObject::connect(&window, &lockscope::gui::MainWindow::sessionFailed, [&](const QString& m) {
        std::fprintf(stderr, "failed: %s\n", qPrintable(m));
        app.exit(1);
    });
    window.overview()->installEventFilter(&watch);
    clock.start();
    window.openSession(path);
    if (app.exec() != 0)
        return 1;
    std::printf("first snapshot (intervals, no lock rows) load + roll-up: %lld ms\n", (long long)shown_ms);
    std::printf("time to first paint of the overview: %lld ms\n", (long long)watch.painted_ms);
    // The detail (per-lock time series) loads in the background after the paint.
    QElapsedTimer wait;
    wait.start();
    while (loaded_ms < 0 && wait.elapsed() < 120000)
        QCoreApplication::processEvents(QEventLoop::WaitForMoreEvents, 50);
    std::printf("per-lock totals (locks table) on screen: %lld ms\n", (long long)totals_ms);
    std::printf("detailed snapshot (time series) on screen: %lld ms\n", (long long)loaded_ms);

    // Selecting the top lock on the locks page (computed on the UI thread).
    window.showPage(lockscope::gui::MainWindow::Locks);
    QElapsedTimer select;
    select.start();
    window.locks()->selectFirstRow();
    QApplication::processEvents();
    std::printf("select the top lock (details + charts): %lld ms\n", (long long)select.elapsed());

    // Where the load time goes: reading the file vs rolling it up.
    QElapsedTimer phase;
    phase.start();
    lockscope::LoadOptions summary_only;
    summary_only.lock_intervals = false;
    auto summary = std::make_shared<lockscope::Session>(lockscope::load_session(path.toStdString(), summary_only));
    const qint64 summary_ms = phase.restart();
    lockscope::gui::build_snapshot(path, summary, lockscope::gui::SessionSnapshot::Level::Totals);
    std::printf("  summary: load_session: %lld ms (%zu per-run lock rows), roll-up: %lld ms\n", (long long)summary_ms,
                summary->lock_intervals.size(), (long long)phase.restart());
    auto session = std::make_shared<lockscope::Session>(lockscope::load_session(path.toStdString()));
    const qint64 read_ms = phase.restart();
    auto snapshot = lockscope::gui::build_snapshot(path, session);
    std::printf("  of which load_session: %lld ms (%zu per-lock interval rows), roll-up: %lld ms\n", (long long)read_ms,
                session->lock_intervals.size(), (long long)phase.elapsed());
    return 0;
}
