// The user-space locks' rows as lock rows like the kernel's: the one shape
// the lock table of the dashboard, `top` and the report's table list, with
// the scope that tells them apart.
#pragma once

#include "core/analysis/report.h"

#include <vector>

namespace lockscope {

// A user lock's row as a lock row: contentions are its futex waits, the
// wait's parts its time on a CPU in the syscall (queued on CPU), asleep and
// runnable, wakeups its wakes; every wait is timed. Its share of wait stays
// the user lock report's: of all user-lock rows' wait, as each scope has its
// own (a futex wait may contain kernel lock waits, so the two do not add).
// Its wait's parts and its holder split where `report` keeps them
// (UserLockReport::split, holder_split).
ReportRow user_lock_row(const UserLockReportRow& row, const UserLockReport& report);

// Every row of `report`, in its order.
std::vector<ReportRow> user_lock_rows(const UserLockReport& report);

}  // namespace lockscope
