// Renders every page as `--screenshot` does and fails when a chart that
// should show data is blank or nearly so: the plot rectangle must hold
// drawn pixels in more than a couple of colours, not just background and
// grid.
#include "charts/chart_base.h"
#include "charts/time_series_chart.h"
#include "models/holder_time_model.h"
#include "test_session.h"
#include "views/chain_view.h"
#include "views/holder_tab.h"
#include "views/locks_page.h"
#include "views/main_window.h"
#include "views/screenshot.h"

#include <QSet>
#include <QImage>
#include <QTemporaryDir>
#include <QtTest>

using namespace lockscope::gui;

namespace {

struct Ink {
    int distinct_colours = 0;   // among the ink pixels
    double drawn_fraction = 0;  // ink pixels / plot area
};

// Ink is what data draws: saturated colour (lines, bars) or dark pixels
// (grey bars). Background, grid lines and their antialiasing are all light
// and unsaturated, so an empty plot measures zero.
Ink measure(const QImage& image, const QRect& rect)
{
    QSet<QRgb> colours;
    int ink = 0;
    const QRect r = rect.intersected(image.rect());
    for (int y = r.top(); y <= r.bottom(); ++y)
        for (int x = r.left(); x <= r.right(); ++x) {
            const QColor c = QColor::fromRgb(image.pixel(x, y));
            if (c.hsvSaturation() > 60 || c.value() < 160) {
                ++ink;
                colours.insert(c.rgb());
            }
        }
    const int area = std::max(1, r.width() * r.height());
    return {int(colours.size()), double(ink) / area};
}

bool looks_blank(const Ink& ink)
{
    return ink.distinct_colours < 2 || ink.drawn_fraction < 0.002;
}

}  // namespace

class ScreenshotTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void everyPageHasInk_data();
    void everyPageHasInk();
    void blankChartIsDetected();
    void commandLineRendersPng();

private:
    QTemporaryDir dir_;
    testing::SessionPair pair_;
};

void ScreenshotTest::initTestCase()
{
    QVERIFY(dir_.isValid());
    pair_ = testing::write_session_pair(dir_.path(), 5);
}

void ScreenshotTest::everyPageHasInk_data()
{
    QTest::addColumn<QString>("page");
    QTest::addColumn<int>("charts");
    QTest::newRow("overview") << "overview" << 4;
    QTest::newRow("locks") << "locks" << 3;
    QTest::newRow("chains") << "chains" << 3;
    QTest::newRow("holders") << "holders" << 3;
    QTest::newRow("diff") << "diff" << 1;
}

void ScreenshotTest::everyPageHasInk()
{
    QFETCH(QString, page);
    QFETCH(int, charts);
    MainWindow w(false);
    ScreenshotRequest request;
    request.page = page;
    request.files = {pair_.a, pair_.b};
    const QString error = prepare_page(w, request);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    const QImage shot = w.grab().toImage();
    QCOMPARE(shot.size(), QSize(1280, 800));

    int checked = 0;
    for (charts::ChartWidget* chart : w.findChildren<charts::ChartWidget*>()) {
        if (!chart->isVisible())
            continue;  // on another page
        QVERIFY2(chart->hasData(), qPrintable(page + ": a chart has no data"));
        const QRect plot = chart->plotRect();
        QVERIFY2(plot.width() > 100 && plot.height() > 60,
                 qPrintable(QStringLiteral("%1: plot area %2×%3 is too small to read")
                                .arg(page)
                                .arg(plot.width())
                                .arg(plot.height())));
        const Ink ink = measure(chart->grab().toImage(), plot);
        QVERIFY2(!looks_blank(ink), qPrintable(QStringLiteral("%1: chart looks blank (%2 colours, %3% ink)")
                                                   .arg(page)
                                                   .arg(ink.distinct_colours)
                                                   .arg(ink.drawn_fraction * 100, 0, 'f', 2)));
        ++checked;
    }
    QCOMPARE(checked, charts);
    if (page == QLatin1String("chains")) {
        // The wait-chain graph: boxes, arrows and labels, not the empty text.
        ChainView* graph = w.locks()->chains();
        QVERIFY(graph->isVisible());
        QVERIFY(!graph->graph().empty());
        const QImage g = graph->grab().toImage();
        const Ink ink = measure(g, g.rect());
        QVERIFY2(!looks_blank(ink), qPrintable(QStringLiteral("chain graph looks blank (%1 colours, %2% ink)")
                                                   .arg(ink.distinct_colours)
                                                   .arg(ink.drawn_fraction * 100, 0, 'f', 2)));
        QVERIFY2(graph->nodeRect(graph->graph().nodes.size() - 1).bottom() <= graph->height(),
                 "every lock box is inside the view");
    }
    if (page == QLatin1String("holders")) {
        // The first lock's holder split: a bar in colour, not the grey of no split.
        HolderSplitBar* bar = w.locks()->holderTab()->bar();
        QVERIFY(bar->isVisible());
        const QImage b = bar->grab().toImage();
        const Ink ink = measure(b, b.rect());
        QVERIFY2(ink.distinct_colours >= 3,
                 qPrintable(QStringLiteral("holder bar has %1 colours").arg(ink.distinct_colours)));
        QVERIFY(w.locks()->holderTab()->times()->rowCount() > 0);
    }
}

void ScreenshotTest::blankChartIsDetected()
{
    // The detector must be able to fail: an empty chart measures as blank.
    charts::TimeSeriesChart chart(QStringLiteral("empty"));
    chart.resize(600, 300);
    chart.setYAxis(QStringLiteral("value"), charts::Unit::Count);
    chart.setLines({}, 60);
    chart.show();
    QVERIFY(QTest::qWaitForWindowExposed(&chart));
    QVERIFY(looks_blank(measure(chart.grab().toImage(), chart.plotRect())));
    chart.setLines({{QStringLiteral("line"), {{0, 1}, {30, 5}, {60, 2}}, Qt::blue}}, 60);
    QCoreApplication::processEvents();
    QVERIFY(!looks_blank(measure(chart.grab().toImage(), chart.plotRect())));
}

void ScreenshotTest::commandLineRendersPng()
{
    ScreenshotRequest request;
    request.output = dir_.filePath("locks.png");
    request.page = QStringLiteral("locks");
    request.files = {pair_.a};
    QCOMPARE(render_screenshot(request), 0);
    QImage png(request.output);
    QCOMPARE(png.size(), QSize(1280, 800));
    request.page = QStringLiteral("nonsense");
    QCOMPARE(render_screenshot(request), 2);
    request.page = QStringLiteral("diff");  // needs two files
    QCOMPARE(render_screenshot(request), 1);
}

QTEST_MAIN(ScreenshotTest)
#include "screenshot_test.moc"
