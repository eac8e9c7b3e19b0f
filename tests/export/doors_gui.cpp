#include "doors_gui.h"

#include <QString>

#include "models/lock_table_model.h"
#include "models/user_lock_model.h"
#include "session/snapshot.h"

namespace lockscope::doors {

View from_gui(const std::string& path)
{
    using gui::LockTableModel;
    using gui::UserLockModel;
    const gui::SnapshotPtr snapshot = gui::build_snapshot(QString::fromStdString(path));
    View out;
    LockTableModel locks;
    locks.setSnapshot(snapshot);
    for (int r = 0; r < locks.rowCount(); ++r) {
        auto cell = [&](int column, int role) { return locks.index(r, column).data(role); };
        const std::string key = cell(LockTableModel::Name, Qt::DisplayRole).toString().toStdString() + " [" +
                                cell(LockTableModel::Kind, Qt::DisplayRole).toString().toStdString() + "]";
        LockView& v = out[key];
        v.contentions = cell(LockTableModel::Contentions, LockTableModel::ExactRole).toULongLong();
        if (const QVariant wait = cell(LockTableModel::WaitTotal, LockTableModel::ExactRole); wait.isValid())
            v.wait_ns = wait.toULongLong();
        std::array<uint64_t, 4> parts{};
        bool known = true;
        for (int i = 0; i < 4; ++i) {
            const QVariant part = cell(LockTableModel::SpinningShare + i, LockTableModel::ExactRole);
            known = known && part.isValid();
            parts[size_t(i)] = part.toULongLong();
        }
        if (known)
            v.parts = parts;
    }
    UserLockModel users;
    users.setReport(snapshot->report.user_locks);
    for (int r = 0; r < users.rowCount(); ++r) {
        auto text = [&](int column) { return users.index(r, column).data(Qt::DisplayRole).toString(); };
        QString waits = text(UserLockModel::Waits);
        waits.remove(QLatin1Char(','));
        out[user_lock_key(text(UserLockModel::Name).toStdString(), text(UserLockModel::Kind).toStdString())]
            .contentions += waits.toULongLong();
    }
    return out;
}

}  // namespace lockscope::doors
