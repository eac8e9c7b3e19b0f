// perf lock contention's option spellings on a recorded session (no
// privileges needed): each means what perf's does (docs/perf-options.md),
// and the spellings they displaced still work, with a note.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "subprocess.h"
#include "recorded_session.h"

namespace lockscope {
namespace {

// A pipe workload recorded at 4 threads on 2 CPUs: a mutex that spins and
// queues, and a few spinlocks.
using test::kRecordedPipe;

nlohmann::json report(std::vector<std::string> extra)
{
    std::vector<std::string> args = {"report", kRecordedPipe, "--format", "json"};
    args.insert(args.end(), extra.begin(), extra.end());
    test::Finished f = test::run_lockscope(args);
    EXPECT_EQ(f.exit_code, 0) << f.err;
    return f.exit_code == 0 ? nlohmann::json::parse(f.out) : nlohmann::json::object();
}

std::vector<std::string> names(const nlohmann::json& j)
{
    std::vector<std::string> out;
    for (const auto& l : j["locks"])
        out.push_back(l["name"]);
    return out;
}

uint64_t u(const nlohmann::json& v)
{
    return v.is_null() ? 0 : v.get<uint64_t>();
}

TEST(PerfOptions, EntriesPrintsThatManyRows)
{
    const nlohmann::json all = report({"-E", "0"});
    ASSERT_GE(all["locks"].size(), 4u) << "the session needs four locks or more";
    EXPECT_EQ(report({"-E", "3"})["locks"].size(), 3u);
    EXPECT_EQ(report({"--entries", "1"})["locks"].size(), 1u);
    // The older names of the row limit are the same option.
    EXPECT_EQ(names(report({"--top", "3"})), names(report({"-E", "3"})));
    EXPECT_EQ(names(report({"-n", "2"})), names(report({"-E", "2"})));
    // In the text too: three rows under the header, and the cut said.
    test::Finished text = test::run_lockscope({"report", kRecordedPipe, "-E", "3"});
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find("(top 3 of " + std::to_string(all["locks"].size()) + " rows by wait_total)"),
              std::string::npos)
        << text.out;
}

TEST(PerfOptions, SortKeysOrderAsPerfs)
{
    auto ordered = [](const nlohmann::json& j, auto key) {
        for (size_t i = 1; i < j["locks"].size(); i++)
            if (key(j["locks"][i - 1]) < key(j["locks"][i]))
                return false;
        return true;
    };
    auto max_wait = [](const nlohmann::json& l) { return double(u(l["max_wait_ns"])); };
    auto contended = [](const nlohmann::json& l) { return double(u(l["contentions"])); };
    auto total = [](const nlohmann::json& l) { return double(u(l["wait_ns"])); };
    auto avg = [](const nlohmann::json& l) {
        return u(l["contentions"]) ? double(u(l["wait_ns"])) / double(u(l["contentions"])) : 0.0;
    };
    const nlohmann::json by_max = report({"-E", "0", "-k", "wait_max"});
    EXPECT_TRUE(ordered(by_max, max_wait)) << by_max["locks"].dump();
    EXPECT_TRUE(ordered(report({"-E", "0", "-k", "contended"}), contended));
    EXPECT_TRUE(ordered(report({"-E", "0", "-k", "avg_wait"}), avg));
    EXPECT_TRUE(ordered(report({"-E", "0", "-k", "wait_total"}), total));
    // The orders differ on this session, so each key is really applied.
    EXPECT_NE(names(by_max), names(report({"-E", "0", "-k", "contended"})));
    EXPECT_EQ(names(report({"-E", "0", "--key", "wait_max"})), names(by_max)) << "perf's long spelling";
    EXPECT_EQ(names(report({"-E", "0", "--sort", "wait_max"})), names(by_max));
    // -E and -k together: the first N in that order.
    const std::vector<std::string> all_by_max = names(by_max);
    ASSERT_GE(all_by_max.size(), 2u);
    EXPECT_EQ(names(report({"-E", "2", "-k", "wait_max"})),
              std::vector<std::string>(all_by_max.begin(), all_by_max.begin() + 2));
    test::Finished min = test::run_lockscope({"report", kRecordedPipe, "-k", "wait_min"});
    EXPECT_EQ(min.exit_code, 2);
    EXPECT_NE(min.err.find("shortest wait"), std::string::npos) << min.err;
}

TEST(PerfOptions, TypeFilterMutexSpinKeepsOnlyTheSpinPhases)
{
    const nlohmann::json all = report({"-E", "0", "-Y", "mutex"});
    const nlohmann::json spin = report({"-E", "0", "-Y", "mutex:spin"});
    ASSERT_FALSE(spin["locks"].empty());
    ASSERT_EQ(spin["locks"].size(), all["locks"].size());
    for (size_t i = 0; i < spin["locks"].size(); i++) {
        const auto& s = spin["locks"][i];
        const auto& whole = all["locks"][i];
        EXPECT_EQ(s["kind"], "mutex");
        // A spin phase is a contention; its time is the wait.
        EXPECT_EQ(u(s["contentions"]), u(whole["spin_attempts"])) << s["name"];
        EXPECT_EQ(u(s["wait_ns"]), u(whole["spin_ns"])) << s["name"];
        EXPECT_EQ(u(s["asleep_ns"]), 0u) << "a spinner does not sleep";
        EXPECT_EQ(u(s["spin_failures"]), u(whole["spin_failures"]));
    }
    EXPECT_EQ(spin["session"]["filters"], "kind mutex:spin");
    // perf's mutex: the whole waits, as --kind mutex.
    EXPECT_EQ(all["totals"]["wait_ns"], report({"-E", "0", "--kind", "mutex"})["totals"]["wait_ns"]);
    EXPECT_GE(u(all["totals"]["wait_ns"]), u(spin["totals"]["wait_ns"]));
}

TEST(PerfOptions, TypeFilterTakesPerfsSpellings)
{
    const nlohmann::json spin = report({"-E", "0", "-Y", "spinlock"});
    ASSERT_FALSE(spin["locks"].empty());
    for (const auto& l : spin["locks"])
        EXPECT_EQ(l["kind"], "spinlock");
    EXPECT_EQ(spin["totals"], report({"-E", "0", "--kind", "spinlock"})["totals"]);
    // rwsem:R, rwsem:W, rwlock:R and rt-mutex match nothing in this session.
    for (const char* none : {"rwsem:R", "rwsem:W", "rwlock:R", "rwlock-rt:W", "pcpu-sem:R", "rt-mutex", "semaphore"})
        EXPECT_TRUE(report({"-Y", none})["locks"].empty()) << none;
    EXPECT_EQ(report({"-E", "0", "-Y", "rwsem:W,spinlock"})["totals"], spin["totals"]) << "a comma list";
    EXPECT_EQ(test::run_lockscope({"report", kRecordedPipe, "-Y", "mutex:R"}).exit_code, 2)
        << "a mutex has no reader side";
}

TEST(PerfOptions, LockAndCallstackFilters)
{
    const nlohmann::json pipe = report({"-E", "0", "-L", "pipe->mutex"});
    ASSERT_EQ(names(pipe), std::vector<std::string>{"pipe->mutex"});
    const nlohmann::json two = report({"-E", "0", "-L", "pipe->mutex,spinlock@swake_up_one"});
    EXPECT_EQ(two["locks"].size(), 2u) << "a comma list, as perf's";
    test::Finished address = test::run_lockscope({"report", kRecordedPipe, "-L", "0xffff888012345678"});
    EXPECT_EQ(address.exit_code, 2);
    EXPECT_NE(address.err.find("address"), std::string::npos) << address.err;
    // -S: a substring of any frame of the lock's sampled stacks or its caller.
    const std::vector<std::string> on_pipe_read = names(report({"-E", "0", "-S", "pipe_read"}));
    ASSERT_FALSE(on_pipe_read.empty());
    EXPECT_LT(on_pipe_read.size(), report({"-E", "0"})["locks"].size());
    EXPECT_NE(std::find(on_pipe_read.begin(), on_pipe_read.end(), "pipe->mutex"), on_pipe_read.end());
    EXPECT_TRUE(report({"-S", "no_kernel_function_is_called_this"})["locks"].empty());
}

TEST(PerfOptions, ThreadsAndLockCgroupGroupAsPerfs)
{
    EXPECT_EQ(report({"-t"})["group_by"], "task");
    EXPECT_EQ(report({"--threads"})["group_by"], "task");
    EXPECT_EQ(report({"--lock-cgroup"})["group_by"], "cgroup");
    EXPECT_EQ(test::run_lockscope({"report", kRecordedPipe, "-t", "--by", "caller"}).exit_code, 2);
}

TEST(PerfOptions, OldSpellingsStillWorkWithANote)
{
    test::Finished by = test::run_lockscope({"report", kRecordedPipe, "-b", "caller", "--format", "json"});
    ASSERT_EQ(by.exit_code, 0) << by.err;
    EXPECT_EQ(nlohmann::json::parse(by.out)["group_by"], "caller");
    EXPECT_NE(by.err.find("note: -b caller is read as --by caller"), std::string::npos) << by.err;
    test::Finished format = test::run_lockscope({"report", kRecordedPipe, "-F", "json"});
    ASSERT_EQ(format.exit_code, 0) << format.err;
    EXPECT_TRUE(nlohmann::json::accept(format.out)) << format.out;
    EXPECT_NE(format.err.find("note: -F json is read as --format json"), std::string::npos) << format.err;
    // -b alone is perf's BPF switch: accepted, nothing changes.
    test::Finished bpf = test::run_lockscope({"report", kRecordedPipe, "-b", "--format", "json"});
    ASSERT_EQ(bpf.exit_code, 0) << bpf.err;
    EXPECT_EQ(nlohmann::json::parse(bpf.out)["group_by"], "lock");
    // perf's -F (a choice of columns) is not offered: said, not misread.
    test::Finished fields = test::run_lockscope({"report", kRecordedPipe, "-F", "contended,wait_total"});
    EXPECT_EQ(fields.exit_code, 2);
    EXPECT_NE(fields.err.find("-F/--field"), std::string::npos) << fields.err;
}

TEST(PerfOptions, ExportTakesTheSameRowsAndOrder)
{
    test::Finished csv =
        test::run_lockscope({"export", kRecordedPipe, "--format", "csv", "-E", "2", "-k", "contended"});
    ASSERT_EQ(csv.exit_code, 0) << csv.err;
    EXPECT_EQ(std::count(csv.out.begin(), csv.out.end(), '\n'), 3) << csv.out;  // header + 2
    const std::vector<std::string> first = names(report({"-E", "2", "-k", "contended"}));
    for (const std::string& name : first)
        EXPECT_NE(csv.out.find(name), std::string::npos) << name << "\n" << csv.out;
    test::Finished old = test::run_lockscope({"export", kRecordedPipe, "-F", "folded"});
    ASSERT_EQ(old.exit_code, 0) << old.err;
    EXPECT_NE(old.err.find("note: -F folded is read as --format folded"), std::string::npos) << old.err;
}

TEST(PerfOptions, RecordTimeSpellingsAreCheckedBeforeRecording)
{
    // Bad values are usage errors on record and top, before any privilege check.
    for (const char* command : {"record", "top"}) {
        EXPECT_EQ(test::run_lockscope({command, "-a", "-p", "1", "-d", "1"}).exit_code, 2) << command;
        EXPECT_EQ(test::run_lockscope({command, "-C", "100000", "-d", "1"}).exit_code, 2) << command;
        EXPECT_EQ(test::run_lockscope({command, "-C", "3-1", "-d", "1"}).exit_code, 2) << command;
        test::Finished spin = test::run_lockscope({command, "-Y", "mutex:spin", "-d", "1"});
        EXPECT_EQ(spin.exit_code, 2) << command;
        EXPECT_NE(spin.err.find("lockscope report FILE -Y mutex:spin"), std::string::npos) << spin.err;
    }
    // perf's -G/--cgroup-filter is --cgroup: the same cgroup is looked up, and
    // one that does not exist is the same error.
    const test::Finished g =
        test::run_lockscope({"record", "-G", "no-such-cgroup", "-d", "1", "-o", test::temp_path("g.lockscope")});
    const test::Finished cgroup =
        test::run_lockscope({"record", "--cgroup", "no-such-cgroup", "-d", "1", "-o", test::temp_path("c.lockscope")});
    EXPECT_NE(g.exit_code, 0);
    EXPECT_EQ(g.exit_code, cgroup.exit_code);
    EXPECT_NE(g.err.find("no such cgroup 'no-such-cgroup'"), std::string::npos) << g.err;
    EXPECT_EQ(g.err, cgroup.err);
    test::Finished tid =
        test::run_lockscope({"record", "--tid", "2147483646", "-d", "1", "-o", test::temp_path("t.lockscope")});
    EXPECT_EQ(tid.exit_code, 1);
    EXPECT_NE(tid.err.find("no thread with TID 2147483646"), std::string::npos) << tid.err;
}

}  // namespace
}  // namespace lockscope
