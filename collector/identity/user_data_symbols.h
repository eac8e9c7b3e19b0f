// The symbol of a lock that lies in a binary's .data or .bss: `g_cache_lock`
// in `myapp`, the same name on every run, where the address changes. A
// binary stripped of its symbol table, with no debug file for it, still
// names it by its place: `myapp:.bss+0x1a40`, the same on every run of the
// same build.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>

namespace lockscope::userlock {

struct DataSymbol {
    std::string symbol;  // demangled: "g_cache_lock", "Registry::lock_"
    std::string module;  // the binary's file name: "myapp", "libfoo.so.1"
    // "user-symbol" (a symbol of the binary or of its debug file), or
    // "user-section" (no symbol: the section and the offset in it).
    std::string source = "user-symbol";
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

    // The data object (STT_OBJECT or STT_TLS) that contains uaddr, else the
    // writable section of a binary that does; none for an address outside
    // every binary's data (the heap, a stack).
    // `tid`, a thread of pid, is read where pid's own maps cannot be
    // (unwind::report_process_maps()), then the processes pid was forked
    // from without exec (`forked_from`, nearest first, 0 for none: their
    // binaries lie where pid's do); a process none of whose maps could be
    // read is tried again at its next lookup.
    std::optional<DataSymbol> lookup(pid_t pid, uint64_t uaddr, pid_t tid = 0, std::span<const pid_t> forked_from = {});

    // Drops what was read for pid: call when its maps may have changed.
    void forget(pid_t pid);

private:
    struct Process;
    // pid's index, read now if it was not; nullptr when its maps cannot be read.
    const Process* process(pid_t pid, pid_t tid);
    std::unordered_map<pid_t, std::unique_ptr<Process>> processes_;
};

// Where a word in memory shared between processes lies (a MAP_SHARED
// mapping: a file, shared memory): "DEV:INODE+0xOFFSET" of the mapped
// object, the same in every process that maps it; "" for a private word
// (or one in no mapping). Read from pid's maps, else tid's, else those of
// the processes pid was forked from (forked_from, as lookup's); none when
// none could be read.
std::optional<std::string> shared_place(pid_t pid, uint64_t uaddr, pid_t tid = 0,
                                        std::span<const pid_t> forked_from = {});

}  // namespace lockscope::userlock
