// Unwinds a user stack that a BPF program copied (bpf/user_stack.h) with the
// CFI of the process's binaries (.eh_frame, or .debug_frame from debuginfo),
// through elfutils' libdwfl, as `perf --call-graph dwarf` does: Debian's
// binaries and glibc have no frame pointers, so a frame-pointer walk stops in
// libc. Frames are named from the symbol table or debuginfo, with their
// module and build-id.
//
// Memory reads are served from the stack copy, and for any other address from
// the mapped files themselves (never from the live process, whose stack has
// moved on since the sample). Per process, the module list and each module's
// CFI and symbol table are loaded once; names are cached per build-id, so
// repeated samples from the same binaries cost a walk and a few lookups.
//
// Not thread-safe: one UserUnwinder per thread that unwinds.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>

#include "unwind/user_frame.h"

namespace lockscope::unwind {

class UserUnwinder {
public:
    static constexpr std::size_t kDefaultMaxFrames = 64;

    explicit UserUnwinder(std::size_t max_frames = kDefaultMaxFrames);
    ~UserUnwinder();
    UserUnwinder(const UserUnwinder&) = delete;
    UserUnwinder& operator=(const UserUnwinder&) = delete;

    // Unwinds one sample of process pid (its thread group id): regs as the
    // BPF program copied them, stack the bytes copied from stack_base (the
    // sampled sp) upward. The process must still be running, or at least its
    // modules must have been seen by an earlier unwind: its memory maps say
    // which file lies where. `tid`, the sampled thread, is where the maps are
    // read when the process's own entry has none (report_process_maps()).
    UnwoundStack unwind(pid_t pid, const UserRegs& regs, std::span<const uint8_t> stack, uint64_t stack_base,
                        pid_t tid = 0);

    // Names frames found otherwise (the kernel's frame-pointer walk of a user
    // stack, bpf_get_stack with BPF_F_USER_STACK): pcs[0] the sampled ip, the
    // others return addresses.
    UnwoundStack name(pid_t pid, std::span<const uint64_t> pcs);

    // Reads pid's memory maps and modules now, in place of any read before:
    // samples unwound later find them even once it has exited (a zombie has
    // no maps). Call it when its mappings change (exec, dlopen). false, and
    // why, when they cannot be read.
    bool load(pid_t pid, std::string& why);

    // Drops what was loaded for pid (call it when the process exits; a new
    // process with the same pid is then read afresh).
    void forget(pid_t pid);

    std::size_t cached_processes() const { return processes_.size(); }

    struct Process;  // one process's modules (a Dwfl) and the sample being unwound

private:
    struct Symbol {
        std::string function;
        uint64_t offset = 0;  // of the looked-up address from the symbol's start
    };

    Process* process(pid_t pid, uint64_t ip, std::string& why, pid_t tid = 0);
    void name_frames(Process& process, UnwoundStack& out);
    const Symbol& symbol(const std::string& module_key, uint64_t module_offset, void* module, uint64_t lookup);

    std::size_t max_frames_;
    std::unordered_map<pid_t, std::unique_ptr<Process>> processes_;
    // module key (build-id, else path) -> module offset -> name
    std::unordered_map<std::string, std::unordered_map<uint64_t, Symbol>> symbols_;
};

}  // namespace lockscope::unwind
