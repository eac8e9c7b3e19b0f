#include "doors_gui.h"

#include <QString>

#include "models/lock_table_model.h"
#include "session/snapshot.h"

namespace lockscope::doors {

View from_gui(const std::string& path)
{
    using gui::LockTableModel;
    const gui::SnapshotPtr snapshot = gui::build_snapshot(QString::fromStdString(path));
    View out;
    LockTableModel locks;
    locks.setSnapshot(snapshot);
    for (int r = 0; r < locks.rowCount(); ++r) {
        auto cell = [&](int column, int role) { return locks.index(r, column).data(role); };
        const std::string name = cell(LockTableModel::Name, Qt::DisplayRole).toString().toStdString();
        const std::string kind = cell(LockTableModel::Kind, Qt::DisplayRole).toString().toStdString();
        // A user lock's row: its waits, wait and three parts (no spin phase).
        const bool user = cell(LockTableModel::Scope, Qt::DisplayRole).toString() == QLatin1String("user");
        LockView& v = out[user ? user_lock_key(name, kind) : name + " [" + kind + "]"];
        v.contentions += cell(LockTableModel::Contentions, LockTableModel::ExactRole).toULongLong();
        if (const QVariant wait = cell(LockTableModel::WaitTotal, LockTableModel::ExactRole); wait.isValid())
            v.wait_ns = wait.toULongLong();
        std::array<uint64_t, 4> parts{};
        bool known = true;
        for (int i = user ? 1 : 0; i < 4; ++i) {
            const QVariant part = cell(LockTableModel::SpinningShare + i, LockTableModel::ExactRole);
            known = known && part.isValid();
            parts[size_t(i)] = part.toULongLong();
        }
        if (known)
            v.parts = parts;
    }
    return out;
}

}  // namespace lockscope::doors
