// `lockscope export`: a session in the formats other tools read. Each
// writer streams to an ostream; episodes are read row by row, never all
// at once (EpisodeReader).
//
//   chrome-trace  Trace Event JSON for Perfetto UI and chrome://tracing
//   folded        "frame;frame;... weight" for flamegraph.pl and speedscope
//   csv           the per-lock, the per-interval or the user-lock table
//   pprof         gzipped profile.proto, for go tool pprof and continuous profilers
#pragma once

#include "core/analysis/report.h"      // RowSort
#include "core/analysis/user_locks.h"  // LockScope
#include "core/model.h"

#include <cstdint>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace lockscope {

enum class ExportFormat { ChromeTrace, Folded, Csv, Pprof };
enum class FoldedWeight { WaitNs, Contentions };
enum class CsvTable { Locks, Intervals, UserLocks };

// Parse the command-line spellings; anything else is a UsageError that
// lists the valid values.
ExportFormat parse_export_format(const std::string& text);
FoldedWeight parse_folded_weight(const std::string& text);
CsvTable parse_csv_table(const std::string& text);

struct ChromeTraceSummary {
    bool traced = false;      // recorded with --trace
    uint64_t episodes = 0;    // episodes written as slices
    uint64_t truncated = 0;   // of those, episodes whose phases were cut short in the kernel
    uint64_t skipped = 0;     // invalid episode rows
    uint64_t lost = 0;        // episodes the ring buffer dropped while recording
    uint64_t flows = 0;       // wake-up flow arrows (waker -> woken waiter)
    uint64_t user_waits = 0;  // user-space locks' futex waits written as slices
};

// One track per thread (pid = process, tid = thread, named from the
// session's tasks), each episode's phases as complete ("X") slices named by
// the lock, category "spin" or "queued" (a queued phase split at its
// wake-up into "queued" and "woken", with a flow from a 1 ns "wakes" slice on
// the waker's thread: category "woken"); CPU idle and contentions/s as
// counter ("C") tracks, one sample per interval. Timestamps are µs since the
// session's first run started (ns precision: three decimals). A session
// recorded without --trace gives the counter tracks only. A session that
// also recorded user-space locks has their lock waits too, one slice each
// (category "user", split at the wakeup into "woken" with its flow, as
// above; args: the wait's on-CPU, asleep and runnable parts). `scope` keeps
// the kernel's episodes, the user locks' waits or both. `path` is read for
// the episodes; `session` is the same file, loaded.
ChromeTraceSummary export_chrome_trace(const std::string& path, const Session& session, std::ostream& out,
                                       LockScope scope = LockScope::All);

// Sampled waiter stacks, root first, under a root frame naming the lock
// ("pipe->mutex [mutex]"); frame offsets dropped so equal paths merge.
// Stacks are sampled (one episode in --stack-period per CPU), so each lock's
// exact totals are shared among its sampled stacks (export_stacks.h:
// contentions in proportion to their samples, wait to their sampled wait,
// as `report --by caller` shares them): per lock, and so in all, the weights
// add up to the report's totals. A lock with no sampled stack gets one
// "[no stack sampled]" line.
void export_folded(const Session& session, FoldedWeight weight, std::ostream& out);

// The same stacks as a gzipped pprof profile (profile.proto): sample types
// contentions/count and delay/nanoseconds (Go's mutex profile), then the
// wait's four parts in nanoseconds (spinning, queued_on_cpu, asleep,
// runnable), which add up to delay in every sample; locations are the
// stacks' functions, rooted at a frame naming the lock; labels lock, kind
// and name_source. Values add up to the report's totals per lock, as the
// folded export's do.
void export_pprof(const Session& session, std::ostream& out);
const std::vector<std::pair<std::string, std::string>>& pprof_sample_types();  // (type, unit) in order

// Locks: the report's per-lock CSV (`report --format csv`: the `top` rows
// first in the `sort` order, 0 every row; shares of the whole session's
// wait). Intervals: one row per run and interval with its totals, the
// wait's parts and its longest wait where measured (empty where not).
// UserLocks: the user-space locks (`report --scope user --format csv`).
void export_csv(const Session& session, CsvTable table, std::ostream& out, size_t top = 0,
                RowSort sort = RowSort::Wait);

}  // namespace lockscope
