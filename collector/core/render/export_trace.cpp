// `lockscope export --format chrome-trace`: the Trace Event format
// (the JSON object form) that Perfetto UI and chrome://tracing open.
// Events are written as they are read: a trace of millions of episodes
// never sits in memory.
#include "core/render/export.h"

#include "core/analysis/report.h"  // wait_parts_split
#include "core/analysis/report_parts.h"
#include "core/lock_key.h"
#include "core/storage/session_store.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>

namespace lockscope {
namespace {

// The machine-wide counter tracks live in a process of their own.
constexpr uint32_t kMachinePid = 0;

std::string quoted(const std::string& s)
{
    return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Trace timestamps are µs; three decimals keep the recorded ns exactly.
class Clock {
public:
    explicit Clock(uint64_t origin_ns) : origin_(origin_ns) {}
    std::string us(uint64_t ns) const { return duration(ns >= origin_ ? ns - origin_ : 0); }
    static std::string duration(uint64_t ns)
    {
        std::string frac = std::to_string(ns % 1000);
        return std::to_string(ns / 1000) + '.' + std::string(3 - frac.size(), '0') + frac;
    }

private:
    uint64_t origin_;
};

// Writes the elements of "traceEvents", comma-separated.
class EventList {
public:
    explicit EventList(std::ostream& out) : out_(out) {}
    std::ostream& next()
    {
        out_ << (first_ ? "\n" : ",\n");
        first_ = false;
        return out_;
    }

private:
    std::ostream& out_;
    bool first_ = true;
};

void name_tracks(const Session& session, EventList& events)
{
    events.next() << R"({"name":"process_name","ph":"M","pid":)" << kMachinePid << R"(,"args":{"name":"machine"}})";
    std::map<uint32_t, std::string> processes;  // tgid -> name
    std::map<std::pair<uint32_t, uint32_t>, std::string> threads;
    for (const TaskStats& t : session.tasks) {
        threads[{t.tgid, t.pid}] = t.comm;
        if (t.pid == t.tgid || !processes.count(t.tgid))
            processes[t.tgid] = t.comm;
    }
    for (const auto& [tgid, name] : processes)
        events.next() << R"({"name":"process_name","ph":"M","pid":)" << tgid << R"(,"args":{"name":)"
                      << quoted(name + " " + std::to_string(tgid)) << "}}";
    for (const auto& [key, name] : threads)
        events.next() << R"({"name":"thread_name","ph":"M","pid":)" << key.first << R"(,"tid":)" << key.second
                      << R"(,"args":{"name":)" << quoted(name + " " + std::to_string(key.second)) << "}}";
}

void counter(EventList& events, const Clock& clock, const char* name, uint64_t ns, const char* series, double value)
{
    events.next() << R"({"name":")" << name << R"(","ph":"C","pid":)" << kMachinePid << R"(,"ts":)" << clock.us(ns)
                  << R"(,"args":{")" << series << "\":" << nlohmann::json(value).dump() << "}}";
}

// The wait's four parts of an interval, in ms of wait per second of the
// interval: one counter track, stacked (report_parts.h).
void wait_parts_counter(EventList& events, const Clock& clock, uint64_t ns, const IntervalTotals& in)
{
    const double secs = in.seconds();
    const auto parts = wait_parts(in.counters);
    std::ostream& out = events.next();
    out << R"({"name":"wait ms/s","ph":"C","pid":)" << kMachinePid << R"(,"ts":)" << clock.us(ns) << R"(,"args":{)";
    for (size_t i = 0; i < kWaitPartCount; ++i)
        out << (i ? "," : "") << '"' << kWaitParts[i].name
            << "\":" << nlohmann::json(secs > 0 ? double(parts[i]) / 1e6 / secs : 0.0).dump();
    out << "}}";
}

void counter_tracks(const Session& session, const Clock& clock, EventList& events)
{
    const bool split = wait_parts_split(session.schema_version);
    for (size_t i = 0; i < session.intervals.size(); ++i) {
        const IntervalTotals& in = session.intervals[i];
        const double secs = in.seconds();
        const double idle = in.idle_fraction() * 100.0;
        const double rate = secs > 0 ? double(in.counters.contentions) / secs : 0.0;
        counter(events, clock, "CPU idle", in.start_ns, "idle %", idle);
        counter(events, clock, "contentions/s", in.start_ns, "contentions/s", rate);
        if (split)
            wait_parts_counter(events, clock, in.start_ns, in);
        // A counter holds its value until the next sample: close the run's last
        // interval at its end so the track does not run on into the next run.
        const bool last_of_run = i + 1 == session.intervals.size() || session.intervals[i + 1].run != in.run;
        if (last_of_run) {
            counter(events, clock, "CPU idle", in.end_ns, "idle %", idle);
            counter(events, clock, "contentions/s", in.end_ns, "contentions/s", rate);
            if (split)
                wait_parts_counter(events, clock, in.end_ns, in);
        }
    }
}

// The parts of a slice's args that are the same for every episode of a lock.
struct LockLabel {
    std::string name;  // quoted
    std::string args;  // "lock":...,"kind":...,"caller":...
};

LockLabel label_of(const LockInfo* lock, const Episode& e)
{
    if (!lock) {
        const std::string name = "lock@" + std::to_string(e.lock_address);
        return {quoted(name), R"("lock":)" + quoted(name)};
    }
    const std::string kind = kind_text(lock->kind, lock->mode);
    return {quoted(lock->name),
            R"("lock":)" + quoted(lock->name) + R"(,"kind":)" + quoted(kind) + R"(,"caller":)" + quoted(lock->caller)};
}

// The part of a queued phase after its waiter was woken: where a flow arrow
// from the waker lands. Only a wake inside a queued phase, after its start,
// splits it; any other (an old session's, a wake the clock places elsewhere)
// draws no arrow.
struct Wake {
    size_t phase = SIZE_MAX;  // the queued phase the wake splits; SIZE_MAX: none
    uint64_t ns = 0;
};

Wake wake_of(const Episode& e)
{
    if (!e.waker_tid || !e.wake_ns)
        return {};
    for (size_t i = 0; i < e.phases.size(); ++i) {
        const EpisodePhase& p = e.phases[i];
        if (!p.spin && p.start_ns < e.wake_ns && e.wake_ns < e.phase_end(i))
            return {i, e.wake_ns};
    }
    return {};
}

void slice(EventList& events, const LockLabel& label, const Episode& e, const char* cat, uint64_t start, uint64_t end,
           const EpisodePhase& p, const Clock& clock)
{
    std::ostream& out = events.next();
    out << R"({"name":)" << label.name << R"(,"cat":")" << cat << R"(","ph":"X","pid":)" << e.tgid << R"(,"tid":)"
        << e.tid << R"(,"ts":)" << clock.us(start) << R"(,"dur":)" << Clock::duration(end - start) << R"(,"args":{)"
        << label.args << R"(,"phase":")" << cat << '"';
    if (p.owner >= 0)
        out << R"(,"owner":")" << owner_state_name(p.owner) << '"';
    // The episode's off-CPU parts (asleep, runnable) are exact; its spin
    // phases' time includes whatever of it they spent off CPU.
    out << R"(,"episode_wait_ns":)" << e.wait_ns() << R"(,"episode_spin_ns":)" << e.spin_ns << R"(,"offcpu_ns":)"
        << (e.sleep_ns + e.preempt_ns) << R"(,"asleep_ns":)" << e.sleep_ns << R"(,"runnable_ns":)" << e.preempt_ns
        << R"(,"sleeps":)" << e.sleeps << R"(,"preemptions":)" << e.preemptions;
    if (e.waker_tid)
        out << R"(,"waker":)" << e.waker_tid;
    if (e.ret)
        out << R"(,"ret":)" << e.ret;
    if (e.truncated)
        out << R"(,"truncated":true)";
    out << "}}";
}

// Who unblocked whom: a 1 ns "wakes" slice on the waker's thread at the
// wake-up, and a flow from it to the waiter's "woken" slice, which starts at
// the same instant. Flow events carry their slice's pid, tid, ts and cat, so
// viewers that bind flows by those (Chrome) and those that bind to the
// enclosing slice (Perfetto, "bp":"e") draw the same arrow.
void wake_flow(EventList& events, const Episode& e, const LockLabel& label, uint64_t id, uint64_t wake_ns,
               const Clock& clock)
{
    const uint32_t waker_pid = e.waker_tgid ? e.waker_tgid : e.waker_tid;
    const std::string ts = clock.us(wake_ns);
    events.next() << R"({"name":"wakes )" << e.tid << R"(","cat":"woken","ph":"X","pid":)" << waker_pid << R"(,"tid":)"
                  << e.waker_tid << R"(,"ts":)" << ts << R"(,"dur":0.001,"args":{)" << label.args << R"(,"woken_tid":)"
                  << e.tid << "}}";
    events.next() << R"({"name":"wakeup","cat":"woken","ph":"s","id":)" << id << R"(,"pid":)" << waker_pid
                  << R"(,"tid":)" << e.waker_tid << R"(,"ts":)" << ts << "}";
    events.next() << R"({"name":"wakeup","cat":"woken","ph":"f","bp":"e","id":)" << id << R"(,"pid":)" << e.tgid
                  << R"(,"tid":)" << e.tid << R"(,"ts":)" << ts << "}";
}

// The episode's phases as slices on its thread's track; returns true when a
// wake-up flow was drawn.
bool episode_slices(const Episode& e, const LockLabel& label, const Clock& clock, EventList& events, uint64_t flow_id)
{
    const Wake wake = wake_of(e);
    for (size_t i = 0; i < e.phases.size(); ++i) {
        const EpisodePhase& p = e.phases[i];
        const char* cat = p.spin ? "spin" : "queued";
        if (i != wake.phase) {
            slice(events, label, e, cat, p.start_ns, e.phase_end(i), p, clock);
            continue;
        }
        slice(events, label, e, cat, p.start_ns, wake.ns, p, clock);
        slice(events, label, e, "woken", wake.ns, e.phase_end(i), p, clock);
        wake_flow(events, e, label, flow_id, wake.ns, clock);
    }
    return wake.phase != SIZE_MAX;
}

// A user-space lock's futex wait (Episode::futex_wait()): one slice for the
// whole wait, category "user", named by the lock, split at its waiter's last
// wakeup ("woken") with a flow from the waker, as a kernel lock's queued
// phase is. Its args say the wait's parts.
bool user_wait_slices(const Episode& e, const LockLabel& label, const Clock& clock, EventList& events, uint64_t flow_id)
{
    const bool woken = e.waker_tid && e.begin_ns < e.wake_ns && e.wake_ns < e.end_ns;
    const auto one = [&](const char* cat, uint64_t start, uint64_t end) {
        events.next() << R"({"name":)" << label.name << R"(,"cat":")" << cat << R"(","ph":"X","pid":)" << e.tgid
                      << R"(,"tid":)" << e.tid << R"(,"ts":)" << clock.us(start) << R"(,"dur":)"
                      << Clock::duration(end - start) << R"(,"args":{)" << label.args << R"(,"scope":"user","phase":")"
                      << cat << R"(","wait_ns":)" << e.wait_ns() << R"(,"oncpu_ns":)" << e.spin_ns << R"(,"asleep_ns":)"
                      << e.sleep_ns << R"(,"runnable_ns":)" << e.preempt_ns
                      << (e.waker_tid ? R"(,"waker":)" + std::to_string(e.waker_tid) : "")
                      << (e.ret ? R"(,"ret":)" + std::to_string(e.ret) : "") << "}}";
    };
    if (!woken) {
        one("user", e.begin_ns, e.end_ns);
        return false;
    }
    one("user", e.begin_ns, e.wake_ns);
    one("woken", e.wake_ns, e.end_ns);
    wake_flow(events, e, label, flow_id, e.wake_ns, clock);
    return true;
}

}  // namespace

ChromeTraceSummary export_chrome_trace(const std::string& path, const Session& session, std::ostream& out,
                                       LockScope scope)
{
    const bool with_kernel = scope != LockScope::User, with_user = scope != LockScope::Kernel;
    ChromeTraceSummary sum;
    sum.traced = session.meta_value("trace") == "on";
    for (const RunInfo& r : session.runs)
        sum.lost += r.lost.ring_buffer;
    EpisodeReader reader(path);
    uint64_t origin = session.runs.empty() ? 0 : session.runs.front().start_ns;
    if (!session.intervals.empty())
        origin = std::min(origin ? origin : UINT64_MAX, session.intervals.front().start_ns);
    if (sum.traced && reader.count())
        origin = std::min(origin ? origin : UINT64_MAX, reader.first_begin_ns());
    const Clock clock(origin);

    out << R"({"displayTimeUnit":"ns","traceEvents":[)";
    EventList events(out);
    name_tracks(session, events);
    counter_tracks(session, clock, events);
    if (sum.traced) {
        std::unordered_map<int64_t, LockLabel> labels;
        // The user locks' futex words: (run, process, address) -> label.
        std::map<std::tuple<int64_t, uint32_t, uint64_t>, LockLabel> words;
        for (const UserLockWord& w : session.user_lock_words)
            words[{w.run, w.pid, w.address}] = {quoted(w.name),
                                                R"("lock":)" + quoted(w.name) + R"(,"kind":)" + quoted(w.kind)};
        const bool filtered = session.meta.count("filters") != 0;
        sum.skipped = reader.for_each([&](const Episode& e) {
            if (e.futex_wait()) {
                if (!with_user)
                    return;
                const auto word = words.find({e.run, e.tgid, e.lock_address});
                if (word == words.end())
                    return;  // a word the file does not name (cut short)
                if (user_wait_slices(e, word->second, clock, events, sum.flows + 1))
                    sum.flows++;
                sum.user_waits++;
                return;
            }
            if (!with_kernel)
                return;
            if (filtered && !session.lock(e.lock_id))
                return;  // a lock the filters left out
            auto it = labels.find(e.lock_id);
            if (it == labels.end() || e.lock_id == 0)
                it = labels.insert_or_assign(e.lock_id, label_of(session.lock(e.lock_id), e)).first;
            if (episode_slices(e, it->second, clock, events, sum.flows + 1))
                sum.flows++;
            sum.episodes++;
            sum.truncated += e.truncated ? 1 : 0;
        });
    }
    nlohmann::ordered_json other;
    other["session"] = session.meta;
    other["time_origin_ns"] = origin;
    other["traced"] = sum.traced;
    other["episodes"] = sum.episodes;
    other["user_lock_waits"] = sum.user_waits;
    other["episodes_lost"] = sum.lost;
    other["episodes_truncated"] = sum.truncated;
    other["wakeup_flows"] = sum.flows;
    out << "\n],\"otherData\":" << other.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace)
        << "}\n";
    return sum;
}

}  // namespace lockscope
