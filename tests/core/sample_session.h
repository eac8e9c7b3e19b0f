// Deterministic sessions for the core tests.
#pragma once

#include "core/session_store.h"

#include <string>

namespace lockscope::testing {

// A fresh directory, removed with everything in it at scope exit.
class TempDir {
public:
    TempDir();
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::string& path() const { return path_; }
    std::string file(const std::string& name) const { return path_ + "/" + name; }

private:
    std::string path_;
};

std::map<std::string, std::string> sample_meta();

// Interval `index` of `run` with `locks` active locks (ids 1..locks), all
// changing; the totals are the sum of the lock deltas, as the recorder
// writes them. The first interval also introduces the locks. Locks 1 and 2
// share a name (one lock class seen from two callers).
IntervalBatch sample_batch(int64_t run, int64_t index, int locks);

// Writes a complete session: `runs` runs of `intervals` intervals each.
void write_sample(const std::string& path, int runs, int intervals, int locks);

}  // namespace lockscope::testing
