#include "core/format.h"

#include <gtest/gtest.h>

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

TEST(FormatTest, TruncatesByDisplayWidth)
{
    EXPECT_EQ(display_width("4.20 µs"), 7u);
    EXPECT_EQ(truncate_display("short", 10), "short");
    EXPECT_EQ(truncate_display("mmap_lock_writer", 8), "mmap_lo…");
    EXPECT_EQ(display_width(truncate_display("µµµµµµ", 4)), 4u);
}
