// Value types of the user-stack unwinder: the registers and stack copy a BPF
// program took (bpf/user_stack.h), and the named frames they unwind to.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace lockscope::unwind {

// A sampled thread's user registers at the sample (x86_64: rip, rsp, rbp).
struct UserRegs {
    uint64_t ip = 0;
    uint64_t sp = 0;
    uint64_t bp = 0;
};

struct UserFrame {
    uint64_t pc = 0;               // the frame's address; a return address for every frame but the first
    std::string function;          // demangled symbol, "" when the module has none for pc
    uint64_t function_offset = 0;  // pc - the symbol's start
    std::string module;            // the mapped file's path, "" when pc is in no mapped file
    std::string build_id;          // lowercase hex, "" when the file has none
    uint64_t module_offset = 0;    // pc relative to the module's lowest address: the same on every run of a build
};

struct UnwoundStack {
    std::vector<UserFrame> frames;  // innermost first
    // Why the walk ended: "" when it reached the outermost frame, else what
    // stopped it (the stack copy ended, no CFI for an address, ...).
    std::string stopped;
};

}  // namespace lockscope::unwind
