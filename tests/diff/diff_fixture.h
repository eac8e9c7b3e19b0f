// Sessions with known statistical properties, written through the real
// SessionWriter so diffs are tested on what the recorder produces.
#pragma once

#include "core/session_store.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace lockscope::testing {

class TempDir {
public:
    TempDir();
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    std::string file(const std::string& name) const { return path_ + "/" + name; }

private:
    std::string path_;
};

// Sampled stacks of a lock, the same in every run.
struct StackSpec {
    std::string role;                 // "waiter", "holder:sleeping", ...
    std::vector<std::string> frames;  // innermost first, "function+0xoff/0xsize"
    uint64_t samples_per_run = 0;
};

struct LockSpec {
    std::string name, kind, mode;
    double contentions = 1000;      // mean per 1 s interval
    double wait_ns_per_op = 20000;  // mean wait per contention
    double spin_failure = 0.3;      // probability a spin attempt fails
    std::vector<StackSpec> stacks;
};

struct SessionSpec {
    std::map<std::string, std::string> meta;
    int runs = 5;
    int intervals = 4;
    double ops = 50000;       // mean per interval; 0: no workload counts
    double noise = 0.03;      // relative sd of every interval quantity
    std::vector<LockSpec> locks;
    uint64_t address_base = 0xffff888000000000ull;  // differs between "kernels"
    uint64_t seed = 1;
};

std::map<std::string, std::string> kernel_a_meta();  // Debian 6.1, PREEMPT_DYNAMIC, pipe x4
std::vector<LockSpec> default_locks();               // pipe_inode_info.mutex, inode.i_rwsem/write, rtnl_mutex

void write_session(const std::string& path, const SessionSpec& spec);

}  // namespace lockscope::testing
