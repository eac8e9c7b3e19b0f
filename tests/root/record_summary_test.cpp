// The last line `lockscope record` prints counts what the session holds:
// a program's user-lock waits too, not only the kernel's contentions.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/format.h"
#include "root_helpers.h"
#include "subprocess.h"

namespace lockscope {
namespace {

// `lockscope bench --lock pthread_mutex`: four threads on one glibc mutex for
// a second (one run: the line is what is checked, not the spread),
// a program whose waits are nearly all user-lock waits.
std::vector<std::string> recording(const std::string& file, std::vector<std::string> options)
{
    std::vector<std::string> args = {"record", "-o", file};
    args.insert(args.end(), options.begin(), options.end());
    args.insert(args.end(), {"--", test::lockscope_bin(), "bench", "--lock", "pthread_mutex", "-t", "4", "-d", "1",
                             "--repeat", "1"});
    return args;
}

TEST(RecordSummary, TheLastLineCountsTheUserLockWaits)
{
    LOCKSCOPE_REQUIRE_BPF();
    const std::string file = test::temp_path("summary.lockscope");
    const test::Finished f = test::run_lockscope(recording(file, {}), 180);
    ASSERT_EQ(f.exit_code, 0) << f.err;
    const test::Finished json = test::run_lockscope({"report", file, "--format", "json"});
    ASSERT_EQ(json.exit_code, 0) << json.err;
    const uint64_t waits = nlohmann::json::parse(json.out)["user_locks"]["waits"];
    ASSERT_GT(waits, 100u) << "the bench's mutex was hardly contended";
    EXPECT_NE(f.err.find(" contentions, " + format_count(waits) + " user-lock waits, "), std::string::npos)
        << "the session holds " << waits << " user-lock waits:\n"
        << f.err;

    // No user locks recorded: the line does not count them as 0.
    const test::Finished kernel_only =
        test::run_lockscope(recording(test::temp_path("kernel.lockscope"), {"--no-user-locks"}), 180);
    ASSERT_EQ(kernel_only.exit_code, 0) << kernel_only.err;
    EXPECT_EQ(kernel_only.err.find("user-lock waits"), std::string::npos) << kernel_only.err;
}

}  // namespace
}  // namespace lockscope
