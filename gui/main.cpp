// lockscope-gui: parses the command line and opens the main window, or
// renders a page headless with --screenshot.
#include "views/main_window.h"
#include "views/screenshot.h"

#include "lockscope_version.h"

#include <QApplication>
#include <QCommandLineParser>

#include <cstdio>

int main(int argc, char** argv)
{
    // Screenshots need no display: pick the offscreen platform before Qt starts.
    for (int i = 1; i < argc; ++i)
        if (qstrcmp(argv[i], "--screenshot") == 0 && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
            qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("lockscope-gui"));
    QApplication::setOrganizationName(QStringLiteral("lockscope"));
    QApplication::setApplicationVersion(QStringLiteral(LOCKSCOPE_VERSION));

    QCommandLineParser parser;
    parser.setApplicationDescription(
        QStringLiteral("Dashboard for lockscope sessions. One FILE opens it (and follows it while it is\n"
                       "being recorded); two FILEs also compare them on the Diff page."));
    parser.addHelpOption();
    parser.addVersionOption();
    QCommandLineOption screenshot(QStringLiteral("screenshot"),
                                  QStringLiteral("Render a page to a PNG file without a display and exit."),
                                  QStringLiteral("OUT.png"));
    QCommandLineOption page(
        QStringLiteral("page"),
        QStringLiteral("Page to render: overview, locks, chains (the Locks page's wait-chain graph) or diff."),
        QStringLiteral("NAME"), QStringLiteral("overview"));
    parser.addOption(screenshot);
    parser.addOption(page);
    parser.addPositionalArgument(QStringLiteral("FILE"), QStringLiteral("Session files."), QStringLiteral("[FILE…]"));
    parser.process(app);
    const QStringList files = parser.positionalArguments();

    if (parser.isSet(screenshot)) {
        lockscope::gui::ScreenshotRequest request;
        request.output = parser.value(screenshot);
        request.page = parser.value(page);
        request.files = files;
        return lockscope::gui::render_screenshot(request);
    }
    if (parser.isSet(page) && files.isEmpty()) {
        std::fprintf(stderr, "lockscope-gui: --page needs a session file\n");
        return 2;
    }

    lockscope::gui::MainWindow window;
    window.show();
    if (!files.isEmpty())
        window.openSession(files.first());
    if (files.size() >= 2)
        window.openDiff(files[0], files[1]);
    else if (parser.value(page) == QLatin1String("locks"))
        window.showPage(lockscope::gui::MainWindow::Locks);
    return app.exec();
}
