// One truth on recorded sessions (DESIGN.md): the pipe workload, unlink1 and
// a program with pthread mutexes recorded by `lockscope record`, then read
// through every door as a user would: `report` as text, JSON and CSV,
// `export` as csv (locks, user-locks, intervals), folded (both weights) and
// pprof, the Prometheus exposition fed the session's intervals as the
// recorder feeds it, and the dashboard's tables. Lock by lock, every door
// must give the same contentions and the same four parts of the wait, to
// the nanosecond.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/analysis/report.h"
#include "core/storage/session_store.h"
#include "doors.h"
#include "root_helpers.h"
#include "subprocess.h"
#include "test_program.h"
#ifdef LOCKSCOPE_TEST_GUI
#include "doors_gui.h"
#endif

namespace lockscope {
namespace {

using doors::View;

std::string read_file(const std::string& path)
{
    std::stringstream s;
    s << std::ifstream(path, std::ios::binary).rdbuf();
    return s.str();
}

// `lockscope ARGS` that must succeed: its stdout.
std::string lockscope(const std::vector<std::string>& args)
{
    const test::Finished f = test::run_lockscope(args);
    std::string command = "lockscope";
    for (const std::string& a : args)
        command += " " + a;
    EXPECT_EQ(f.exit_code, 0) << command << ": " << f.err;
    return f.out;
}

void expect_every_door_agrees(const std::string& file)
{
    const View json = doors::from_json(lockscope({"report", file, "--format", "json", "-E", "0"}));
    ASSERT_FALSE(json.empty()) << "nothing recorded in " << file;
    const View kernel = doors::kernel_only(json);
    doors::expect_text_matches(lockscope({"report", file, "-E", "0"}), json);
    doors::expect_same(kernel, "report json",
                       doors::from_csv(lockscope({"report", file, "--format", "csv", "-E", "0"})), "report csv");
    View exported = doors::from_csv(lockscope({"export", file, "--format", "csv"}));
    View users = doors::from_user_locks_csv(lockscope({"export", file, "--format", "csv", "--table", "user-locks"}));
    exported.merge(users);
    doors::expect_same(json, "report json", exported, "export csv");
    doors::expect_same(json, "report json",
                       doors::from_folded(lockscope({"export", file, "--format", "folded"}),
                                          lockscope({"export", file, "--format", "folded", "--weight", "contentions"})),
                       "export folded");
    const std::string profile = test::temp_path("consistency.pb.gz");
    lockscope({"export", file, "--format", "pprof", "-o", profile, "--force"});
    doors::expect_same(json, "report json", doors::from_pprof(read_file(profile)), "export pprof");
    doors::expect_same(json, "report json", doors::from_prometheus(doors::prometheus_of(load_session(file))),
                       "prometheus");
#ifdef LOCKSCOPE_TEST_GUI
    doors::expect_same(json, "report json", doors::from_gui(file), "dashboard");
#endif
    // The intervals: the JSON report's and the CSV export's, alike.
    const nlohmann::json j = nlohmann::json::parse(lockscope({"report", file, "--format", "json", "-E", "0"}));
    const auto rows = doors::csv_records(lockscope({"export", file, "--format", "csv", "--table", "intervals"}));
    ASSERT_EQ(rows.size(), j["intervals"].size());
    for (size_t i = 0; i < rows.size(); ++i) {
        for (const char* key :
             {"contentions", "wait_ns", "spinning_ns", "queued_on_cpu_ns", "asleep_ns", "runnable_ns"})
            EXPECT_EQ(rows[i].at(key), std::to_string(j["intervals"][i][key].get<uint64_t>())) << key << " " << i;
        // A run's first interval has each lock's first maximum of the run,
        // every one measured: its longest wait is known.
        if (rows[i].at("interval") == "0") {
            EXPECT_EQ(rows[i].at("max_wait_ns"), rows[i].at("max_wait_bound_ns")) << "interval " << i;
        } else if (!rows[i].at("max_wait_ns").empty()) {
            EXPECT_LE(std::stoull(rows[i].at("max_wait_ns")), std::stoull(rows[i].at("max_wait_bound_ns")));
        }
    }
}

TEST(Consistency, PipeWorkload)
{
    LOCKSCOPE_REQUIRE_BPF();
    const std::string file = test::temp_path("consistency-pipe.lockscope");
    lockscope({"record", "--force", "-o", file, "--workload", "pipe", "-t", "4", "-d", "2"});
    expect_every_door_agrees(file);
}

TEST(Consistency, Unlink1Workload)
{
    LOCKSCOPE_REQUIRE_BPF();
    const std::string file = test::temp_path("consistency-unlink1.lockscope");
    lockscope({"record", "--force", "-o", file, "--workload", "unlink1", "-t", "4", "-d", "2"});
    expect_every_door_agrees(file);
}

// userlock_prog's pthread mutexes, rwlock and condition variable, under
// `lockscope record -- PROGRAM`: its user locks beside the kernel's.
TEST(Consistency, ProgramWithPthreadMutexes)
{
    LOCKSCOPE_REQUIRE_BPF();
    const std::string file = test::temp_path("consistency-userlock.lockscope");
    const std::string bin = test::lockscope_bin();
    test::Program recorder(bin.c_str(), {"record", "--force", "-o", file, "--", USERLOCK_PROG, "1500"});
    std::string line;
    while (recorder.line(line, 60000) && line != "ready") {
    }
    ASSERT_EQ(line, "ready") << "the program did not start under lockscope record";
    recorder.say("go\n");
    while (recorder.line(line, 60000) && line != "done") {
    }
    ASSERT_EQ(line, "done") << "the program did not finish";
    ASSERT_TRUE(recorder.finish_within(120)) << "lockscope record did not end";
    const nlohmann::json j = nlohmann::json::parse(lockscope({"report", file, "--format", "json", "-E", "0"}));
    ASSERT_TRUE(j.contains("user_locks") && !j["user_locks"]["rows"].empty()) << "no user lock recorded";
    expect_every_door_agrees(file);
}

}  // namespace
}  // namespace lockscope
