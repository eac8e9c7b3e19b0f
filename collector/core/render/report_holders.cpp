#include "core/render/report_holders.h"

#include <vector>

#include "core/analysis/stack_frames.h"
#include "core/format.h"
#include "core/render/report_shares.h"

namespace lockscope::report_holders {
namespace {

constexpr size_t kRows = 5, kTasks = 10, kSleepStacks = 3;
constexpr size_t kNameWidth = 40;  // a lock's name before its split, but with full names

std::string task_name(const HolderTimeShare& t)
{
    return (t.comm.empty() ? std::string("?") : t.comm) + "[" + std::to_string(t.tid) + "]";
}

// "running 1.0 s, runnable 500 ms": the parts a task has, largest known first.
std::string task_parts(const HolderTimeShare& t)
{
    std::string s;
    auto part = [&](const char* label, uint64_t ns) {
        if (ns)
            s += (s.empty() ? "" : ", ") + std::string(label) + " " + format_duration(double(ns));
    };
    part("running", t.running_ns);
    part("runnable", t.runnable_ns);
    part("asleep", t.asleep_ns);
    return s.empty() ? "no time" : s;
}

// "handle_userfault <- do_user_addr_fault <- …": a sleeping task's stack
// past the scheduler's own frames, its first few functions.
std::string sleep_frames(const std::vector<std::string>& frames)
{
    std::string s;
    for (const std::string& fn : sleep_functions(frames, 4))
        s += (s.empty() ? "" : " <- ") + fn;
    return s;
}

nlohmann::ordered_json tasks_json(const std::vector<HolderTimeShare>& tasks)
{
    auto out = nlohmann::ordered_json::array();
    for (const HolderTimeShare& t : tasks)
        out.push_back({{"tid", t.tid},
                       {"tgid", t.tgid},
                       {"comm", t.comm},
                       {"running_ns", t.running_ns},
                       {"runnable_ns", t.runnable_ns},
                       {"asleep_ns", t.asleep_ns},
                       {"waits", t.waits}});
    return out;
}

}  // namespace

std::string split_text(const LockCounters& c)
{
    const std::vector<uint64_t> parts = {c.holder_running_ns, c.holder_runnable_ns, c.holder_asleep_ns,
                                         c.holder_unknown_ns()};
    const std::vector<int> p = whole_percents(parts);
    const char* labels[] = {"running", "runnable", "asleep", "unknown"};
    std::string s;
    for (size_t i = 0; i < parts.size(); i++)
        s += (i ? ", " : "") + std::string(labels[i]) + " " +
             (parts[i] ? format_duration(double(parts[i])) + " " : "") + std::to_string(p[i]) + "%";
    return s;
}

void totals_line(std::ostringstream& out, const Report& rep, bool timed)
{
    const std::string label = "holder split       ";
    if (!rep.holder_split.kept)
        out << label << "not kept in this session's format\n";
    else if (timed && rep.totals.counters.wait_ns)
        out << wrap_text(split_text(rep.totals.counters) + ": the same wait, by what the lock's holder was doing",
                         label, label.size(), 100);
}

void text_block(std::ostringstream& out, const Report& rep, bool full_names)
{
    if (!rep.holder_split.kept)
        return;
    if (groups_tasks(rep.by)) {
        if (rep.holder_split.by_task.empty())
            return;
        out << "\n"
            << wrap_text(
                   "the waiting each task caused as a lock's holder, over every lock, by what it was doing "
                   "(followed through the scheduler)",
                   "as holders: ", 4, 100);
        for (size_t i = 0; i < rep.holder_split.by_task.size() && i < kTasks; i++) {
            const HolderTimeShare& t = rep.holder_split.by_task[i];
            out << wrap_text(task_parts(t) + " (" + format_count(t.waits) + (t.waits == 1 ? " wait)" : " waits)"),
                             "  " + task_name(t) + "  ", 6, 100);
        }
        return;
    }
    size_t shown = 0;
    for (const ReportRow& r : rep.rows) {
        if (!r.counters.wait_ns || shown == kRows)
            continue;
        if (shown++ == 0)
            out << "\n"
                << wrap_text(
                       "each lock's wait by what its holder was doing meanwhile, followed through the "
                       "scheduler (a mutex spins only while its owner runs: its spin is holder running); "
                       "unknown: no owner to follow (spinlocks, readers), the lock free, or a holder not seen",
                       "holder split: ", 4, 100);
        const std::string name = r.name + (r.mode.empty() ? "" : "/" + r.mode);
        row_lines(out, full_names ? name : truncate_middle(name, kNameWidth, 12), r);
    }
}

void row_lines(std::ostringstream& out, const std::string& name, const ReportRow& r)
{
    out << wrap_text(split_text(r.counters), "  " + name + "  ", 6, 100);
    std::string held;
    for (const HolderTimeShare& t : r.holder_times)
        held += (held.empty() ? "" : "; ") + task_name(t) + " " + task_parts(t);
    if (!held.empty())
        out << wrap_text(held, "    held by ", 12, 100);
    std::string instead;
    for (const HolderTimeShare& t : r.preemptors)
        instead += (instead.empty() ? "" : ", ") + task_name(t) + " " + format_duration(double(t.runnable_ns));
    if (!instead.empty())
        out << wrap_text(instead + " (the wait behind the runnable holder it had preempted)",
                         "    runnable holder preempted by ", 12, 100);
    for (size_t i = 0; i < r.holder_sleeps.size() && i < kSleepStacks; i++) {
        const HolderShare& h = r.holder_sleeps[i];
        const std::string where = h.frames.empty() ? "(no frames)" : sleep_frames(h.frames);
        std::string share = format_percent_cell(h.share);
        share.insert(0, share.size() < 5 ? 5 - share.size() : 0, ' ');
        out << wrap_text(where + " (" + format_duration(double(h.wait_ns)) + ", " + format_count(h.samples) +
                             (h.samples == 1 ? " sleep)" : " sleeps)"),
                         (i ? "              " : "    asleep in ") + share + "  ", 21, 100);
    }
}

nlohmann::ordered_json row_json(const ReportRow& r)
{
    auto sleeps = nlohmann::ordered_json::array();
    for (const HolderShare& h : r.holder_sleeps)
        sleeps.push_back({{"stack", h.frames}, {"sleeps", h.samples}, {"asleep_ns", h.wait_ns}, {"share", h.share}});
    return {{"holders", tasks_json(r.holder_times)},
            {"preempted_by", tasks_json(r.preemptors)},
            {"asleep_in", std::move(sleeps)}};
}

nlohmann::ordered_json by_task_json(const Report& rep)
{
    return tasks_json(rep.holder_split.by_task);
}

}  // namespace lockscope::report_holders
