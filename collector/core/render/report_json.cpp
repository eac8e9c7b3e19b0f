// The JSON rendering of a Report: a public interface (DESIGN.md), whose
// keys are added, never renamed or dropped.
#include <nlohmann/json.hpp>

#include <string_view>

#include "core/analysis/estimate.h"
#include "core/analysis/lock_vocabulary.h"
#include "core/analysis/report.h"
#include "core/render/counter_columns.h"
#include "core/render/report_holders.h"
#include "core/render/report_shares.h"
#include "core/render/report_user_locks.h"

namespace lockscope {

namespace report_shares {

// record --sample N's N (core/analysis/estimate.h); 1 with full timing (and for
// malformed timing keys: the stored totals are read as they are).
uint32_t report_period(const Report& rep)
{
    return timing_period(rep.session).value_or(1);
}

bool counter_known(const LockCounters& c, uint32_t period, bool split, const ReportRow* row, std::string_view field,
                   bool holder)
{
    // a row keeps the holder split's rest (holder_unknown_ns) where it keeps its parts
    if (field.starts_with("holder_") && (!holder || (row && !row->keeps("holder_running_ns"))))
        return false;
    const bool unsplit = !split && (field == "spinning_ns" || field == "queued_on_cpu_ns" ||
                                    field == "spin_offcpu_ns" || field == "spin_yields");
    const bool timed_field = is_timed_field(field) || field == "max_wait_bound_ns";
    return (times_measured(c, period) || !timed_field) && !unsplit && (!row || row->keeps(field));
}

NamingShares naming_shares(const ReportTotals& t)
{
    NamingShares n;
    for (const auto& [source, share] : t.by_name_source) {
        if (named_from_data(source)) {
            n.data_wait += share.wait_ns;
            n.data_locks += share.locks;
        } else if (source == "kernel-data") {
            n.image_wait += share.wait_ns;
            n.image_locks += share.locks;
        } else {
            n.other_wait += share.wait_ns;
            n.other_locks += share.locks;
        }
    }
    return n;
}

}  // namespace report_shares

namespace {

using report_shares::counter_known;
using report_shares::naming_shares;
using report_shares::NamingShares;
using report_shares::report_period;

constexpr std::initializer_list<DerivedCounter> kJsonDerived = {kSpinFailureRate, kQueuedNs,   kOffcpuNs,
                                                                kMeanWaitNs,      kSpinningNs, kQueuedOnCpuNs,
                                                                kAsleepNs,        kRunnableNs, kHolderUnknownNs};

// Under record --sample N, the times (is_timed_field) of a row none of whose
// episodes was timed are unknown: null, never 0. wait_ns_stderr is the
// standard error of the wait_ns estimate (0 with full timing; null where
// unknown: per-task rows keep no variance).
// Where the session cannot split the wait (`split` false), the parts that
// need the off-CPU time of spin phases are null too, and so is what a row
// does not keep (ReportRow::keeps: a task's spin successes, any maximum
// not measured); max_wait_bound_ns is then the upper bound the session has.
// Where the session keeps no holder split (`holder` false), its parts are null.
nlohmann::ordered_json counters_json(const LockCounters& c, uint32_t period, bool split, bool holder,
                                     const ReportRow* row = nullptr)
{
    nlohmann::ordered_json j;
    const bool timed = times_measured(c, period);
    auto kept = [&](std::string_view field) { return !row || row->keeps(field); };
    auto put = [&](const char* name, auto value) {
        const std::string_view field = name;
        if (counter_known(c, period, split, row, field, holder))
            j[name] = value;
        else
            j[name] = nullptr;
        if (field == "wait_ns")
            j["wait_ns_stderr"] =
                timed && stderr_known(c, period) ? nlohmann::ordered_json(wait_stderr_ns(c)) : nullptr;
    };
    for_each_counter_column(c, kJsonDerived, put, put);
    nlohmann::ordered_json owner;
    for (int i = 0; i < kOwnerStates; ++i)
        owner[owner_state_name(i)] = c.owner[size_t(i)];
    j["owner_at_queueing"] = kept("owner_at_queueing") ? owner : nlohmann::ordered_json(nullptr);
    j["hist"] = timed && kept("hist") ? nlohmann::ordered_json(c.hist)
                                      : nullptr;  // bucket i: waits of [2^i, 2^(i+1)) ns; the last is open-ended
    if (row)
        j["max_wait_bound_ns"] =
            counter_known(c, period, split, row, "max_wait_bound_ns") ? nlohmann::ordered_json(c.max_wait_ns) : nullptr;
    return j;
}

// One row of "locks": the row's names, counters and, by lock or instance,
// its holders and cgroups.
nlohmann::ordered_json row_json(const Report& rep, const ReportRow& r, uint32_t period)
{
    nlohmann::ordered_json row;
    row["name"] = r.name;
    row["kind"] = r.kind;
    row["mode"] = r.mode;
    row["caller"] = r.caller;
    row["callers"] = r.callers;  // distinct callers seen (0 where the row is not a lock or a kind)
    row["name_source"] = r.name_source;
    row["instances"] = r.instances;
    if (rep.by == GroupBy::Instance) {
        row["instance"] = r.instance;
        row["detail"] = r.detail;
    }
    row.update(counters_json(r.counters, period, rep.wait_parts_split, rep.holder_split.kept, &r));
    row["share_of_wait"] = r.share_of_wait;
    if (rep.by == GroupBy::Lock || rep.by == GroupBy::Instance) {
        auto holders = nlohmann::ordered_json::array();
        for (const HolderShare& h : r.holders)
            holders.push_back({{"stack", h.frames},
                               {"state", h.state},
                               {"samples", h.samples},
                               {"wait_ns", h.wait_ns},
                               {"share", h.share},
                               {"share_of", h.on_cpu() ? "on_cpu_samples" : "wait"}});
        row["holders"] = std::move(holders);
        row["holder_samples"] = r.holder_samples;
        row["holder_oncpu_samples"] = r.holder_oncpu_samples;
        auto tasks = nlohmann::ordered_json::array();
        for (const HolderTaskShare& ht : r.holder_tasks)
            tasks.push_back({{"tid", ht.tid}, {"tgid", ht.tgid}, {"comm", ht.comm}, {"samples", ht.samples}});
        row["holder_tasks"] = std::move(tasks);
        row["holder_split"] = report_holders::row_json(r);
        auto user_code = nlohmann::ordered_json::array();
        for (const UserCodeShare& c : r.user_code)
            user_code.push_back(
                {{"stack", c.frames}, {"samples", c.samples}, {"wait_ns", c.wait_ns}, {"share", c.share}});
        row["user_code"] = std::move(user_code);
        row["user_code_samples"] = r.user_code_samples;
        auto cgroups = nlohmann::ordered_json::array();
        for (const auto& [path, samples] : r.cgroups)
            cgroups.push_back({{"cgroup", path}, {"samples", samples}});
        row["cgroups"] = std::move(cgroups);
    }
    return row;
}

}  // namespace

std::string format_json(const Report& rep)
{
    nlohmann::ordered_json j;
    j["session"] = rep.session;
    j["group_by"] = group_by_name(rep.by);
    j["sort"] = row_sort_name(rep.sort);  // the rows' order (-k)
    j["notes"] = rep.notes;
    const ReportTotals& t = rep.totals;
    const uint32_t period = report_period(rep);
    j["timing"] = {{"mode", period > 1 ? "sampled" : "full"}, {"period", period}};
    nlohmann::ordered_json totals = counters_json(t.counters, period, rep.wait_parts_split, rep.holder_split.kept);
    totals["idle_fraction"] = t.idle_fraction;
    totals["lost"] = t.lost;
    nlohmann::ordered_json by_cause = nlohmann::ordered_json::object();
    for (const LostField& f : kLostFields)
        by_cause[f.name] = t.lost_by_cause.*f.member;
    totals["lost_by_cause"] = by_cause;
    totals["events"] = t.events;
    totals["duration_s"] = t.duration_s;
    totals["contentions_per_s"] = t.duration_s > 0 ? double(t.counters.contentions) / t.duration_s : 0.0;
    totals["ops_per_s"] = t.ops_per_s ? nlohmann::ordered_json(*t.ops_per_s) : nullptr;
    totals["runs"] = t.runs;
    totals["intervals"] = t.intervals;
    totals["holder_samples"] = rep.holder_samples;
    totals["holder_changed"] = rep.holder_changed;
    totals["holder_oncpu_samples"] = rep.holder_oncpu_samples;
    totals["holder_oncpu_dropped"] = rep.holder_oncpu_dropped;
    if (!t.by_name_source.empty()) {
        nlohmann::ordered_json sources = nlohmann::ordered_json::object();
        for (const auto& [source, share] : t.by_name_source)
            sources[source] = {{"wait_ns", share.wait_ns}, {"locks", share.locks}};
        totals["name_sources"] = sources;
        const NamingShares n = naming_shares(t);
        // Shares of the wait and of the locks named from kernel data, not
        // counting unnamed locks in the kernel image's data (kernel-data).
        totals["named_from_data"] = {{"wait_share", n.wait_share()}, {"lock_share", n.lock_share()}};
    }
    j["totals"] = totals;
    auto locks = nlohmann::ordered_json::array();
    for (const ReportRow& r : rep.rows)
        locks.push_back(row_json(rep, r, period));
    j["locks"] = std::move(locks);
    j["rows_total"] = rep.rows_total;
    auto chains = nlohmann::ordered_json::array();
    for (const Chain& c : rep.chains) {
        nlohmann::ordered_json chain;
        chain["locks"] = c.locks;
        chain["scope"] = c.from_user ? "user" : "kernel";  // of the first lock: the others are the kernel's
        chain["count"] = c.samples;
        chain["wait_ns"] = c.wait_ns;
        chain["cycle"] = c.cycle;
        chain["truncated"] = c.truncated;
        chain["root"] = {
            {"lock", c.root.lock}, {"state", c.root.state}, {"stack", c.root.frames}, {"task", c.root.task}};
        chains.push_back(std::move(chain));
    }
    j["chains"] = std::move(chains);
    j["wait_parts_split"] = rep.wait_parts_split;
    j["holder_split_kept"] = rep.holder_split.kept;
    j["holders_by_task"] = report_holders::by_task_json(rep);  // the waiting each task caused as a holder
    // Per run and per interval, the wait and its parts (all locks).
    auto parts = [&](const LockCounters& c) {
        nlohmann::ordered_json p = counters_json(c, period, rep.wait_parts_split, rep.holder_split.kept), out;
        for (const char* key :
             {"contentions", "wait_ns", "spinning_ns", "queued_on_cpu_ns", "asleep_ns", "runnable_ns", "spin_yields",
              "holder_running_ns", "holder_runnable_ns", "holder_asleep_ns", "holder_unknown_ns"})
            out[key] = p[key];
        return out;
    };
    auto runs = nlohmann::ordered_json::array();
    for (const Report::RunTotals& r : rep.runs) {
        nlohmann::ordered_json run = {{"id", r.id}, {"label", r.label}};
        run.update(parts(r.counters));
        runs.push_back(std::move(run));
    }
    j["runs"] = std::move(runs);
    auto intervals = nlohmann::ordered_json::array();
    for (const IntervalTotals& in : rep.intervals) {
        nlohmann::ordered_json interval = {
            {"run", in.run}, {"index", in.index}, {"seconds", in.seconds()}, {"idle_fraction", in.idle_fraction()}};
        interval.update(parts(in.counters));
        intervals.push_back(std::move(interval));
    }
    j["intervals"] = std::move(intervals);
    if (rep.user_locks.tried)
        j["user_locks"] = report_user_locks::json(rep);
    // Replace rather than throw on invalid UTF-8 from a foreign session.
    return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace lockscope
