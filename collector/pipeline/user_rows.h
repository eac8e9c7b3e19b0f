// The rows of user locks, built from what the samples of each futex word
// said (KeySamples) and its waits (ls_ulock_stats): one row per (process,
// name, kind), the waits of a word that serves several kinds shared among
// them as its samples are. Inside the user-lock recorder only.
#pragma once

#include <sys/types.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "unwind/user_frame.h"
#include "identity/user_classify.h"
#include "identity/user_data_symbols.h"
#include "pipeline/snapshot.h"
#include "pipeline/user_recording.h"
#include "userlock_abi.h"

namespace lockscope::userlock {

// The futex operations that take a PI futex: lock waits whatever the stack.
constexpr uint32_t kPiOps = LS_ULOCK_OP_LOCK_PI | LS_ULOCK_OP_LOCK_PI2 | LS_ULOCK_OP_WAIT_REQUEUE_PI;

using Frames = std::vector<std::string>;

// A sample's ls_ulock_sample::forked_from.
using ForkedFrom = std::array<pid_t, LS_ULOCK_FORKED_FROM>;

constexpr std::size_t kMaxStacks = 32;

// The samples of one lock kind on one futex address.
struct KindSamples {
    uint64_t samples = 0;
    std::map<std::string, uint64_t> callers;  // first caller outside the locking library -> samples
    std::set<std::string> offset_callers;     // of them, those named by module and offset (no symbol)
    std::map<Frames, UserLockStack> stacks;   // at most kMaxStacks, then "[other stacks]"
};

// What the samples of one futex address said. One word can serve several
// kinds: glibc's rwlock readers and its waiting writer sleep on the same
// phase futex.
struct KeySamples {
    std::map<WaitClass, uint64_t> classes;
    uint64_t not_unwound = 0;  // samples whose stack named no frame: no vote
    uint64_t address = 0;      // the futex word's
    uint32_t tid = 0;          // a thread that waited on it (whose maps are the process's)
    ForkedFrom forked_from{};  // the processes whose maps the process was forked with
    // Where the word lies if in shared memory (UserLockInstance::shared), read with
    // its data symbol; unset until a process's maps could be read.
    std::optional<std::string> shared;
    // The lock's data symbol, looked up while the process runs (at its
    // first samples: a process's maps can be unreadable for a moment).
    std::optional<DataSymbol> symbol;
    uint32_t symbol_tries = 0;
    std::map<std::string, KindSamples> lock_kinds;  // the samples of lock waits, per kind
    std::set<uint32_t> owner_tids;
};

// The key of the largest count; nullptr when there is none.
template <typename Map>
const typename Map::key_type* most_common(const Map& counts)
{
    const typename Map::value_type* best = nullptr;
    for (const auto& entry : counts) {
        if (best == nullptr || entry.second > best->second) {
            best = &entry;
        }
    }
    return best != nullptr ? &best->first : nullptr;
}

using RowKey = std::tuple<pid_t, std::string, std::string>;  // (tgid, name, kind)

// A row being built, and what its caller, stacks, chains and wakers come from.
struct RowBuilder {
    UserLock row;
    std::map<std::string, uint64_t> callers;
    std::set<std::string> offset_callers;
    std::map<Frames, UserLockStack> stacks;
    std::map<KernelLockKey, KernelChain> chains;
    std::map<uint32_t, UserLockWaker> wakers;                        // by tid
    std::map<std::pair<std::string, uint32_t>, HolderTime> holders;  // by (role, tid)
};

// Adds a sampled stack to a kind's stacks (at most kMaxStacks, then "[other stacks]").
void add_stack(KindSamples& kind, const std::vector<unwind::UserFrame>& frames, uint64_t wait_ns);

// Adds one chain record (a futex word's waits behind one kernel lock) to a row's chains.
void add_chain(std::map<KernelLockKey, KernelChain>& chains, const ls_ulock_chain_key& key,
               const ls_ulock_chain_stats& stats);

// Adds one futex word's waits to the rows of its lock. Waits are counted
// per word, kinds known from samples: a word that serves several kinds
// shares its waits among them as its samples do, the rounding left to the
// most sampled kind. Returns the row whose owners the word's owner TIDs
// are: its pthread_mutex row, or for a PI futex its main row; none for a
// word whose owner TID means nothing (an rwlock's word holds no owner).
std::optional<RowKey> add_word(std::map<RowKey, RowBuilder>& rows, pid_t tgid, const KeySamples& sampled,
                               const ls_ulock_stats& stats, const std::vector<UserLockWaker>& wakers,
                               const std::optional<DataSymbol>& symbol, RowKey& main_row);

// Adds one futex word's holder split (its waits' followed owners, ls_ulock_stats
// holder_ns, and those owners' and their preemptors' times) to the row whose
// owners its owner TIDs are (add_word()).
void add_holder_split(RowBuilder& row, const ls_ulock_stats& stats, const std::vector<HolderTime>& holders);

// The row a builder holds, finished: its caller (the most sampled), its
// chains by wait, its wakers by wakes, its stacks by samples, its words by address.
UserLock finish_row(RowBuilder& builder);

}  // namespace lockscope::userlock
