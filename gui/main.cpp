// lockscope-gui: parses the command line and opens the main window, or
// renders a page headless with --screenshot.
#include "views/main_window.h"
#include "views/screenshot.h"

#include "lockscope_version.h"

#include <QApplication>
#include <QCommandLineParser>

#include <cstdio>
#include <optional>

namespace {

// --prometheus and its companions, in the spellings of `lockscope diff
// --prometheus`. The combination is checked by the same code as the CLI's
// (fleet_options) when the window opens it.
struct FleetFlags {
    QCommandLineOption url{QStringLiteral("prometheus"),
                           QStringLiteral("Compare two groups of hosts that this Prometheus (or Thanos, Mimir) "
                                          "scrapes, on the Diff page, instead of session files."),
                           QStringLiteral("URL")};
    QCommandLineOption a{QStringLiteral("a"),
                         QStringLiteral("With --prometheus: group A (baseline), label matchers on "
                                        "lockscope_build_info, e.g. kernel=\"6.1.0-47-amd64\". Also spelled --a, as "
                                        "lockscope diff spells it (and -b as --b)."),
                         QStringLiteral("SELECTOR")};
    QCommandLineOption b{QStringLiteral("b"), QStringLiteral("With --prometheus: group B, as --a."),
                         QStringLiteral("SELECTOR")};
    QCommandLineOption by{QStringLiteral("by"),
                          QStringLiteral("With --prometheus, instead of --a/--b: the two largest groups by this "
                                         "build-info label, the lower value as A."),
                          QStringLiteral("LABEL")};
    QCommandLineOption window{QStringLiteral("window"),
                              QStringLiteral("With --prometheus: the range compared (30m, 1h, 1d)."),
                              QStringLiteral("D"), QStringLiteral("1h")};
    QCommandLineOption end{QStringLiteral("end"),
                           QStringLiteral("With --prometheus: when the window ends (now, Unix seconds, "
                                          "2026-12-01T14:00:00Z)."),
                           QStringLiteral("T"), QStringLiteral("now")};
    QCommandLineOption top{QStringLiteral("top"),
                           QStringLiteral("With --prometheus: locks compared one by one, by wait; the rest "
                                          "are summed."),
                           QStringLiteral("K"), QStringLiteral("20")};

    void addTo(QCommandLineParser& parser) { parser.addOptions({url, a, b, by, window, end, top}); }

    // The request, nullopt without --prometheus; a usage message in `error`.
    std::optional<lockscope::fleet::FleetRequest> request(const QCommandLineParser& parser, QString& error) const
    {
        if (!parser.isSet(url)) {
            for (const QCommandLineOption* o : {&a, &b, &by, &window, &end, &top})
                if (parser.isSet(*o))
                    error = QStringLiteral("--%1 goes with --prometheus").arg(o->names().first());
            return std::nullopt;
        }
        lockscope::fleet::FleetRequest r;
        r.url = parser.value(url).toStdString();
        r.a = parser.value(a).toStdString();
        r.b = parser.value(b).toStdString();
        r.by = parser.value(by).toStdString();
        r.window = parser.value(window).toStdString();
        r.end = parser.value(end).toStdString();
        bool number = false;
        const qulonglong k = parser.value(top).toULongLong(&number);
        r.top = number ? size_t(k) : 0;  // 0 is refused with the CLI's sentence
        return r;
    }
};

}  // namespace

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
                       "being recorded); two FILEs also compare them on the Diff page. --prometheus URL\n"
                       "with --a SELECTOR --b SELECTOR (or --by LABEL) compares two groups of hosts\n"
                       "instead, as 'lockscope diff --prometheus' does, e.g.\n"
                       "  lockscope-gui --prometheus http://prometheus:9090 --by kernel --window 1d"));
    parser.addHelpOption();
    parser.addVersionOption();
    QCommandLineOption screenshot(QStringLiteral("screenshot"),
                                  QStringLiteral("Render a page to a PNG file without a display and exit."),
                                  QStringLiteral("OUT.png"));
    QCommandLineOption page(
        QStringLiteral("page"),
        QStringLiteral("Page to render: overview, locks, chains (the Locks page's wait-chain graph), holders "
                       "(its Holders tab) or diff."),
        QStringLiteral("NAME"), QStringLiteral("overview"));
    parser.addOption(screenshot);
    parser.addOption(page);
    FleetFlags fleet_flags;
    fleet_flags.addTo(parser);
    parser.addPositionalArgument(QStringLiteral("FILE"), QStringLiteral("Session files."), QStringLiteral("[FILE…]"));
    parser.process(app);
    const QStringList files = parser.positionalArguments();
    QString usage;
    const std::optional<lockscope::fleet::FleetRequest> fleet = fleet_flags.request(parser, usage);
    if (usage.isEmpty() && fleet) {
        if (!files.isEmpty())
            usage = QStringLiteral("--prometheus compares groups of hosts, not session files");
        else
            try {
                lockscope::fleet::fleet_options(*fleet, 0);  // the CLI's checks, before any window opens
            } catch (const std::exception& e) {
                usage = QString::fromLocal8Bit(e.what());
            }
    }
    if (!usage.isEmpty()) {
        std::fprintf(stderr, "lockscope-gui: %s (see --help)\n", qPrintable(usage));
        return 2;
    }

    if (parser.isSet(screenshot)) {
        lockscope::gui::ScreenshotRequest request;
        request.output = parser.value(screenshot);
        request.page = parser.value(page);
        request.files = files;
        request.fleet = fleet;
        return lockscope::gui::render_screenshot(request);
    }
    if (parser.isSet(page) && files.isEmpty() && !fleet) {
        std::fprintf(stderr, "lockscope-gui: --page needs a session file\n");
        return 2;
    }

    lockscope::gui::MainWindow window;
    window.show();
    if (fleet)
        window.openFleetDiff(*fleet);
    if (!files.isEmpty())
        window.openSession(files.first());
    if (files.size() >= 2)
        window.openDiff(files[0], files[1]);
    else if (parser.value(page) == QLatin1String("locks"))
        window.showPage(lockscope::gui::MainWindow::Locks);
    return app.exec();
}
