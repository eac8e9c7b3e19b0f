// `lockscope diff` on the command line: --alpha has no short spelling any
// more (elsewhere -a means all CPUs), -a still works for now with a note,
// and --min-effect takes a fraction or a percentage.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "diff_fixture.h"
#include "subprocess.h"

namespace lockscope::test {
namespace {

class DiffCli : public ::testing::Test {
protected:
    void SetUp() override
    {
        testing::SessionSpec spec;
        spec.meta = testing::kernel_a_meta();
        spec.locks = testing::default_locks();
        spec.seed = 1;
        testing::write_session(dir_.file("a.lockscope"), spec);
        spec.seed = 2;
        testing::write_session(dir_.file("b.lockscope"), spec);
    }

    Finished diff(std::vector<std::string> args)
    {
        args.insert(args.begin(), {"diff", dir_.file("a.lockscope"), dir_.file("b.lockscope")});
        return run_lockscope(args);
    }

    testing::TempDir dir_;
};

TEST_F(DiffCli, AlphaIsSpelledOutAndTheOldShortSpellingGetsANote)
{
    const Finished help = run_lockscope({"diff", "--help"});
    ASSERT_EQ(help.exit_code, 0) << help.err;
    EXPECT_NE(help.out.find("--alpha"), std::string::npos) << help.out;
    EXPECT_EQ(help.out.find("-a [ --alpha ]"), std::string::npos) << help.out;

    const Finished spelled = diff({"--alpha", "0.01", "--format", "json"});
    ASSERT_EQ(spelled.exit_code, 0) << spelled.err;
    EXPECT_DOUBLE_EQ(nlohmann::json::parse(spelled.out)["alpha"].get<double>(), 0.01);
    EXPECT_EQ(spelled.err.find("note"), std::string::npos) << spelled.err;

    const Finished old = diff({"-a", "0.01", "--format", "json"});
    ASSERT_EQ(old.exit_code, 0) << old.err;
    EXPECT_DOUBLE_EQ(nlohmann::json::parse(old.out)["alpha"].get<double>(), 0.01);
    EXPECT_NE(old.err.find("note: -a 0.01 is read as --alpha 0.01"), std::string::npos) << old.err;
}

TEST_F(DiffCli, MinimumEffectIsAFractionOrAPercentage)
{
    for (const char* given : {"0.1", "10%"}) {
        const Finished f = diff({"--min-effect", given, "--format", "json"});
        ASSERT_EQ(f.exit_code, 0) << given << ": " << f.err;
        EXPECT_DOUBLE_EQ(nlohmann::json::parse(f.out)["min_effect"].get<double>(), 0.1) << given;
    }
    const Finished by_default = diff({"--format", "json"});
    ASSERT_EQ(by_default.exit_code, 0) << by_default.err;
    EXPECT_DOUBLE_EQ(nlohmann::json::parse(by_default.out)["min_effect"].get<double>(), 0.05);
    for (const char* bad : {"1.5", "-1", "five", "150%"}) {
        const Finished f = diff({"--min-effect", bad});
        EXPECT_EQ(f.exit_code, 2) << bad;
        EXPECT_NE(f.err.find("--min-effect"), std::string::npos) << f.err;
    }
}

}  // namespace
}  // namespace lockscope::test
