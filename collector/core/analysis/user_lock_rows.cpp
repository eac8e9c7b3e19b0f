#include "core/analysis/user_lock_rows.h"

namespace lockscope {

ReportRow user_lock_row(const UserLockReportRow& u, bool split)
{
    ReportRow row;
    row.scope = LockScope::User;
    row.name = u.name;
    row.kind = u.kind;  // its mode is in its kind: "pthread_rwlock/r"
    row.caller = u.caller;
    row.callers = u.caller.empty() ? 0 : 1;
    row.name_source = u.name_source;
    row.instances = u.pids.size();  // one lock per process that waited on it
    // Parts, wakes and histogram only where the session's format keeps them.
    row.counters = {.contentions = u.waits,
                    .wait_ns = u.wait_ns,
                    .sleep_ns = split ? u.asleep_ns : 0,
                    .preempt_ns = split ? u.runnable_ns : 0,
                    .max_wait_ns = u.max_wait_ns,
                    .wakeups = split ? u.wakes : 0,
                    .timed = u.waits};
    if (split)
        row.counters.hist = u.hist;
    row.share_of_wait = u.share_of_wait;
    return row;
}

std::vector<ReportRow> user_lock_rows(const UserLockReport& report)
{
    std::vector<ReportRow> rows;
    rows.reserve(report.rows.size());
    for (const UserLockReportRow& u : report.rows)
        rows.push_back(user_lock_row(u, report.split));
    return rows;
}

}  // namespace lockscope
