// The rwsem writer's spin, which the tracepoints do not show: observed in a
// guest whose kernel allows fentry (Debian's 6.1), and on this host said to
// be observable or not, with the rest recorded either way. Counts of
// presence and order, not of time: these run beside other tests.
#include <nlohmann/json.hpp>

#include "core/storage/session_store.h"
#include "lab_helpers.h"

namespace lockscope::test {
namespace {

using nlohmann::json;

TEST(LabRwsemSpin, GuestObservesTheWriterSpinOnUnlink1)
{
    LOCKSCOPE_REQUIRE_LAB();
    const std::string dir = make_temp_dir("lab-unlink1");
    const Finished lab = run(
        {lockscope_bin(), "lab", "--debian-kernel", "6.1", "--workload", "unlink1", "-t", "2", "-d", "2", "-o", dir},
        600);
    ASSERT_EQ(lab.exit_code, 0) << lab.err;
    std::string session;
    for (const auto& entry : std::filesystem::directory_iterator(dir))
        if (entry.path().extension() == ".lockscope")
            session = entry.path().string();
    ASSERT_FALSE(session.empty());
    EXPECT_EQ(load_session(session).meta_value("rwsem_spin_observation").rfind("on (", 0), 0u);
    unsigned long long attempts = 0, failures = 0, queued = 0;
    const json report = report_json(session);
    for (const json& lock : report["locks"]) {
        if (lock["kind"] != "rwsem")
            continue;
        attempts += lock["spin_attempts"].get<unsigned long long>();
        failures += lock["spin_failures"].get<unsigned long long>();
        queued += lock["contentions"].get<unsigned long long>();
    }
    EXPECT_GT(attempts, 0u);
    EXPECT_GT(failures, 0u);
    EXPECT_LE(failures, attempts);
    // Every failed spin queues, and the tracepoints count each queued wait
    // on their own: the fentry count cannot exceed them.
    EXPECT_LE(failures, queued + 2);
}

TEST(LabRwsemSpin, HostSaysWhetherItCanObserveTheSpinAndRecordsTheRest)
{
    if (geteuid() != 0)
        GTEST_SKIP() << "needs root to load BPF programs";
    const Finished info = run({lockscope_bin(), "info"});
    ASSERT_EQ(info.exit_code, 0) << info.err;
    const size_t at = info.out.find("rwsem spin observation: ");
    ASSERT_NE(at, std::string::npos) << info.out;
    const std::string line = info.out.substr(at, info.out.find('\n', at) - at);
    const std::string session = temp_path("host-unlink1.lockscope");
    const Finished rec =
        run({lockscope_bin(), "record", "--workload", "unlink1", "-t", "2", "-d", "1", "-o", session}, 120);
    ASSERT_EQ(rec.exit_code, 0) << rec.err;
    EXPECT_NE(rec.err.find(line), std::string::npos) << rec.err;
    const Session s = load_session(session);
    EXPECT_EQ("rwsem spin observation: " + s.meta_value("rwsem_spin_observation"), line);
    uint64_t contentions = 0;
    const json report = report_json(session);
    for (const auto& lock : report["locks"])
        contentions += lock["contentions"].get<uint64_t>();
    EXPECT_GT(contentions, 0u);
    // This project's hosts refuse fentry; the guests above allow it.
    if (line.find("unavailable") != std::string::npos) {
        EXPECT_EQ(line, "rwsem spin observation: unavailable (fentry refused by this kernel)");
    }
}

}  // namespace
}  // namespace lockscope::test
