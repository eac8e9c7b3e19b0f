// The dashboard's fleet comparison against a real Prometheus server over
// generated data with a known truth (tests/diff/fleet_data.h): lock_03 got
// 30% worse on the new kernel release and lock_07 30% better, 20 hosts a
// side. The diff page must show exactly those two locks changed, in those
// directions, with the host counts Prometheus itself counts; a server that
// is not there, or a request the CLI would refuse, is one sentence on the
// page; a query that hangs can be cancelled.
#include "fleet_data.h"
#include "models/diff_models.h"
#include "views/diff_page.h"
#include "views/fleet_dialog.h"
#include "views/main_window.h"
#include "views/screenshot.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <QDateTime>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QTabWidget>
#include <QtTest>

#include <cmath>
#include <map>
#include <memory>

using namespace lockscope;
using namespace lockscope::gui;

class FleetTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void cleanupTestCase();
    void showsTheTwoChangedLocksWithTheHostCounts();
    void aClosedPortIsOneSentence();
    void anUnknownGroupNamesItsSelector();
    void aRequestTheCliRefusesIsItsSentence();
    void theDialogKeepsABadWindowWithItsSentence();
    void aHangingQueryCanBeCancelled();

private:
    fleet::FleetRequest request(const char* kernel_a, const char* kernel_b) const;
    // Runs the request in a window and waits for its end; the failure message, if any.
    static QString compare(MainWindow& w, const fleet::FleetRequest& r);

    std::unique_ptr<test::FleetPrometheus> prometheus_;
};

void FleetTest::initTestCase()
{
    prometheus_ = std::make_unique<test::FleetPrometheus>(1);
}

void FleetTest::cleanupTestCase()
{
    prometheus_.reset();
}

fleet::FleetRequest FleetTest::request(const char* kernel_a, const char* kernel_b) const
{
    fleet::FleetRequest r;
    r.url = prometheus_->url();
    r.a = std::string("seed=\"1\",kernel=\"") + kernel_a + "\"";
    r.b = std::string("seed=\"1\",kernel=\"") + kernel_b + "\"";
    r.window = "5m";
    r.end = std::to_string(long(prometheus_->end()));
    return r;
}

QString FleetTest::compare(MainWindow& w, const fleet::FleetRequest& r)
{
    QSignalSpy loaded(&w, &MainWindow::diffLoaded);
    QSignalSpy failed(&w, &MainWindow::diffFailed);
    w.openFleetDiff(r);
    (void)QTest::qWaitFor([&] { return !loaded.isEmpty() || !failed.isEmpty(); }, 120000);
    if (!failed.isEmpty())
        return failed.first().first().toString();
    return loaded.isEmpty() ? QStringLiteral("no answer in 120 s") : QString();
}

void FleetTest::showsTheTwoChangedLocksWithTheHostCounts()
{
    MainWindow w(false);
    w.show();
    const QString error = compare(w, request(test::kOld, test::kNew));
    QVERIFY2(error.isEmpty(), qPrintable(error));
    QCOMPARE(w.tabs()->currentIndex(), int(MainWindow::Diff));

    // The host counts, as Prometheus counts them itself.
    std::map<std::string, int> hosts;
    for (const char* kernel : {test::kOld, test::kNew}) {
        const nlohmann::json j = prometheus_->server().query(
            std::string("count(lockscope_build_info{seed=\"1\",kernel=\"") + kernel + "\"})",
            std::to_string(long(prometheus_->end())));
        hosts[kernel] = std::stoi(j["data"]["result"][0]["value"][1].get<std::string>());
    }
    QCOMPARE(hosts[test::kOld], test::kHosts / 2);
    const QString header = w.diff()->header()->text();
    QVERIFY2(header.contains(QStringLiteral("— <b>%1 hosts</b><br><b>B</b>").arg(hosts[test::kOld])),
             qPrintable(header));
    QVERIFY2(header.endsWith(
                 QStringLiteral("— <b>%1 hosts</b>&nbsp;&nbsp; over 5m ending %2 from %3")
                     .arg(hosts[test::kNew])
                     .arg(QDateTime::fromSecsSinceEpoch(qint64(prometheus_->end()), Qt::UTC).toString(Qt::ISODate))
                     .arg(QString::fromStdString(prometheus_->url()))),
             qPrintable(header));
    QVERIFY2(header.contains(QStringLiteral("kernel=&quot;%1&quot;").arg(test::kOld)), qPrintable(header));
    QVERIFY2(w.diff()->notes()->text().contains(
                 QStringLiteral("%1 vs %2 hosts").arg(hosts[test::kOld]).arg(hosts[test::kNew])),
             qPrintable(w.diff()->notes()->text()));

    // Exactly two locks called, each in its direction, by about 30%.
    const DiffLocksModel* locks = w.diff()->locks();
    QCOMPARE(locks->rowCount(), 21);  // 20 one by one, the rest summed
    std::map<QString, std::pair<QString, double>> called;
    for (int row = 0; row < locks->rowCount(); ++row) {
        const QString verdict = locks->index(row, DiffLocksModel::Verdict).data().toString();
        if (verdict == QLatin1String("worse") || verdict == QLatin1String("better"))
            called[locks->index(row, DiffLocksModel::Lock).data().toString()] = {
                verdict, locks->index(row, DiffLocksModel::Change).data(DiffLocksModel::RelativeRole).toDouble()};
    }
    QCOMPARE(called.size(), size_t(2));
    const QString worse = QString::fromStdString(test::lock_name(test::kWorse));
    const QString better = QString::fromStdString(test::lock_name(test::kBetter));
    QVERIFY(called.count(worse) && called.count(better));
    QCOMPARE(called[worse].first, QStringLiteral("worse"));
    QCOMPARE(called[better].first, QStringLiteral("better"));
    QVERIFY2(std::abs(called[worse].second - 0.3) < 0.1, qPrintable(QString::number(called[worse].second)));
    QVERIFY2(std::abs(called[better].second + 0.3) < 0.1, qPrintable(QString::number(called[better].second)));

    // To look at the page: what `lockscope-gui --screenshot PNG --page diff --prometheus …` renders.
    if (const QString shot = qEnvironmentVariable("LOCKSCOPE_FLEET_SCREENSHOT"); !shot.isEmpty()) {
        ScreenshotRequest r;
        r.output = shot;
        r.page = QStringLiteral("diff");
        r.fleet = request(test::kOld, test::kNew);
        QCOMPARE(render_screenshot(r), 0);
    }
}

void FleetTest::aClosedPortIsOneSentence()
{
    MainWindow w(false);
    w.show();
    fleet::FleetRequest r = request(test::kOld, test::kNew);
    r.url = "http://127.0.0.1:" + std::to_string(test::free_port());
    const QString error = compare(w, r);
    QVERIFY2(error.startsWith(QStringLiteral("cannot query Prometheus at %1").arg(QString::fromStdString(r.url))),
             qPrintable(error));
    const QString notes = w.diff()->notes()->text();
    QVERIFY2(notes.contains(QStringLiteral("Cannot compare:")) && notes.contains(QStringLiteral("is the server up")),
             qPrintable(notes));
    QCOMPARE(w.diff()->locks()->rowCount(), 0);
}

void FleetTest::anUnknownGroupNamesItsSelector()
{
    MainWindow w(false);
    w.show();
    fleet::FleetRequest r = request(test::kOld, test::kNew);
    r.a = "kernel=\"5.10.0\"";
    const QString error = compare(w, r);
    QVERIFY2(error.contains(QStringLiteral("no host to compare 'lockscope_build_info{kernel=\"5.10.0\"}'")),
             qPrintable(error));
    QVERIFY(w.diff()->notes()->text().contains(QStringLiteral("Cannot compare:")));
    QCOMPARE(w.diff()->locks()->rowCount(), 0);
}

void FleetTest::aRequestTheCliRefusesIsItsSentence()
{
    MainWindow w(false);
    w.show();
    fleet::FleetRequest r = request(test::kOld, test::kNew);
    r.b.clear();
    const QString error = compare(w, r);
    QCOMPARE(error, QStringLiteral("--prometheus needs --a SELECTOR and --b SELECTOR, or --by LABEL"));
    QVERIFY(w.diff()->notes()->text().contains(error.toHtmlEscaped()));
}

void FleetTest::theDialogKeepsABadWindowWithItsSentence()
{
    FleetDialog dialog;
    fleet::FleetRequest r = request(test::kOld, test::kNew);
    r.window = "5 minutes";
    dialog.setRequest(r);
    dialog.show();
    dialog.accept();
    QVERIFY(dialog.isVisible());
    QCOMPARE(dialog.result(), int(QDialog::Rejected));
    const QLabel* error = nullptr;
    for (const QLabel* label : dialog.findChildren<QLabel*>())
        if (label->text().startsWith(QStringLiteral("--window")))
            error = label;
    QVERIFY(error && error->isVisible());
    r.window = "5m";
    dialog.setRequest(r);
    dialog.accept();
    QCOMPARE(dialog.result(), int(QDialog::Accepted));
    QCOMPARE(dialog.request().a, r.a);
}

void FleetTest::aHangingQueryCanBeCancelled()
{
    // A server that accepts the connection and never answers: without a
    // cancel, libcurl would wait out its two-minute timeout.
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    QVERIFY(fd >= 0 && bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 && listen(fd, 4) == 0 &&
            getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0);
    MainWindow w(false);
    w.show();
    fleet::FleetRequest r = request(test::kOld, test::kNew);
    r.url = "http://127.0.0.1:" + std::to_string(ntohs(a.sin_port));
    DiffLoader* loader = w.findChild<DiffLoader*>();
    QVERIFY(loader);
    QSignalSpy busy(loader, &DiffLoader::busyChanged);
    QSignalSpy loaded(&w, &MainWindow::diffLoaded);
    QSignalSpy failed(&w, &MainWindow::diffFailed);
    w.openFleetDiff(r);
    QVERIFY(loader->busy());
    QTest::qWait(300);
    QPushButton* cancel = nullptr;
    for (QPushButton* button : w.diff()->findChildren<QPushButton*>())
        if (button->text() == QLatin1String("&Cancel"))
            cancel = button;
    QVERIFY(cancel && cancel->isVisible());
    QTest::mouseClick(cancel, Qt::LeftButton);
    QVERIFY(!cancel->isVisible());
    QCOMPARE(w.diff()->notes()->text(), QStringLiteral("The comparison was cancelled."));
    // The worker itself stops, long before the HTTP timeout.
    QVERIFY(QTest::qWaitFor([&] { return !loader->busy(); }, 30000));
    QCOMPARE(busy.last().first().toBool(), false);
    QCOMPARE(loaded.count(), 0);
    QCOMPARE(failed.count(), 0);
    close(fd);
}

QTEST_MAIN(FleetTest)
#include "fleet_test.moc"
