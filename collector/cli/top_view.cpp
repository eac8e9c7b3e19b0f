#include "cli/top_view.h"

#include <algorithm>
#include <cstdio>
#include <tuple>

#include "core/analysis/counter_delta.h"
#include "core/analysis/user_lock_rows.h"
#include "core/error.h"
#include "core/format.h"
#include "core/lock_key.h"

namespace lockscope::cli {
namespace {

double ratio(uint64_t part, uint64_t whole)
{
    return whole ? double(part) / double(whole) : 0.0;
}

std::string pad(const std::string& s, size_t width, bool right)
{
    const std::string cut = truncate_display(s, width);
    const size_t w = display_width(cut);
    const std::string fill(w < width ? width - w : 0, ' ');
    return right ? fill + cut : cut + fill;
}

// "rwsem/write", as the report spells it.
std::string kind_cell(const ReportRow& r)
{
    if (r.kind.empty())
        return "-";
    return kind_text(r.kind, r.mode);
}

// Per second of the interval, so rows read the same at any -i.
std::string per_second(double count, double seconds)
{
    return format_count_short(seconds > 0 ? count / seconds : 0.0);
}

std::string wait_per_second(uint64_t wait_ns, double seconds)
{
    return format_duration(seconds > 0 ? double(wait_ns) / seconds : 0.0, true) + "/s";
}

struct Column {
    const char* title;
    size_t width;
};
constexpr Column kColumns[] = {{"KIND", 12}, {"CONT/s", 7}, {"FAIL%", 6}, {"WAIT/s", 10},
                               {"MEAN", 8},  {"SPIN%", 6},  {"OFF%", 5},  {"SHARE", 6}};

// Where user locks are recorded, KIND is wide enough for "pthread_rwlock/r"
// and SCOPE follows it: kernel, or user (a user-space lock: CONT/s its
// futex waits, no spin phases, SHARE of the user locks' wait).
std::vector<Column> columns_of(const TopFrame& f)
{
    std::vector<Column> columns(std::begin(kColumns), std::end(kColumns));
    if (f.user_locks) {
        columns[0].width = 16;
        columns.insert(columns.begin() + 1, {"SCOPE", 6});
    }
    return columns;
}

std::vector<std::string> cells(const ReportRow& r, double seconds, bool scope)
{
    const LockCounters& c = r.counters;
    const bool user = r.scope == LockScope::User;
    std::vector<std::string> out = {
        kind_cell(r),
        per_second(double(c.contentions), seconds),
        c.spin_attempts ? format_percent_cell(c.spin_failure_rate()) : "-",
        wait_per_second(c.wait_ns, seconds),
        format_duration(c.contentions ? double(c.wait_ns) / double(c.contentions) : 0.0, true),
        user ? "-" : format_percent_cell(ratio(c.spin_ns, c.wait_ns)),
        format_percent_cell(ratio(c.offcpu_ns(), c.wait_ns)),
        format_percent_cell(r.share_of_wait)};
    if (scope)
        out.insert(out.begin() + 1, lock_scope_name(r.scope));
    return out;
}

// A run's user-lock row less what it had at the last interval.
UserLockRow user_delta(const UserLockRow& now, const UserLockRow* before)
{
    if (!before)
        return now;
    UserLockRow d = now;
    auto less = [](uint64_t a, uint64_t b) { return a > b ? a - b : 0; };
    d.waits = less(now.waits, before->waits);
    d.wait_ns = less(now.wait_ns, before->wait_ns);
    d.samples = less(now.samples, before->samples);
    d.oncpu_ns = less(now.oncpu_ns, before->oncpu_ns);
    d.asleep_ns = less(now.asleep_ns, before->asleep_ns);
    d.runnable_ns = less(now.runnable_ns, before->runnable_ns);
    d.wakes = less(now.wakes, before->wakes);
    for (size_t b = 0; b < d.hist.size(); ++b)
        d.hist[b] = less(now.hist[b], before->hist[b]);
    return d;  // max_wait_ns stays the run's: a maximum has no difference
}

std::string table_line(const std::string& name, const std::vector<std::string>& values,
                       const std::vector<Column>& columns, size_t name_width)
{
    std::string line = pad(name, name_width, false);
    for (size_t i = 0; i < values.size(); i++)
        line += " " + pad(values[i], columns[i].width, true);
    return line;
}

// What the 's' and 'g' keys step through, in order; instances only on
// request (--by instance).
constexpr TopSort kSortCycle[] = {TopSort::Wait, TopSort::Contentions, TopSort::SpinFailures};
constexpr GroupBy kGroupCycle[] = {GroupBy::Lock, GroupBy::Caller, GroupBy::Task, GroupBy::Cgroup, GroupBy::Kind};

// The value after `now` in `cycle`, the first after the last; one not in the
// cycle goes to the first.
template <class T, size_t N>
T next_in(const T (&cycle)[N], T now)
{
    for (size_t i = 0; i < N; i++)
        if (cycle[i] == now)
            return cycle[(i + 1) % N];
    return cycle[0];
}

}  // namespace

TopSort parse_top_sort(const std::string& text)
{
    return parse_row_sort(text);
}

const char* top_sort_name(TopSort sort)
{
    return row_sort_name(sort);
}

TopSort next_sort(TopSort sort)
{
    return next_in(kSortCycle, sort);
}

GroupBy next_group(GroupBy by)
{
    return next_in(kGroupCycle, by);
}

void TopModel::update(const IntervalBatch& batch, const std::vector<LockInfo>& locks, const std::string& run_label)
{
    if (batch.totals.run != run_) {
        run_ = batch.totals.run;
        run_start_ns_ = batch.totals.start_ns;
        task_before_.clear();
        user_before_.clear();
    }
    run_label_ = run_label;
    for (size_t i = latest_.locks.size(); i < locks.size(); i++)
        latest_.locks.push_back(locks[i]);
    latest_.intervals.assign(1, batch.totals);
    latest_.lock_intervals = batch.locks;
    latest_.tasks.clear();
    for (const TaskStats& t : batch.tasks) {
        auto before = task_before_.find(t.pid);
        TaskStats delta = t;
        if (before != task_before_.end())
            delta.counters = counter_delta(t.counters, before->second);
        task_before_[t.pid] = t.counters;
        if (!delta.counters.empty())
            latest_.tasks.push_back(std::move(delta));
    }
    update_user_locks(batch);
}

// The interval's user-lock waits: the run's rows so far, less the last ones.
void TopModel::update_user_locks(const IntervalBatch& batch)
{
    latest_.user_lock_runs = batch.user_lock_runs;
    latest_.user_locks.clear();
    for (const UserLockRow& now : batch.user_locks) {
        auto key = std::tuple(now.pid, now.name, now.kind, now.module);
        auto before = user_before_.find(key);
        UserLockRow d = user_delta(now, before == user_before_.end() ? nullptr : &before->second);
        d.run = batch.totals.run;
        user_before_[key] = now;
        if (d.waits > 0)
            latest_.user_locks.push_back(std::move(d));
    }
}

TopFrame TopModel::frame(const TopSettings& settings) const
{
    TopFrame f;
    if (!has_interval())
        return f;
    ReportOptions options;
    options.by = settings.by;
    options.top = 0;
    Report rep = build_report(latest_, options);
    f.totals = latest_.intervals.front();
    f.run_label = run_label_;
    f.run_seconds = double(f.totals.end_ns - run_start_ns_) / 1e9;
    f.rows = std::move(rep.rows);
    f.user_locks = rep.user_locks.tried || !latest_.user_locks.empty();
    f.user_waits = rep.user_locks.waits;
    f.user_wait_ns = rep.user_locks.wait_ns;
    if (settings.by == GroupBy::Lock || settings.by == GroupBy::Instance)
        for (ReportRow& r : user_lock_rows(rep.user_locks))
            f.rows.push_back(std::move(r));
    // Both scopes by wait (each arrives so), then by the chosen key; its
    // ties keep that order.
    std::stable_sort(f.rows.begin(), f.rows.end(), [](const ReportRow& a, const ReportRow& b) {
        return std::tie(a.counters.wait_ns, a.counters.contentions) >
               std::tie(b.counters.wait_ns, b.counters.contentions);
    });
    sort_rows(f.rows, settings.sort);
    f.rows_total = f.rows.size();
    if (f.rows.size() > settings.lines)
        f.rows.resize(settings.lines);
    return f;
}

std::vector<std::string> render_top(const TopFrame& f, const TopSettings& settings, const std::string& scope,
                                    size_t width, bool keys)
{
    std::vector<std::string> out;
    const IntervalTotals& t = f.totals;
    const LockCounters& c = t.counters;
    const double secs = t.seconds();
    char line[512];
    std::snprintf(line, sizeof line, "lockscope top: %s, %s %.1f s, every %s, by %s, sorted by %s", scope.c_str(),
                  f.run_label.c_str(), f.run_seconds, format_duration(secs * 1e9).c_str(), group_by_name(settings.by),
                  top_sort_name(settings.sort));
    out.push_back(line);
    std::snprintf(line, sizeof line, "contentions %s/s  spin-failure rate %s (%s of %s)  CPU idle %s",
                  per_second(double(c.contentions), secs).c_str(),
                  c.spin_attempts ? format_percent(c.spin_failure_rate(), 1).c_str() : "-",
                  format_count_short(double(c.spin_failures)).c_str(),
                  format_count_short(double(c.spin_attempts)).c_str(), format_percent(t.idle_fraction(), 1).c_str());
    out.push_back(line);
    std::snprintf(line, sizeof line, "wait %s: spin %s, off CPU %s  events %s/s  lost %llu",
                  wait_per_second(c.wait_ns, secs).c_str(), format_percent(ratio(c.spin_ns, c.wait_ns), 0).c_str(),
                  format_percent(ratio(c.offcpu_ns(), c.wait_ns), 0).c_str(),
                  per_second(double(t.events), secs).c_str(), (unsigned long long)t.lost);
    out.push_back(line);
    if (f.user_locks) {
        std::snprintf(line, sizeof line, "user locks: %s waits/s, wait %s (scope user: futex waits, by lock)",
                      per_second(double(f.user_waits), secs).c_str(), wait_per_second(f.user_wait_ns, secs).c_str());
        out.push_back(line);
    }
    if (keys)
        out.push_back("keys: s sort (w wait, c contentions, f spin failures)  g group  q quit");
    out.emplace_back();

    size_t numbers = 0;
    std::vector<std::string> titles;
    const std::vector<Column> columns = columns_of(f);
    for (const Column& col : columns) {
        numbers += col.width + 1;
        titles.push_back(col.title);
    }
    const size_t name_width = width >= numbers + 16 ? width - numbers : 16;
    const char* name_title = settings.by == GroupBy::Lock || settings.by == GroupBy::Instance ? "LOCK"
                             : settings.by == GroupBy::Caller                                 ? "CALLER"
                             : settings.by == GroupBy::Task                                   ? "TASK"
                             : settings.by == GroupBy::Cgroup                                 ? "CGROUP"
                                                                                              : "KIND";
    out.push_back(table_line(name_title, titles, columns, name_width));
    for (const ReportRow& r : f.rows)
        out.push_back(table_line(r.name, cells(r, secs, f.user_locks), columns, name_width));
    if (f.rows.empty())
        out.push_back("(no contention in this interval)");
    else if (f.rows_total > f.rows.size())
        out.push_back("(" + std::to_string(f.rows_total - f.rows.size()) + " more)");
    for (std::string& l : out)
        l = truncate_display(l, width);
    return out;
}

}  // namespace lockscope::cli
