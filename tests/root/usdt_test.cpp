// The reference locks' USDT probes recorded by `record -- COMMAND` agree
// with the locks' own in-process counters.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/report.h"
#include "core/session_store.h"
#include "root_helpers.h"
#include "subprocess.h"

namespace lockscope {
namespace {

TEST(UserLocks, UsdtCountsEqualTheInProcessCounters)
{
    LOCKSCOPE_REQUIRE_BPF();
    const std::string out = test::temp_path("usdt.lockscope");
    test::Finished f = test::run({test::lockscope_bin(), "record", "-o", out, "--", test::lockscope_bin(), "bench",
                                  "--lock", "mutex", "-t", "4", "-d", "1", "--repeat", "1", "--format", "json"},
                                 120);
    ASSERT_EQ(f.exit_code, 0) << f.err;
    const auto process = nlohmann::json::parse(f.out).at("process_counters");

    ReportOptions all;
    all.top = SIZE_MAX;
    const Report report = build_report(load_session(out), all);
    LockCounters user;
    for (const ReportRow& r : report.rows)
        if (r.kind == "user-mutex")
            user.add(r.counters);
    ASSERT_GT(user.spin_attempts, 1000u) << "no user-mutex events recorded through USDT";
    EXPECT_EQ(user.spin_successes + user.spin_failures, user.spin_attempts);
    EXPECT_EQ(user.contentions, process.at("contended").get<uint64_t>());
    EXPECT_EQ(user.spin_attempts, process.at("spin_attempts").get<uint64_t>());
    EXPECT_EQ(user.spin_failures, process.at("spin_failures").get<uint64_t>());
    EXPECT_EQ(user.spin_successes, process.at("spin_successes").get<uint64_t>());
}

}  // namespace
}  // namespace lockscope
