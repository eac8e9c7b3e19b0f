// Chain assembly from class-level edges: the heaviest path out of each edge,
// cut at the depth limit, stopped at a cycle, and a root that says what its
// holder was doing, or that nothing was sampled there.
#include "core/analysis/chains.h"

#include <gtest/gtest.h>

using namespace lockscope;

namespace {

HolderSummary sampled(const std::string& state, std::vector<std::string> frames, uint64_t n = 3)
{
    HolderSummary h;
    h.samples_by_state[state] = n;
    h.frames = std::move(frames);
    h.one_owner = n;
    return h;
}

}  // namespace

TEST(Chains, FollowsTheHeaviestEdgeToARootThatSaysWhatItsHolderDid)
{
    const std::vector<ChainEdge> edges = {{"pipe.mutex", "inode.i_rwsem", 4, 4000},
                                          {"inode.i_rwsem", "mm.mmap_lock", 2, 900},
                                          {"inode.i_rwsem", "sb.s_umount", 1, 100}};
    const std::map<std::string, HolderSummary> holders = {
        {"mm.mmap_lock", sampled("sleeping", {"handle_userfault+0x1", "do_user_addr_fault+0x2"})}};
    const std::vector<Chain> chains = assemble_chains(edges, holders);
    ASSERT_EQ(chains.size(), 3u);
    EXPECT_EQ(chains[0].locks, (std::vector<std::string>{"pipe.mutex", "inode.i_rwsem", "mm.mmap_lock"}));
    EXPECT_EQ(chains[0].wait_ns, 4000u);
    EXPECT_EQ(chains[0].samples, 4u);
    EXPECT_FALSE(chains[0].cycle);
    EXPECT_FALSE(chains[0].truncated);
    EXPECT_EQ(chains[0].root.lock, "mm.mmap_lock");
    EXPECT_EQ(chains[0].root.state, "sleeping");
    EXPECT_EQ(chains[0].root.frames[0], "handle_userfault+0x1");
    // The lighter edges are chains of their own, heaviest first.
    EXPECT_EQ(chains[1].locks, (std::vector<std::string>{"inode.i_rwsem", "mm.mmap_lock"}));
    EXPECT_EQ(chains[2].locks, (std::vector<std::string>{"inode.i_rwsem", "sb.s_umount"}));
}

TEST(Chains, StopsAtTheDepthLimit)
{
    std::vector<ChainEdge> edges;
    const std::vector<std::string> locks = {"a", "b", "c", "d", "e", "f", "g"};
    for (size_t i = 0; i + 1 < locks.size(); i++)
        edges.push_back({locks[i], locks[i + 1], 1, 100 * (10 - i)});
    const std::vector<Chain> chains = assemble_chains(edges, {}, 4);
    ASSERT_FALSE(chains.empty());
    EXPECT_EQ(chains[0].locks, (std::vector<std::string>{"a", "b", "c", "d"}));
    EXPECT_TRUE(chains[0].truncated);
    EXPECT_EQ(chains[0].root.lock, "d");
    // The chain from e reaches the end: not truncated.
    const Chain& tail = chains[4];
    EXPECT_EQ(tail.locks, (std::vector<std::string>{"e", "f", "g"}));
    EXPECT_FALSE(tail.truncated);
}

TEST(Chains, DetectsCyclesIncludingOneClassWaitingOnItself)
{
    const std::vector<Chain> two = assemble_chains({{"a", "b", 2, 200}, {"b", "a", 1, 100}}, {});
    ASSERT_EQ(two.size(), 2u);
    EXPECT_EQ(two[0].locks, (std::vector<std::string>{"a", "b", "a"}));
    EXPECT_TRUE(two[0].cycle);
    EXPECT_EQ(two[0].root.state, "cycle");
    // Two directories' i_rwsem: one instance's holder waits for another's.
    const std::vector<Chain> self = assemble_chains({{"inode.i_rwsem", "inode.i_rwsem", 1, 50}}, {});
    ASSERT_EQ(self.size(), 1u);
    EXPECT_TRUE(self[0].cycle);
    EXPECT_EQ(self[0].locks.size(), 2u);
}

TEST(Chains, MissingAndReaderOwnedHoldersAreSaidNotGuessed)
{
    HolderSummary readers;
    readers.reader_owned = 9;
    readers.one_owner = 1;
    readers.samples_by_state["running"] = 1;
    const std::vector<Chain> chains = assemble_chains({{"a", "b", 2, 200}, {"c", "r", 1, 100}}, {{"r", readers}});
    ASSERT_EQ(chains.size(), 2u);
    EXPECT_EQ(chains[0].root.lock, "b");
    EXPECT_EQ(chains[0].root.state, "") << "no holder of b was sampled";
    EXPECT_TRUE(chains[0].root.frames.empty());
    EXPECT_EQ(chains[1].root.state, "reader-owned");
}

TEST(Chains, TiesAreBrokenBySamplesThenName)
{
    const std::vector<Chain> bysamples =
        assemble_chains({{"a", "b", 1, 100}, {"b", "y", 1, 50}, {"b", "z", 2, 50}}, {});
    EXPECT_EQ(bysamples[0].locks.back(), "z");
    const std::vector<Chain> byname = assemble_chains({{"a", "b", 1, 100}, {"b", "z", 1, 50}, {"b", "y", 1, 50}}, {});
    EXPECT_EQ(byname[0].locks.back(), "y");
    // Same input, any order: the same chains.
    const std::vector<Chain> again = assemble_chains({{"b", "y", 1, 50}, {"b", "z", 1, 50}, {"a", "b", 1, 100}}, {});
    ASSERT_EQ(again.size(), byname.size());
    for (size_t i = 0; i < again.size(); i++)
        EXPECT_EQ(again[i].locks, byname[i].locks);
}

TEST(Chains, EdgesOfTheSamePairAddUp)
{
    const std::vector<Chain> chains = assemble_chains({{"a", "b", 1, 100}, {"a", "b", 2, 300}}, {});
    ASSERT_EQ(chains.size(), 1u);
    EXPECT_EQ(chains[0].samples, 3u);
    EXPECT_EQ(chains[0].wait_ns, 400u);
}

// A root holder seen running has no stack from the queueings; the stack its
// CPU's ticks took says where it was. Ticks do not change the state.
TEST(Chains, ARunningRootShowsItsOnCpuStack)
{
    HolderSummary running = sampled("running", {});
    running.on_cpu_frames = {"anon_pipe_write+0x40", "vfs_write+0x1"};
    running.on_cpu_frames_samples = 50;
    const std::vector<Chain> chains = assemble_chains({{"a", "pipe.mutex", 2, 200}}, {{"pipe.mutex", running}});
    ASSERT_EQ(chains.size(), 1u);
    EXPECT_EQ(chains[0].root.state, "running");
    ASSERT_FALSE(chains[0].root.frames.empty());
    EXPECT_EQ(chains[0].root.frames[0], "anon_pipe_write+0x40");
}
