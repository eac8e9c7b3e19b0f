// The symbol of a lock that lies in a binary's .data or .bss: `g_cache_lock`
// in `myapp`, the same name on every run, where the address changes.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

namespace lockscope::userlock {

struct DataSymbol {
    std::string symbol;  // demangled: "g_cache_lock", "Registry::lock_"
    std::string module;  // the binary's file name: "myapp", "libfoo.so.1"
};

// Looks data addresses up in the symbol tables of a running process's
// binaries (libdwfl, from /proc/PID/maps), indexed on a process's first
// lookup; forget() it when its maps change. Not thread-safe.
class DataSymbols {
public:
    DataSymbols();
    ~DataSymbols();
    DataSymbols(const DataSymbols&) = delete;
    DataSymbols& operator=(const DataSymbols&) = delete;

    // The data object (STT_OBJECT or STT_TLS) that contains uaddr, or none
    // for an address outside every binary's data (the heap, a stack).
    std::optional<DataSymbol> lookup(pid_t pid, uint64_t uaddr);

    // Drops what was read for pid: call when its maps may have changed.
    void forget(pid_t pid);

private:
    struct Process;
    std::unordered_map<pid_t, std::unique_ptr<Process>> processes_;
};

}  // namespace lockscope::userlock
