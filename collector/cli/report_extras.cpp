#include "cli/report_extras.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <vector>

#include "core/format.h"
#include "core/lock_key.h"
#include "core/sorted_values.h"

namespace lockscope::cli {
namespace {

// A table whose first columns are left-aligned text and the rest numbers.
struct Table {
    std::vector<std::string> header;
    size_t text_columns = 1;
    std::vector<std::vector<std::string>> rows;

    std::string text(bool rows_only) const
    {
        std::vector<size_t> widths(header.size(), 0);
        auto widen = [&](const std::vector<std::string>& cells) {
            for (size_t i = 0; i < cells.size(); i++)
                widths[i] = std::max(widths[i], display_width(cells[i]));
        };
        widen(header);
        for (const auto& r : rows)
            widen(r);
        auto line = [&](const std::vector<std::string>& cells) {
            std::string s;
            for (size_t i = 0; i < cells.size(); i++) {
                const std::string fill(widths[i] - display_width(cells[i]), ' ');
                s += (i ? "  " : "") + (i < text_columns || i + 1 == cells.size() ? cells[i] + fill : fill + cells[i]);
            }
            while (!s.empty() && s.back() == ' ')
                s.pop_back();
            return s + '\n';
        };
        std::string out = rows_only ? "" : line(header);
        for (const auto& r : rows)
            out += line(r);
        return out;
    }

    std::string csv(bool rows_only, const std::string& separator) const
    {
        auto line = [&](const std::vector<std::string>& cells) {
            std::string s;
            for (size_t i = 0; i < cells.size(); i++)
                s += (i ? separator : "") + csv_field(cells[i], separator);
            return s + '\n';
        };
        std::string out = rows_only ? "" : line(header);
        for (const auto& r : rows)
            out += line(r);
        return out;
    }
};

// Lock names by samples, most first: "inode.i_rwsem, mm_struct.mmap_lock +1".
std::string locks_text(const std::map<std::string, uint64_t>& locks)
{
    std::vector<std::pair<uint64_t, std::string>> order;
    for (const auto& [name, samples] : locks)
        order.emplace_back(samples, name);
    std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
        return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    std::string out;
    for (size_t i = 0; i < order.size() && i < 2; i++)
        out += (i ? ", " : "") + order[i].second;
    if (order.size() > 2)
        out += " +" + std::to_string(order.size() - 2);
    return out;
}

struct HolderRow {
    std::string holder;  // its stack's functions, or "comm[tid]"
    std::string state;
    uint32_t tid = 0, tgid = 0;
    uint64_t samples = 0, wait_ns = 0;
    std::map<std::string, uint64_t> locks;  // name: samples
};

std::string lock_name(const Session& s, int64_t id)
{
    const LockInfo* l = s.lock(id);
    return l ? l->name : "lock " + std::to_string(id);
}

std::vector<HolderRow> holder_stack_rows(const Session& s, const std::optional<int64_t>& run)
{
    constexpr size_t kFrames = 4;
    std::map<std::pair<std::string, std::string>, HolderRow> rows;
    for (const StackSample& st : s.stacks) {
        if (!st.holder() || (run && st.run != *run) || st.samples == 0)
            continue;
        std::string where;
        for (size_t i = 0; i < st.frames.size() && i < kFrames; i++)
            where += (i ? " <- " : "") + function_of(st.frames[i]);
        if (st.frames.empty())
            where = st.holder_state() == "running" ? "(running on another CPU)" : "(no frames)";
        HolderRow& r = rows[{where, st.holder_state()}];
        r.holder = where;
        r.state = st.holder_state();
        r.samples += st.samples;
        r.wait_ns += st.holder_state() == "on-cpu" || st.holder_state() == "asleep" ? 0 : st.wait_ns;
        r.locks[lock_name(s, st.lock_id)] += st.samples;
    }
    return sorted_values(rows, [](const HolderRow& a, const HolderRow& b) {
        return a.wait_ns != b.wait_ns ? a.wait_ns > b.wait_ns : a.samples > b.samples;
    });
}

std::vector<HolderRow> holder_task_rows(const Session& s, const std::optional<int64_t>& run)
{
    std::map<std::tuple<uint32_t, uint32_t, std::string>, HolderRow> rows;
    for (const HolderTask& h : s.holder_tasks) {
        if ((run && h.run != *run) || h.samples == 0)
            continue;
        HolderRow& r = rows[{h.tid, h.tgid, h.comm}];
        r.holder = h.comm + "[" + std::to_string(h.tid) + "]";
        r.tid = h.tid;
        r.tgid = h.tgid;
        r.samples += h.samples;
        r.locks[lock_name(s, h.lock_id)] += h.samples;
    }
    return sorted_values(rows, [](const HolderRow& a, const HolderRow& b) { return a.samples > b.samples; });
}

std::string holder_legend(const Session& s, bool by_task)
{
    const std::string period = s.meta_value("holder_period", "N");
    std::string text = by_task ? "lock holders by task: the tasks that held a lock when a waiter queued on it, "
                                 "sampled at one queueing in " +
                                     period + " per CPU; share: of the samples"
                               : "lock holders: the holding task's kernel stack when a waiter queued on the lock, "
                                 "sampled at one queueing in " +
                                     period +
                                     " per CPU; wait: of the waiters sampled behind it, and share of that wait "
                                     "(on-cpu: a running holder sampled on its own CPU by a timer tick, behind no "
                                     "waiter's wait; asleep: where a holder followed for the holder split slept "
                                     "holding the lock, each sleep one sample, none left out)";
    return wrap_text(text, "", 4, 100);
}

}  // namespace

std::string holder_rows(const Session& session, const HolderRowOptions& o)
{
    std::vector<HolderRow> rows = o.by_task ? holder_task_rows(session, o.run) : holder_stack_rows(session, o.run);
    uint64_t samples = 0, wait = 0;
    for (const HolderRow& r : rows)
        samples += r.samples, wait += r.wait_ns;
    const size_t total = rows.size();
    if (rows.size() > o.top)
        rows.resize(o.top);
    Table t;
    if (o.by_task && o.csv) {
        t.header = {"comm", "tid", "tgid", "samples", "share", "locks"};
    } else if (o.by_task) {
        t.header = {"task", "samples", "share", "locks"};
    } else {
        t.header = {"holder", "state", "samples", o.csv ? "wait_ns" : "wait", "share", "locks"};
        t.text_columns = 2;
    }
    for (const HolderRow& r : rows) {
        if (o.by_task) {
            const double share = samples ? double(r.samples) / double(samples) : 0.0;
            if (o.csv)
                t.rows.push_back({r.holder.substr(0, r.holder.rfind('[')), std::to_string(r.tid),
                                  std::to_string(r.tgid), std::to_string(r.samples), format_decimal(share),
                                  locks_text(r.locks)});
            else
                t.rows.push_back(
                    {r.holder, std::to_string(r.samples), format_percent_cell(share), locks_text(r.locks)});
            continue;
        }
        const bool on_cpu = r.state == "on-cpu" || r.state == "asleep";
        const double share = wait ? double(r.wait_ns) / double(wait) : 0.0;
        std::string wait_cell = o.csv ? std::to_string(r.wait_ns) : format_duration(double(r.wait_ns));
        std::string share_cell = o.csv ? format_decimal(share) : format_percent_cell(share);
        if (on_cpu)
            wait_cell = share_cell = o.csv ? "" : "-";
        t.rows.push_back({r.holder, r.state, std::to_string(r.samples), wait_cell, share_cell, locks_text(r.locks)});
    }
    if (o.csv)
        return t.csv(o.rows_only, o.separator);
    if (o.rows_only)
        return t.text(true);
    std::string out = holder_legend(session, o.by_task) + '\n';
    if (rows.empty())
        return out + "no lock holder was sampled (record --holder-period N; holders need Linux 6.2+)\n";
    out += t.text(false);
    if (total > rows.size())
        out += "(top " + std::to_string(rows.size()) + " of " + std::to_string(total) + " holders)\n";
    return out;
}

std::string waiter_stacks_text(const Session& session, const Report& report, std::optional<int64_t> run, bool rows_only)
{
    constexpr size_t kStacks = 3;
    if (report.by != GroupBy::Lock)
        return rows_only ? "" : "\n(-v shows the waiter stacks of rows by lock: --by lock)\n";
    std::string out;
    if (!rows_only)
        out += "\n" +
               wrap_text("each lock's sampled waiter stacks (one wait in " + session.meta_value("stack_period", "N") +
                             " per CPU, and each lock's first), innermost first; shares are of the "
                             "lock's sampled wait",
                         "waiter stacks: ", 4, 100);
    for (const ReportRow& row : report.rows) {
        std::map<std::vector<std::string>, std::pair<uint64_t, uint64_t>> stacks;  // frames: wait, samples
        uint64_t wait = 0, samples = 0;
        for (const StackSample& st : session.stacks) {
            const LockInfo* l = session.lock(st.lock_id);
            if (st.role != "waiter" || (run && st.run != *run) || !l || l->name != row.name || l->kind != row.kind ||
                l->mode != row.mode)
                continue;
            auto& s = stacks[st.frames];
            s.first += st.wait_ns;
            s.second += st.samples;
            wait += st.wait_ns;
            samples += st.samples;
        }
        if (stacks.empty())
            continue;
        std::vector<std::pair<std::vector<std::string>, std::pair<uint64_t, uint64_t>>> order(stacks.begin(),
                                                                                              stacks.end());
        std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
        out += "  " + row.name + " " + kind_text(row.kind, row.mode) + " (" + std::to_string(samples) +
               (samples == 1 ? " sample)\n" : " samples)\n");
        for (size_t i = 0; i < order.size() && i < kStacks; i++) {
            const auto& [frames, counts] = order[i];
            const double share = wait ? double(counts.first) / double(wait) : double(counts.second) / double(samples);
            std::string where;
            for (const std::string& f : frames)
                where += (where.empty() ? "" : " <- ") + f;
            std::string cell = format_percent_cell(share);
            cell.insert(0, cell.size() < 6 ? 6 - cell.size() : 0, ' ');
            out += wrap_text(where.empty() ? "(no frames)" : where, "  " + cell + "  ", 12, 100);
        }
    }
    return out;
}

std::string with_separator(const std::string& csv, const std::string& separator)
{
    std::string out, field;
    bool quoted = false, in_quotes = false;
    auto end_field = [&] {
        out += csv_field(field, separator);
        field.clear();
        quoted = false;
    };
    for (size_t i = 0; i < csv.size(); i++) {
        const char ch = csv[i];
        if (in_quotes) {
            if (ch == '"' && i + 1 < csv.size() && csv[i + 1] == '"')
                field += '"', i++;
            else if (ch == '"')
                in_quotes = false;
            else
                field += ch;
        } else if (ch == '"' && field.empty() && !quoted) {
            in_quotes = quoted = true;
        } else if (ch == ',') {
            end_field();
            out += separator;
        } else if (ch == '\n') {
            end_field();
            out += '\n';
        } else {
            field += ch;
        }
    }
    if (!field.empty() || quoted)
        end_field();
    return out;
}

}  // namespace lockscope::cli
