#include "core/format.h"

#include "core/enum_names.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <ctime>
#include <set>
#include <string>
#include <vector>

using namespace lockscope;

TEST(FormatTest, DurationsPickAHumanUnit)
{
    EXPECT_EQ(format_duration(0), "0 ns");
    EXPECT_EQ(format_duration(850), "850 ns");
    EXPECT_EQ(format_duration(4200), "4.20 µs");
    EXPECT_EQ(format_duration(12'345'678), "12.3 ms");
    EXPECT_EQ(format_duration(999'999'999), "1.00 s");
    EXPECT_EQ(format_duration(1.05e9, true), "1.05s");
    EXPECT_EQ(format_duration(123e9), "123 s");
    EXPECT_EQ(format_duration(5000e9), "5000 s");
    EXPECT_EQ(format_duration(-1), "-");
}

TEST(FormatTest, CountsRatesAndPercentages)
{
    EXPECT_EQ(format_count(0), "0");
    EXPECT_EQ(format_count(999), "999");
    EXPECT_EQ(format_count(12'345'678), "12,345,678");
    EXPECT_EQ(format_count_short(950), "950");
    EXPECT_EQ(format_count_short(12'340), "12.3k");
    EXPECT_EQ(format_count_short(4'560'000), "4.56M");
    EXPECT_EQ(format_rate(205.84), "205.8/s");
    EXPECT_EQ(format_rate(1'230'000), "1.23M/s");
    EXPECT_EQ(format_rate(50'000, "ops"), "50.0k ops/s");
    EXPECT_EQ(format_percent(0.421), "42.1%");
    EXPECT_EQ(format_percent(1.0, 0), "100%");
}

// A value that is not zero never prints as zero: a diff's "0.0% → 0.0%,
// +269%" or a report's "fail% 0%" beside 69 failures in 14,694 attempts
// could not be read against its verdict.
TEST(FormatTest, SmallValuesKeepTheirDigits)
{
    EXPECT_EQ(format_percent(69.0 / 14694, 0), "0.47%");
    EXPECT_EQ(format_percent(0.0000187), "0.0019%");
    EXPECT_EQ(format_percent(0.0), "0.0%");
    EXPECT_EQ(format_percent(1e-9), "<0.0001%");
    EXPECT_EQ(format_percent(0.421), "42.1%");  // unchanged where the digits suffice
    EXPECT_EQ(format_duration(0.312, true), "0.312ns");
    EXPECT_EQ(format_duration(3.5), "3.5 ns");
    EXPECT_EQ(format_duration(0), "0 ns");
    EXPECT_EQ(format_percent_cell(69.0 / 14694), "0.47%");
    EXPECT_EQ(format_percent_cell(0.00001), "<.01%");
    EXPECT_EQ(format_percent_cell(0.0), "0%");
    EXPECT_EQ(format_percent_cell(0.05), "5.0%");
    EXPECT_EQ(format_percent_cell(1.0), "100%");
    for (double v : {1e-7, 0.004, 0.09, 0.5, 1.0})
        EXPECT_LE(format_percent_cell(v).size(), 5u) << v;
}

TEST(FormatTest, TruncatesByDisplayWidth)
{
    EXPECT_EQ(display_width("4.20 µs"), 7u);
    EXPECT_EQ(truncate_display("short", 10), "short");
    EXPECT_EQ(truncate_display("mmap_lock_writer", 8), "mmap_lo…");
    EXPECT_EQ(display_width(truncate_display("µµµµµµ", 4)), 4u);
}

TEST(FormatTest, MiddleCutKeepsTheEnd)
{
    EXPECT_EQ(truncate_middle("pipe_inode_info.mutex.wait_lock", 25, 9), "pipe_inode_info…wait_lock");
    EXPECT_EQ(truncate_middle("short", 5, 2), "short");
    EXPECT_EQ(display_width(truncate_middle("µµµµµµµµ", 5, 2)), 5u);
}

TEST(FormatTest, CutsKeepNamesThatDifferApart)
{
    // The same class's mutex, its wait_lock and two instances: at 14 columns
    // every one is cut, none alike, none wider.
    const std::vector<std::string> names = {"pipe_inode_info.mutex", "pipe_inode_info.mutex.wait_lock",
                                            "pipe_inode_info.mutex #1", "pipe_inode_info.mutex #2", "short"};
    const auto cut = cut_apart(names, 14);
    ASSERT_TRUE(cut);
    EXPECT_EQ(std::set<std::string>(cut->begin(), cut->end()).size(), names.size());
    for (const std::string& c : *cut)
        EXPECT_LE(display_width(c), 14u) << c;
    EXPECT_EQ((*cut)[1].substr((*cut)[1].size() - 10), ".wait_lock");
    EXPECT_EQ((*cut)[4], "short");
    // Names that differ only in the middle take a cut that shows the middle.
    const auto middle = cut_apart({"abcdefXghijkl", "abcdefYghijkl"}, 10);
    ASSERT_TRUE(middle);
    EXPECT_NE((*middle)[0], (*middle)[1]);
    // Where no cut at this width can tell them apart, none is made.
    EXPECT_FALSE(cut_apart({"aXb", "aYb"}, 2));
}

TEST(FormatTest, DecimalsAreNeverExponents)
{
    EXPECT_EQ(format_decimal(1.77414e-05), "0.0000177414");
    EXPECT_EQ(format_decimal(1234567.8), "1234568");
    EXPECT_EQ(format_decimal(0.25), "0.25");
    EXPECT_EQ(format_decimal(0), "0");
    EXPECT_EQ(format_decimal(-3.5), "-3.5");
    EXPECT_EQ(format_decimal(12.0), "12");
}

TEST(FormatTest, LocalTimeFollowsTheFormat)
{
    // The C library's own clock is the observer: the year and the literal
    // text around the fields come back as written.
    const time_t now = time(nullptr);
    tm local{};
    localtime_r(&now, &local);
    const std::string year = std::to_string(local.tm_year + 1900);
    const std::string name = format_local_now("lockscope-%Y.lockscope");
    EXPECT_TRUE(name == "lockscope-" + year + ".lockscope" ||
                name == "lockscope-" + std::to_string(local.tm_year + 1901) + ".lockscope")
        << name;
    EXPECT_EQ(format_local_now("%H:%M:%S").size(), 8u);
    EXPECT_EQ(format_local_now(""), "");
}

TEST(FormatTest, NaturalOrderReadsNumbersAsNumbers)
{
    EXPECT_TRUE(natural_less("6.1.0-9-amd64", "6.1.0-10-amd64"));
    EXPECT_FALSE(natural_less("6.1.0-10-amd64", "6.1.0-9-amd64"));
    EXPECT_TRUE(natural_less("6.1.0-47", "6.12.0-1"));
    EXPECT_FALSE(natural_less("6.1", "6.1"));
    EXPECT_TRUE(natural_less("6.1", "6.1.0"));  // a prefix first
    EXPECT_TRUE(natural_less("6.1.0-9", "6.1.0-rc"));
    // Leading zeros do not make a number larger; numbers longer than any
    // integer type still order.
    EXPECT_FALSE(natural_less("6.010", "6.9"));
    EXPECT_FALSE(natural_less("007", "7"));
    EXPECT_FALSE(natural_less("7", "007"));
    EXPECT_TRUE(natural_less("99999999999999999999998", "99999999999999999999999"));
    std::vector<std::string> names = {"6.1.0-47", "6.1.0-9", "5.10.0-28", "6.1.0-10"};
    std::sort(names.begin(), names.end(), natural_less);
    EXPECT_EQ(names, (std::vector<std::string>{"5.10.0-28", "6.1.0-9", "6.1.0-10", "6.1.0-47"}));
}

TEST(FormatTest, CsvFieldsAreQuotedOnlyWhereTheyMustBe)
{
    EXPECT_EQ(csv_field("rtnl_mutex"), "rtnl_mutex");
    EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
    EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
    EXPECT_EQ(csv_field("two\nlines"), "\"two\nlines\"");
    // Another separator: a comma is then plain text.
    EXPECT_EQ(csv_field("a,b", ";"), "a,b");
    EXPECT_EQ(csv_field("a;b", ";"), "\"a;b\"");
    EXPECT_EQ(function_of("pipe_write+0x1a/0x40"), "pipe_write");
    EXPECT_EQ(function_of("pipe_write"), "pipe_write");
}

TEST(FormatTest, EnumNamesReadBackAndListForAUsageError)
{
    enum class Side { Left, Right, Both };
    static constexpr std::array<const char*, 3> kNames{"left", "right", "both"};
    EXPECT_STREQ(enum_name<Side::Both>(kNames, Side::Right), "right");
    EXPECT_TRUE(enum_value<Side::Both>(kNames, "both") == Side::Both);
    EXPECT_FALSE(enum_value<Side::Both>(kNames, "middle").has_value());
    EXPECT_EQ(names_text(kNames), "left, right or both");
    EXPECT_EQ(names_text(std::array<const char*, 1>{"only"}), "only");
}
