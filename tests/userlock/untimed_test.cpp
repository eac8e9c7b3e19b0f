// The waits the BPF program did not time from their entry (about 15 in 16):
// userlock::estimate_untimed gives them the timed waits' means, per word
// where the word has enough timed waits, else over every word, so that the
// wait, its on-CPU part and the histogram count every wait again.

#include <gtest/gtest.h>

#include <algorithm>

#include "episode.h"
#include "probe/user_word_waits.h"

namespace {

using lockscope::userlock::estimate_untimed;
using lockscope::userlock::kMinTimed;
using lockscope::userlock::UntimedState;
using Words = std::vector<std::pair<ls_ulock_key, ls_ulock_stats>>;

uint64_t hist_total(const ls_ulock_stats& s)
{
    uint64_t n = 0;
    for (uint64_t b : s.hist)
        n += b;
    return n;
}

// A word with `timed` waits that never left the CPU, timed at `each` ns, and
// `untimed` more of them not timed.
ls_ulock_stats on_cpu_waits(uint64_t timed, uint64_t untimed, uint64_t each)
{
    ls_ulock_stats s{};
    s.waits = timed + untimed;
    s.wait_ns = s.oncpu_ns = timed * each;
    s.hist[ls_log2_bucket(each)] = timed;
    s.oncpu_waits = timed + untimed;
    s.oncpu_timed = timed;
    s.oncpu_timed_ns = timed * each;
    return s;
}

TEST(UserLockUntimedWaits, AWaitThatNeverLeftItsCpuGetsItsWordsMeanInTimeAndHistogram)
{
    Words words{{{.tgid = 1, .uaddr = 0x10}, on_cpu_waits(kMinTimed, 3 * kMinTimed, 1000)}};
    UntimedState given;
    const auto totals = estimate_untimed(words, given);
    const ls_ulock_stats& s = words[0].second;
    EXPECT_EQ(s.wait_ns, 4 * kMinTimed * 1000);
    EXPECT_EQ(s.oncpu_ns, s.wait_ns);
    EXPECT_EQ(hist_total(s), s.waits);
    EXPECT_EQ(s.hist[ls_log2_bucket(1000)], s.waits);
    EXPECT_EQ(totals.waits, 3 * kMinTimed);
    EXPECT_EQ(totals.estimated_ns, 3 * kMinTimed * 1000);
}

TEST(UserLockUntimedWaits, AWordWithTooFewTimedWaitsTakesEveryWordsMean)
{
    Words words{{{.tgid = 1, .uaddr = 0x10}, on_cpu_waits(kMinTimed - 1, 5, 100000)},
                {{.tgid = 1, .uaddr = 0x20}, on_cpu_waits(100 * kMinTimed, 0, 1000)}};
    UntimedState given;
    estimate_untimed(words, given);
    const ls_ulock_stats& few = words[0].second;
    // every word's mean: (7 * 100000 + 800 * 1000) / 807
    const long double mean =
        (long double)((kMinTimed - 1) * 100000 + 100 * kMinTimed * 1000) / ((kMinTimed - 1) + 100 * kMinTimed);
    EXPECT_EQ(few.wait_ns, (kMinTimed - 1) * 100000 + static_cast<uint64_t>(mean * 5 + 0.5L));
    EXPECT_EQ(hist_total(few), few.waits);
    EXPECT_EQ(words[1].second.wait_ns, 100 * kMinTimed * 1000) << "a word with nothing untimed is left alone";
}

TEST(UserLockUntimedWaits, AWaitTimedFromItsSwitchOutGetsTheMeanTimeOnCpuBeforeAFirstSwitchOut)
{
    ls_ulock_stats s{};
    // 10 waits timed from their entry that slept, 2 us on CPU before their
    // first switch-out; 30 more timed only from theirs (late): 50 us each
    s.waits = 40;
    s.left_timed = 10;
    s.left_first_oncpu_ns = 10 * 2000;
    s.late = 30;
    s.wait_ns = 10 * 52000 + 30 * 50000;
    s.asleep_ns = 40 * 45000;
    s.oncpu_ns = s.wait_ns - s.asleep_ns;
    s.hist[ls_log2_bucket(50000)] = 40;
    Words words{{{.tgid = 1, .uaddr = 0x10}, s}};
    UntimedState given;
    const auto totals = estimate_untimed(words, given);
    const ls_ulock_stats& got = words[0].second;
    EXPECT_EQ(got.wait_ns, 40u * 52000);
    EXPECT_EQ(got.oncpu_ns, got.wait_ns - got.asleep_ns);
    EXPECT_EQ(got.asleep_ns, s.asleep_ns) << "asleep is measured, never estimated";
    EXPECT_EQ(hist_total(got), 40u);
    EXPECT_EQ(totals.waits, 30u);
    EXPECT_EQ(totals.estimated_ns, 30u * 2000);
}

TEST(UserLockUntimedWaits, EveryWaitTimedLeavesTheWordsAsTheyWere)
{
    Words words{{{.tgid = 1, .uaddr = 0x10}, on_cpu_waits(50, 0, 700)}};
    const ls_ulock_stats before = words[0].second;
    UntimedState given;
    const auto totals = estimate_untimed(words, given);
    EXPECT_EQ(words[0].second.wait_ns, before.wait_ns);
    EXPECT_EQ(hist_total(words[0].second), 50u);
    EXPECT_EQ(totals.waits, 0u);
    EXPECT_EQ(totals.estimated_ns, 0u);
}

// Each read gives only the waits new since the read before, at that read's
// means: a word's wait and histogram never go down as its mean moves (the
// exporter's counters and histograms grow by each read's difference).
TEST(UserLockUntimedWaits, ALaterReadGivesOnlyTheNewWaitsAndNothingGoesDown)
{
    UntimedState given;
    Words first{{{.tgid = 1, .uaddr = 0x10}, on_cpu_waits(kMinTimed, 10 * kMinTimed, 600)}};
    estimate_untimed(first, given);
    // later: more timed waits, shorter (the mean falls into the bucket below),
    // and no new untimed one
    ls_ulock_stats later = on_cpu_waits(2 * kMinTimed, 10 * kMinTimed, 0);
    later.wait_ns = later.oncpu_ns = later.oncpu_timed_ns = kMinTimed * 600 + kMinTimed * 100;
    std::fill(std::begin(later.hist), std::end(later.hist), 0);
    later.hist[ls_log2_bucket(600)] = kMinTimed;
    later.hist[ls_log2_bucket(100)] = kMinTimed;
    Words second{{{.tgid = 1, .uaddr = 0x10}, later}};
    const auto totals = estimate_untimed(second, given);
    const ls_ulock_stats& a = first[0].second;
    const ls_ulock_stats& b = second[0].second;
    EXPECT_GE(b.wait_ns, a.wait_ns);
    for (std::size_t i = 0; i < std::size(a.hist); ++i)
        EXPECT_GE(b.hist[i], a.hist[i]) << "bucket " << i;
    EXPECT_EQ(b.hist[ls_log2_bucket(600)], 11 * kMinTimed) << "the untimed waits keep the bucket they were given";
    EXPECT_EQ(totals.estimated_ns, 10 * kMinTimed * 600);
    EXPECT_EQ(hist_total(b), b.waits);
}

}  // namespace
