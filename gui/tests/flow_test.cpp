// The dashboard as a user drives it, offscreen: open a session, switch
// pages from the keyboard, sort and filter the locks, select one, open a
// diff, follow a session being recorded, and survive a file that is not a
// session.
#include "models/diff_models.h"
#include "models/histogram_model.h"
#include "models/lock_filter_model.h"
#include "models/lock_table_model.h"
#include "models/owner_state_model.h"
#include "models/stack_model.h"
#include "models/user_lock_model.h"
#include "session/follower.h"
#include "test_session.h"
#include "views/chain_view.h"
#include "views/chart_feed.h"
#include "views/diff_page.h"
#include "views/locks_page.h"
#include "views/main_window.h"

#include <QFile>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTreeView>
#include <QtTest>

using namespace lockscope;
using namespace lockscope::gui;

class FlowTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void openSwitchSortFilterSelect();
    void openDiff();
    void notASessionIsAMessage();
    void followsALiveRecording();
    void clickingALockInTheChainGraphSelectsIt();
    void chartLinesStartAtTheFirstInterval();
    void everyChainArrowEndsOnALock();
    void userLocksTabListsTheSessionsUserLocks();

private:
    bool open(MainWindow& w, const QString& path);
    QTemporaryDir dir_;
    QString path_a_, path_b_;
};

void FlowTest::initTestCase()
{
    QVERIFY(dir_.isValid());
    const testing::SessionPair pair = testing::write_session_pair(dir_.path(), 3);
    path_a_ = pair.a;
    path_b_ = pair.b;
}

bool FlowTest::open(MainWindow& w, const QString& path)
{
    QSignalSpy loaded(&w, &MainWindow::sessionLoaded);
    w.openSession(path);
    return loaded.wait(30000);
}

void FlowTest::openSwitchSortFilterSelect()
{
    MainWindow w(false);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(open(w, path_a_));
    QCOMPARE(w.tabs()->currentIndex(), int(MainWindow::Overview));

    QTest::keyClick(&w, Qt::Key_2, Qt::ControlModifier);
    QCOMPARE(w.tabs()->currentIndex(), int(MainWindow::Locks));
    LocksPage* page = w.locks();
    QTableView* view = page->view();
    QCOMPARE(page->filter()->rowCount(), page->table()->rowCount());

    // Default order: most wait first, as the report ranks them.
    auto sorted_by = [&](int column, bool ascending) {
        for (int r = 1; r < page->filter()->rowCount(); ++r) {
            const double a = page->filter()->index(r - 1, column).data(LockTableModel::SortRole).toDouble();
            const double b = page->filter()->index(r, column).data(LockTableModel::SortRole).toDouble();
            if (ascending ? a > b : a < b)
                return false;
        }
        return true;
    };
    QVERIFY(sorted_by(LockTableModel::WaitTotal, false));
    // Clicking a header sorts by it.
    const int x = view->horizontalHeader()->sectionViewportPosition(LockTableModel::Contentions) + 5;
    QTest::mouseClick(view->horizontalHeader()->viewport(), Qt::LeftButton, {}, QPoint(x, 5));
    QCOMPARE(view->horizontalHeader()->sortIndicatorSection(), int(LockTableModel::Contentions));
    QVERIFY(
        sorted_by(LockTableModel::Contentions, view->horizontalHeader()->sortIndicatorOrder() == Qt::AscendingOrder));

    // Ctrl+F jumps to the filter; typing narrows the table.
    QTest::keyClick(&w, Qt::Key_F, Qt::ControlModifier);
    QVERIFY(page->filterEdit()->hasFocus());
    QTest::keyClicks(page->filterEdit(), "i_rwsem");
    QCOMPARE(page->filter()->rowCount(), 2);
    page->filterEdit()->clear();

    // Select a lock from the keyboard: the details follow the selection.
    view->setFocus();
    QTest::keyClick(view, Qt::Key_Home);
    QTest::keyClick(view, Qt::Key_Down);
    const QModelIndex current = view->currentIndex();
    QVERIFY(current.isValid());
    QCOMPARE(current.row(), 1);
    QVERIFY(page->histogram()->rowCount() > 0);
    QVERIFY(page->waiters()->rowCount() > 0);
    QCOMPARE(page->ownerStates()->rowCount(), kOwnerStates);

    QTest::keyClick(&w, Qt::Key_1, Qt::ControlModifier);
    QCOMPARE(w.tabs()->currentIndex(), int(MainWindow::Overview));
}

void FlowTest::openDiff()
{
    MainWindow w(false);
    w.show();
    QVERIFY(open(w, path_a_));
    QSignalSpy diffed(&w, &MainWindow::diffLoaded);
    w.openDiff(path_a_, path_b_);
    QVERIFY(diffed.wait(30000));
    QCOMPARE(w.tabs()->currentIndex(), int(MainWindow::Diff));
    DiffLocksModel* locks = w.diff()->locks();
    QVERIFY(locks->rowCount() > 0);
    // Sorted by effect, largest first.
    QTableView* view = w.diff()->locksView();
    for (int r = 1; r < view->model()->rowCount(); ++r)
        QVERIFY(view->model()->index(r - 1, DiffLocksModel::Effect).data(DiffLocksModel::SortRole).toDouble() >=
                view->model()->index(r, DiffLocksModel::Effect).data(DiffLocksModel::SortRole).toDouble());
    QVERIFY(w.diff()->metadata()->rowCount() > 0);
}

void FlowTest::notASessionIsAMessage()
{
    const QString junk = dir_.filePath("notes.txt");
    QFile f(junk);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("this is not a session, just some text that is long enough\n");
    f.close();

    MainWindow w(false);
    w.show();
    QSignalSpy failed(&w, &MainWindow::sessionFailed);
    w.openSession(junk);
    QVERIFY(failed.wait(30000));
    QVERIFY2(failed.first().first().toString().contains("not a lockscope session"),
             qPrintable(failed.first().first().toString()));
    w.openSession(dir_.filePath("does-not-exist"));
    QVERIFY(failed.wait(30000));
    // Still usable afterwards.
    QVERIFY(open(w, path_a_));
    QVERIFY(w.snapshot());
}

void FlowTest::followsALiveRecording()
{
    const QString path = dir_.filePath("live.lockscope");
    testing::SessionShape shape;
    shape.runs = 1;
    shape.intervals = 5;
    shape.finish_last_run = false;
    testing::LiveSession live(path, shape);

    MainWindow w(false);
    w.show();
    QVERIFY(open(w, path));
    QVERIFY(w.snapshot()->recording);
    QVERIFY(w.follower()->following());
    QCOMPARE(w.snapshot()->session->intervals.size(), size_t(5));

    live.append(3);
    QTRY_COMPARE_WITH_TIMEOUT(w.snapshot()->session->intervals.size(), size_t(8), 15000);
    QCOMPARE(w.locks()->table()->rowCount(), shape.locks);

    live.finish();
    QTRY_VERIFY_WITH_TIMEOUT(!w.snapshot()->recording, 15000);
    QVERIFY(!w.follower()->following());
}

// The Wait chains tab: the graph of the session, the selected lock
// highlighted, and a click on a lock there selects its row, even when the
// table's filter hid it.
void FlowTest::clickingALockInTheChainGraphSelectsIt()
{
    MainWindow w(false);
    w.resize(1280, 800);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(open(w, path_a_));
    w.showPage(MainWindow::Locks);
    LocksPage* page = w.locks();
    ChainView* graph = page->chains();
    QCOMPARE(graph->graph().edges.size(), size_t(3));
    QVERIFY(page->detailTabs()
                ->tabText(page->detailTabs()->indexOf(graph->parentWidget()->parentWidget()))
                .startsWith(QStringLiteral("Wait chains (3)")));
    page->detailTabs()->setCurrentIndex(page->chainsTab());
    QVERIFY(QTest::qWaitForWindowExposed(graph));

    QTest::keyClicks(page->filterEdit(), QStringLiteral("pipe"));
    const int i = graph->graph().find("kernfs_mutex");
    QVERIFY(i >= 0);
    QSignalSpy clicked(graph, &ChainView::lockClicked);
    QTest::mouseClick(graph, Qt::LeftButton, {}, graph->nodeRect(size_t(i)).center().toPoint());
    QCOMPARE(clicked.count(), 1);
    QCOMPARE(clicked.front().front().toString(), QStringLiteral("kernfs_mutex"));
    const QModelIndex current = page->view()->selectionModel()->currentIndex();
    QVERIFY(current.isValid());
    QCOMPARE(current.siblingAtColumn(LockTableModel::Name).data().toString(), QStringLiteral("kernfs_mutex"));
    QVERIFY2(page->filterEdit()->text().isEmpty(), "the filter that hid the lock is cleared");
    // A click between the boxes selects nothing new.
    QTest::mouseClick(graph, Qt::LeftButton, {}, QPoint(2, 2));
    QCOMPARE(clicked.count(), 1);
}

// Each interval's value is drawn over the whole interval: the first one
// from the recording's start, none left out.
void FlowTest::chartLinesStartAtTheFirstInterval()
{
    const SnapshotPtr snap = build_snapshot(path_a_);
    const Timeline& t = snap->timeline;
    QCOMPARE(t.start_s.size(), t.x_s.size());
    const charts::Line line = to_line(t, snap->spin_failure_rate, Qt::black);
    QCOMPARE(size_t(line.points.size()), 2 * t.x_s.size());
    QCOMPARE(line.points.front(), QPointF(0, snap->spin_failure_rate.y.front()));
    QCOMPARE(line.points[1], QPointF(t.x_s.front(), snap->spin_failure_rate.y.front()));
    // An interval with no time has no rate to draw; the others stay.
    Timeline empty_first = t;
    empty_first.x_s[0] = empty_first.start_s[0];
    QCOMPARE(size_t(to_line(empty_first, snap->spin_failure_rate, Qt::black).points.size()), 2 * (t.x_s.size() - 1));
}

// The chain graph draws every arrow onto a box: a lock of another class, or
// back onto its own when holders waited for another lock of the same class.
void FlowTest::everyChainArrowEndsOnALock()
{
    Chain pipes{{"pipe_inode_info.mutex", "pipe_inode_info.mutex"}, 3, 12'900'000, true, false, {}};
    Chain onward{{"i_rwsem", "pipe_inode_info.mutex"},         2, 1'000'000, false, false,
                 {"pipe_inode_info.mutex", "sleeping", {}, {}}};
    Chain ab{{"A", "B", "A"}, 5, 500, true, false, {}};
    Chain ba{{"B", "A", "B"}, 2, 200, true, false, {}};
    ChainView view;
    view.resize(900, 400);
    view.setGraph(build_chain_graph({pipes, onward, ab, ba}));
    QCOMPARE(view.graph().edges.size(), size_t(4));
    for (const ChainGraph::Edge& e : view.graph().edges) {
        QPointF tip;
        view.edgePath(e, &tip);
        const QRectF target = view.nodeRect(e.to).adjusted(-0.5, -0.5, 0.5, 0.5);
        QVERIFY2(target.contains(tip), qPrintable(QString::fromStdString(view.graph().nodes[e.from].name + " -> " +
                                                                         view.graph().nodes[e.to].name)));
    }
}

// The Locks page's User locks tab: the session's user-space locks over its
// runs, longest wait first, with what was left out; a session without them
// says how to record them.
void FlowTest::userLocksTabListsTheSessionsUserLocks()
{
    testing::SessionShape shape;
    shape.intervals = 4;
    shape.user_locks = true;
    const QString path = dir_.filePath("user_locks.lockscope");
    testing::write_session(path, shape);
    MainWindow w(false);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(open(w, path));
    LocksPage* page = w.locks();
    QCOMPARE(page->detailTabs()->tabText(page->userLocksTab()), QStringLiteral("User locks (2)"));
    UserLockModel* model = page->userLocks();
    QCOMPARE(model->rowCount(), 2);
    QCOMPARE(model->index(0, UserLockModel::Name).data().toString(), QStringLiteral("g_cache_lock"));
    QCOMPARE(model->index(0, UserLockModel::Kind).data().toString(), QStringLiteral("pthread_mutex"));
    QCOMPARE(model->index(0, UserLockModel::Waits).data().toString(), QStringLiteral("12,000"));  // 3 runs
    QCOMPARE(model->index(0, UserLockModel::Mean).data().toString(), QStringLiteral("5.00 µs"));
    QCOMPARE(model->index(1, UserLockModel::Kind).data().toString(), QStringLiteral("pthread_rwlock/r"));
    page->detailTabs()->setCurrentIndex(page->userLocksTab());
    const QString note = page->detailTabs()->currentWidget()->findChild<QLabel*>()->text();
    QVERIFY2(note.contains(QStringLiteral("Left out (condition): 900 futex waits")), qPrintable(note));
    // The first lock is selected, and its sampled stacks shown, innermost first.
    const QString stacks = page->userLockStacks()->toPlainText();
    QVERIFY2(stacks.startsWith(QStringLiteral("g_cache_lock (pthread_mutex): 1 sampled stacks")), qPrintable(stacks));
    QVERIFY2(stacks.contains(QStringLiteral("100% of the sampled wait, 750 samples:\n    __lll_lock_wait\n"
                                            "    update_g_cache_lock\n    worker")),
             qPrintable(stacks));
    page->userLockView()->setCurrentIndex(model->index(1, 0));
    QVERIFY2(page->userLockStacks()->toPlainText().contains(QStringLiteral("update_g_table_lock")),
             qPrintable(page->userLockStacks()->toPlainText()));

    QVERIFY(open(w, path_a_));
    QCOMPARE(page->detailTabs()->tabText(page->userLocksTab()), QStringLiteral("User locks"));
    QCOMPARE(page->userLocks()->rowCount(), 0);
    QVERIFY(page->detailTabs()
                ->widget(page->userLocksTab())
                ->findChild<QLabel*>()
                ->text()
                .contains(QStringLiteral("recorded no user-space locks")));
}

QTEST_MAIN(FlowTest)
#include "flow_test.moc"
