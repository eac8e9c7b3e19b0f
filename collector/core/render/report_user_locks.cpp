#include "core/render/report_user_locks.h"

#include <algorithm>
#include <cstdio>
#include <set>
#include <utility>
#include <string>
#include <string_view>
#include <vector>

#include "core/analysis/user_lock_rows.h"
#include "core/format.h"
#include "core/render/report_holders.h"

namespace lockscope {
namespace report_user_locks {
namespace {

// What each reason's waits are, in the left-out line.
const char* left_out_words(const std::string& reason)
{
    if (reason == "condition")
        return "condition-variable waits";
    if (reason == "semaphore")
        return "semaphore waits";
    if (reason == "not unwound")
        return "waits on futexes whose sampled stacks named no frame (the process was gone before they were "
               "read: record --realtime 99 reads them in time where real-time threads hog the CPUs)";
    if (reason == "unsampled")
        return "waits on futexes none of whose waits was sampled";
    return "other futex waits";
}

uint64_t left_out_waits(const UserLockReport& u, const char* reason)
{
    auto it = u.left_out.find(reason);
    return it == u.left_out.end() ? 0 : it->second.waits;
}

// "left out: 120 condition-variable waits, 0 semaphore waits, 3 other futex waits".
std::string left_out_line(const UserLockReport& u)
{
    std::string line = "left out: " + format_count(left_out_waits(u, "condition")) + " " + left_out_words("condition") +
                       ", " + format_count(left_out_waits(u, "semaphore")) + " " + left_out_words("semaphore");
    for (const auto& [reason, left] : u.left_out)
        if (reason != "condition" && reason != "semaphore")
            line += ", " + format_count(left.waits) + " " + left_out_words(reason);
    return line + " (futex sleeps that are no lock waits)";
}

// " of process 1234", " of processes 1234, 1250", " of every process (12 with
// lock waits: 1234, 1250, 1301, 1302, 1410, 1411, ...)".
std::string pids_text(const UserLockReport& u)
{
    constexpr size_t kShown = 6;
    std::set<uint32_t> pids;
    for (const UserLockReportRow& r : u.rows)
        pids.insert(r.pids.begin(), r.pids.end());
    std::string out;
    size_t n = 0;
    for (uint32_t pid : pids) {
        if (n++ == kShown) {
            out += ", ...";
            break;
        }
        out += (out.empty() ? "" : ", ") + std::to_string(pid);
    }
    if (u.all_processes)
        return " of every process (" + std::to_string(pids.size()) + " with lock waits" +
               (pids.empty() ? "" : ": " + out) + ")";
    return pids.empty() ? std::string() : (pids.size() == 1 ? " of process " : " of processes ") + out;
}

// "0x7f3a2c000b70"; "" for 0.
std::string address_text(uint64_t address)
{
    char text[24] = "";
    if (address != 0)
        std::snprintf(text, sizeof(text), "0x%llx", static_cast<unsigned long long>(address));
    return text;
}

// A row's name; by instance, with its futex word: "g_lock [pid 1234
// 0x55d0c0a01040]" ("[pid 1234]" in a file without words), or for a word in
// shared memory its place: "pthread_mutex@run [shared 00:01:2051+0x40]".
std::string row_name(const UserLockReport& u, const UserLockReportRow& r)
{
    if (u.by_process && !r.shared.empty())
        return r.name + " [shared " + r.shared + "]";
    if (!u.by_process || r.pids.size() != 1)
        return r.name;
    const std::string address = address_text(r.address);
    return r.name + " [pid " + std::to_string(*r.pids.begin()) + (address.empty() ? "" : " " + address) + "]";
}

// The rows as lock rows in the kernel table's columns; `rows_only`: no
// header line and no "(top N of M ...)" line.
void rows_table(std::ostringstream& out, const UserLockReport& u, const TextOptions& options)
{
    Report table;  // no session: every futex wait is timed (no --sample period)
    table.by = GroupBy::Lock;
    table.wait_parts_split = u.split;
    for (const UserLockReportRow& r : u.rows) {
        table.rows.push_back(user_lock_row(r, u));
        table.rows.back().name = row_name(u, r);
    }
    report_table::rows(out, table, options);
    if (!options.rows_only && u.rows_total > u.rows.size())
        out << "(top " << u.rows.size() << " of " << u.rows_total << " user-lock rows by wait)\n";
}

// "g_cache_lock (pthread_mutex): 1,204 of 2,310 waits woken, by 2 threads: 28447 worker-1 61%, ..."
void wakers_block(std::ostringstream& out, const UserLockReport& u)
{
    constexpr size_t kLocks = 5, kWakers = 3;
    size_t shown = 0;
    for (const UserLockReportRow& r : u.rows) {
        if (r.wakers.empty() || shown == kLocks)
            continue;
        if (shown++ == 0)
            out << "woken by (the threads whose wakeup ended a wait's sleep: for a mutex, its unlock):\n";
        uint64_t credited = 0;
        for (const UserLockReportWaker& w : r.wakers)
            credited += w.wakes;
        std::string line = r.name + " (" + r.kind + "): " + format_count(r.wakes) + " of " + format_count(r.waits) +
                           " waits woken, by " + std::to_string(r.wakers.size()) +
                           (r.wakers.size() == 1 ? " thread: " : " threads: ");
        for (size_t i = 0; i < r.wakers.size() && i < kWakers; ++i) {
            const UserLockReportWaker& w = r.wakers[i];
            line += (i ? ", " : "") + std::to_string(w.tid) + " " + (w.comm.empty() ? "?" : w.comm) + " " +
                    format_percent_cell(credited ? double(w.wakes) / double(credited) : 0.0);
        }
        if (r.wakers.size() > kWakers)
            line += ", ...";
        out << wrap_text(line, "  ", 4, 100);
    }
}

// Each lock's holder split, where the session keeps it: the first five rows
// with a followed owner, the owners and what preempted them.
void holders_block(std::ostringstream& out, const UserLockReport& u)
{
    constexpr size_t kLocks = 5;
    size_t shown = 0;
    for (const UserLockReportRow& r : u.rows) {
        const ReportRow row = user_lock_row(r, u);
        if (!u.holder_split || !row.counters.holder_known_ns() || shown == kLocks)
            continue;
        if (shown++ == 0)
            out << wrap_text(
                "each lock's wait by what its holders were doing, from the waiter's first sleep to its wakeup, "
                "followed through the scheduler: the owner it read (a mutex's, a PI futex's), then each holder "
                "in turn (a PI unlock hands the lock to the waiter it wakes); unknown: before the sleep and "
                "after the wakeup, a holder no waiter saw, or no owner (rwlocks, waits that never slept); held "
                "by: the part behind the holder whose unlock woke the waiter",
                "holder split: ", 4, 100);
        report_holders::row_lines(out, row_name(u, r), row);
    }
}

}  // namespace

// The name sources the rows use, and how much of the wait a symbol named.
std::string names_line(const UserLockReport& u)
{
    std::set<std::string> sources;
    for (const UserLockReportRow& r : u.rows)
        sources.insert(r.name_source);
    static const std::pair<const char*, const char*> kSources[] = {
        {"user-symbol", "the lock's global variable"},
        {"user-caller", "kind@the function that takes it"},
        {"user-section", "module:section+offset, a global of a binary without symbols"},
        {"user-caller-offset", "kind@module+offset of the code that takes it, no symbol for it"},
    };
    std::string line = "names: ";
    bool first = true;
    for (const auto& [source, meaning] : kSources) {
        // The first two are always explained; the others where a row has them.
        const bool always = std::string_view(source) == "user-symbol" || std::string_view(source) == "user-caller";
        if (!always && sources.count(source) == 0)
            continue;
        line += std::string(first ? "" : ", ") + source + " (" + meaning + ")";
        first = false;
    }
    if (u.wait_ns != 0 && u.symbol_named_wait_ns != u.wait_ns)
        line += "; " + format_percent_cell(double(u.symbol_named_wait_ns) / double(u.wait_ns)) +
                " of the wait named by a symbol (install the binaries' debug files to name the rest)";
    return wrap_text(line + ";", "", 2, 100);
}

void text_block(std::ostringstream& out, const Report& rep, const TextOptions& options)
{
    const UserLockReport& u = rep.user_locks;
    if (!u.tried)
        return;
    out << "\nuser-space locks" << pids_text(u) << ": " << format_count(u.waits) << " waits in the futex syscall, "
        << format_duration(double(u.wait_ns)) << "\n";
    for (const std::string& why : u.unavailable)
        out << wrap_text(why, "not recorded: ", 2, 100);
    const auto filters = rep.session.find("filters");
    if (u.rows.empty())
        out << (filters != rep.session.end() && !filters->second.empty() ? "no user-space lock matched the filters\n"
                                                                         : "no user-space lock waits recorded\n");
    else
        rows_table(out, u, options);
    wakers_block(out, u);
    holders_block(out, u);
    out << wrap_text(left_out_line(u), "", 2, 100);
    const UserLockRun& c = u.counters;
    if (c.lost_keys || c.lost_samples || c.lost_inflight)
        out << wrap_text("lost: " + format_count(c.lost_keys) + " waits not counted (the lock map was full), " +
                             format_count(c.lost_samples) + " stacks (the ring buffer was full), " +
                             format_count(c.lost_inflight) + " waits not timed (no room for a thread's wait)",
                         "", 2, 100);
    if (c.untimed_waits != 0)
        out << wrap_text("timed: about 1 wait in 16 from its entry (record --trace: every one); " +
                             format_count(c.untimed_waits) + " waits were not, and " +
                             format_duration(double(c.untimed_estimated_ns)) +
                             " of the wait is their estimate at the timed waits' means (a wait that left its CPU is "
                             "timed exactly from there; asleep and runnable are always measured)",
                         "", 2, 100);
    out << names_line(u)
        << wrap_text(
               "the lock table's columns: contentions are futex waits, counted per futex sleep; mean and max "
               "are per wait; fail%, spin% and sleeps are - (a futex wait has no spin phase, and its sleeps are its "
               "waits);",
               "", 0, 100)
        << wrap_text(u.split ? "the wait's parts, adding up to 100%: que% in the futex syscall on a CPU, slp% asleep, "
                               "run% runnable (woken or preempted, waiting for a CPU)"
                             : "que%, slp%, run%: not split in this session's format",
                     "", 0, 100);
}

void rows_block(std::ostringstream& out, const Report& rep, const TextOptions& options)
{
    rows_table(out, rep.user_locks, options);
}

namespace {

// A part of the wait, or null where the session does not split it.
nlohmann::ordered_json part_json(const UserLockReport& u, uint64_t value)
{
    return u.split ? nlohmann::ordered_json(value) : nlohmann::ordered_json(nullptr);
}

// The holder split's parts of a row, null where the session keeps none.
nlohmann::ordered_json holder_json(const UserLockReport& u, uint64_t value)
{
    return u.holder_split ? nlohmann::ordered_json(value) : nlohmann::ordered_json(nullptr);
}

nlohmann::ordered_json wakers_json(const UserLockReportRow& r)
{
    auto out = nlohmann::ordered_json::array();
    for (const UserLockReportWaker& w : r.wakers)
        out.push_back({{"tid", w.tid}, {"pid", w.pid}, {"comm", w.comm}, {"wakes", w.wakes}});
    return out;
}

}  // namespace

nlohmann::ordered_json json(const Report& rep)
{
    const UserLockReport& u = rep.user_locks;
    auto rows = nlohmann::ordered_json::array();
    for (const UserLockReportRow& r : u.rows)
        rows.push_back({{"scope", "user"},
                        {"name", r.name},
                        {"kind", r.kind},
                        {"name_source", r.name_source},
                        {"module", r.module},
                        {"caller", r.caller},
                        {"pids", r.pids},
                        {"address", address_text(r.address)},
                        {"shared", r.shared},
                        {"waits", r.waits},
                        {"wait_ns", r.wait_ns},
                        {"max_wait_ns", r.max_wait_ns},
                        {"mean_wait_ns", r.mean_wait_ns()},
                        {"share_of_wait", r.share_of_wait},
                        {"samples", r.samples},
                        {"oncpu_ns", part_json(u, r.oncpu_ns)},
                        {"asleep_ns", part_json(u, r.asleep_ns)},
                        {"runnable_ns", part_json(u, r.runnable_ns)},
                        {"wakes", part_json(u, r.wakes)},
                        {"hist", u.split ? nlohmann::ordered_json(r.hist) : nlohmann::ordered_json(nullptr)},
                        {"wakers", wakers_json(r)},
                        {"holder_running_ns", holder_json(u, r.holder_running_ns)},
                        {"holder_runnable_ns", holder_json(u, r.holder_runnable_ns)},
                        {"holder_asleep_ns", holder_json(u, r.holder_asleep_ns)},
                        {"holder_unknown_ns", holder_json(u, user_lock_row(r, u).counters.holder_unknown_ns())},
                        {"holder_split", report_holders::row_json(user_lock_row(r, u))},
                        {"owner_tids", r.owner_tids},
                        {"ops", r.ops}});
    nlohmann::ordered_json left = nlohmann::ordered_json::object();
    for (const auto& [reason, l] : u.left_out)
        left[reason] = {{"addresses", l.addresses}, {"waits", l.waits}};
    const UserLockRun& c = u.counters;
    return {{"rows", std::move(rows)},
            {"rows_total", u.rows_total},
            {"waits", u.waits},
            {"wait_ns", u.wait_ns},
            {"symbol_named_wait_ns", u.symbol_named_wait_ns},
            {"by_process", u.by_process},
            {"left_out", std::move(left)},
            {"unavailable", u.unavailable},
            {"samples", c.samples},
            {"samples_unwound", c.samples_unwound},
            {"lost_keys", c.lost_keys},
            {"lost_samples", c.lost_samples},
            {"lost_inflight", c.lost_inflight},
            {"rate_limited", c.rate_limited},
            {"lost_wakers", c.lost_wakers},
            {"untimed_waits", c.untimed_waits},
            {"untimed_estimated_ns", c.untimed_estimated_ns},
            {"split", u.split},
            {"holder_split_kept", u.holder_split},
            {"all_processes", u.all_processes}};
}

}  // namespace report_user_locks

std::string format_user_locks_csv(const Report& rep)
{
    std::string out =
        "scope,name,kind,name_source,module,caller,pids,waits,wait_ns,max_wait_ns,mean_wait_ns,"
        "share_of_wait,samples,owner_tids,ops,oncpu_ns,asleep_ns,runnable_ns,wakes,holder_running_ns,"
        "holder_runnable_ns,holder_asleep_ns,holder_unknown_ns\n";
    auto words = [](const auto& set) {
        std::string s;
        for (const auto& item : set) {
            std::ostringstream one;
            one << item;
            s += (s.empty() ? "" : " ") + one.str();
        }
        return s;
    };
    // empty where the session does not split the wait
    auto part = [&](uint64_t v) { return rep.user_locks.split ? std::to_string(v) : std::string(); };
    // and where it keeps no holder split
    auto holder = [&](const UserLockReportRow& r) {
        if (!rep.user_locks.holder_split)
            return std::string(",,,");
        const LockCounters c = user_lock_row(r, rep.user_locks).counters;
        return std::to_string(c.holder_running_ns) + ',' + std::to_string(c.holder_runnable_ns) + ',' +
               std::to_string(c.holder_asleep_ns) + ',' + std::to_string(c.holder_unknown_ns());
    };
    for (const UserLockReportRow& r : rep.user_locks.rows)
        out += "user," + csv_field(r.name) + ',' + csv_field(r.kind) + ',' + csv_field(r.name_source) + ',' +
               csv_field(r.module) + ',' + csv_field(r.caller) + ',' + words(r.pids) + ',' + std::to_string(r.waits) +
               ',' + std::to_string(r.wait_ns) + ',' + std::to_string(r.max_wait_ns) + ',' +
               format_decimal(r.mean_wait_ns()) + ',' + format_decimal(r.share_of_wait) + ',' +
               std::to_string(r.samples) + ',' + words(r.owner_tids) + ',' + words(r.ops) + ',' + part(r.oncpu_ns) +
               ',' + part(r.asleep_ns) + ',' + part(r.runnable_ns) + ',' + part(r.wakes) + ',' + holder(r) + '\n';
    return out;
}

}  // namespace lockscope
