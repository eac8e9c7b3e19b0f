#include "core/analysis/user_lock_rows.h"

namespace lockscope {

ReportRow user_lock_row(const UserLockReportRow& u, const UserLockReport& report)
{
    const bool split = report.split;
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
    row.holder_split_kept = report.holder_split;
    if (report.holder_split) {
        row.counters.holder_running_ns = u.holder_running_ns;
        row.counters.holder_runnable_ns = u.holder_runnable_ns;
        row.counters.holder_asleep_ns = u.holder_asleep_ns;
        row.holder_times = u.holders;
        row.preemptors = u.preemptors;
    }
    row.share_of_wait = u.share_of_wait;
    return row;
}

std::vector<ReportRow> user_lock_rows(const UserLockReport& report)
{
    std::vector<ReportRow> rows;
    rows.reserve(report.rows.size());
    for (const UserLockReportRow& u : report.rows)
        rows.push_back(user_lock_row(u, report));
    return rows;
}

}  // namespace lockscope
