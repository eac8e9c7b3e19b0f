#include "core/render/report_user_locks.h"

#include <algorithm>
#include <string>
#include <vector>

#include "core/format.h"

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
    std::string line = "left out: " + std::to_string(left_out_waits(u, "condition")) + " " +
                       left_out_words("condition") + ", " + std::to_string(left_out_waits(u, "semaphore")) + " " +
                       left_out_words("semaphore");
    for (const auto& [reason, left] : u.left_out)
        if (reason != "condition" && reason != "semaphore")
            line += ", " + std::to_string(left.waits) + " " + left_out_words(reason);
    return line + " (futex sleeps that are no lock waits)";
}

std::string pad(const std::string& s, size_t width, bool right)
{
    const size_t w = display_width(s);
    if (w >= width)
        return s;
    return right ? std::string(width - w, ' ') + s : s + std::string(width - w, ' ');
}

std::string pids_text(const UserLockReport& u)
{
    std::set<uint32_t> pids;
    for (const UserLockReportRow& r : u.rows)
        pids.insert(r.pids.begin(), r.pids.end());
    std::string out;
    for (uint32_t pid : pids)
        out += (out.empty() ? "" : ", ") + std::to_string(pid);
    return pids.empty() ? std::string() : (pids.size() == 1 ? " of process " : " of processes ") + out;
}

void rows_table(std::ostringstream& out, const UserLockReport& u)
{
    size_t name_w = 4, kind_w = 4;
    for (const UserLockReportRow& r : u.rows) {
        name_w = std::max(name_w, display_width(r.name));
        kind_w = std::max(kind_w, display_width(r.kind));
    }
    auto line = [&](const std::string& name, const std::string& kind, const std::vector<std::string>& cells,
                    const std::string& caller) {
        std::string s = pad(name, name_w, false) + "  " + pad(kind, kind_w, false);
        for (const std::string& c : cells)
            s += " " + pad(c, 10, true);
        s += "  " + caller;
        while (!s.empty() && s.back() == ' ')
            s.pop_back();
        out << s << '\n';
    };
    line("name", "kind", {"waits", "wait", "wait%", "max", "mean"}, "caller");
    for (const UserLockReportRow& r : u.rows)
        line(r.name, r.kind,
             {std::to_string(r.waits), format_duration(double(r.wait_ns)), format_percent_cell(r.share_of_wait),
              format_duration(double(r.max_wait_ns)), format_duration(r.mean_wait_ns())},
             r.caller);
    if (u.rows_total > u.rows.size())
        out << "(top " << u.rows.size() << " of " << u.rows_total << " user-lock rows by wait)\n";
}

}  // namespace

void text_block(std::ostringstream& out, const Report& rep)
{
    const UserLockReport& u = rep.user_locks;
    if (!u.tried)
        return;
    out << "\nuser-space locks" << pids_text(u) << ": " << u.waits << " waits in the futex syscall, "
        << format_duration(double(u.wait_ns)) << "\n";
    for (const std::string& why : u.unavailable)
        out << wrap_text(why, "not recorded: ", 2, 100);
    if (u.rows.empty())
        out << "no user-space lock waits recorded\n";
    else
        rows_table(out, u);
    out << wrap_text(left_out_line(u), "", 2, 100);
    const UserLockRun& c = u.counters;
    if (c.lost_keys || c.lost_samples || c.lost_inflight)
        out << wrap_text("lost: " + std::to_string(c.lost_keys) + " waits not counted (the lock map was full), " +
                             std::to_string(c.lost_samples) + " stacks (the ring buffer was full), " +
                             std::to_string(c.lost_inflight) + " waits not timed (too many threads asleep at once)",
                         "", 2, 100);
    out << "names: user-symbol (the lock's global variable), user-caller (kind@the function that takes it);\n"
           "mean and max are per wait; waits are counted per futex sleep\n";
}

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
                        {"waits", r.waits},
                        {"wait_ns", r.wait_ns},
                        {"max_wait_ns", r.max_wait_ns},
                        {"mean_wait_ns", r.mean_wait_ns()},
                        {"share_of_wait", r.share_of_wait},
                        {"samples", r.samples},
                        {"owner_tids", r.owner_tids},
                        {"ops", r.ops}});
    nlohmann::ordered_json left = nlohmann::ordered_json::object();
    for (const auto& [reason, l] : u.left_out)
        left[reason] = {{"addresses", l.addresses}, {"waits", l.waits}};
    const UserLockRun& c = u.counters;
    return {{"rows", std::move(rows)},        {"rows_total", u.rows_total},           {"waits", u.waits},
            {"wait_ns", u.wait_ns},           {"left_out", std::move(left)},          {"unavailable", u.unavailable},
            {"samples", c.samples},           {"samples_unwound", c.samples_unwound}, {"lost_keys", c.lost_keys},
            {"lost_samples", c.lost_samples}, {"lost_inflight", c.lost_inflight},     {"rate_limited", c.rate_limited}};
}

}  // namespace report_user_locks

std::string format_user_locks_csv(const Report& rep)
{
    std::string out =
        "scope,name,kind,name_source,module,caller,pids,waits,wait_ns,max_wait_ns,mean_wait_ns,"
        "share_of_wait,samples,owner_tids,ops\n";
    auto field = [](const std::string& s) {
        if (s.find_first_of(",\"\r\n") == std::string::npos)
            return s;
        std::string q = "\"";
        for (char ch : s)
            q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
        return q + "\"";
    };
    auto words = [](const auto& set) {
        std::string s;
        for (const auto& item : set) {
            std::ostringstream one;
            one << item;
            s += (s.empty() ? "" : " ") + one.str();
        }
        return s;
    };
    for (const UserLockReportRow& r : rep.user_locks.rows)
        out += "user," + field(r.name) + ',' + field(r.kind) + ',' + field(r.name_source) + ',' + field(r.module) +
               ',' + field(r.caller) + ',' + words(r.pids) + ',' + std::to_string(r.waits) + ',' +
               std::to_string(r.wait_ns) + ',' + std::to_string(r.max_wait_ns) + ',' +
               format_decimal(r.mean_wait_ns()) + ',' + format_decimal(r.share_of_wait) + ',' +
               std::to_string(r.samples) + ',' + words(r.owner_tids) + ',' + words(r.ops) + '\n';
    return out;
}

}  // namespace lockscope
