// Kernel symbols from /proc/kallsyms (read at record time, so a session is
// complete on its own): frame names, the boundary of the locking code, and
// the names of global locks.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lockscope {

// The kernel image's sections, as the marker symbols of kallsyms or
// System.map bound them (zero while a marker is missing): the marker names
// are read in one place for both.
struct KernelSections {
    struct Range {
        uint64_t begin = 0, end = 0;
        bool known() const { return begin && end; }
        bool contains(uint64_t address) const { return address >= begin && address < end; }
    };
    Range lock_text, sched_text, data, bss;

    // Keeps address if name marks the start or end of one of the sections.
    void note(std::string_view name, uint64_t address);
};

class KernelSymbols {
public:
    // 16 bytes: a kernel has 100,000+ symbols and the recorder keeps them all
    // for its whole run, so the names live in one arena (names_).
    struct Symbol {
        uint64_t address = 0;
        uint32_t name_offset = 0;
        uint16_t name_size = 0;
        char type = 0;  // kallsyms type letter
    };

    // Parses /proc/kallsyms. Without privileges the kernel shows zero
    // addresses: the result is then empty() and every frame prints as hex.
    static KernelSymbols load(const std::string& path = "/proc/kallsyms");
    static KernelSymbols parse(std::string_view text);

    bool empty() const { return text_.empty(); }

    // The function containing ip, or nullptr.
    const Symbol* function_at(uint64_t ip) const;
    std::string_view name(const Symbol& s) const { return {names_.data() + s.name_offset, s.name_size}; }
    std::string function_name(uint64_t ip) const;  // "" if unknown
    std::string frame(uint64_t ip) const;          // "func+0x1a" or "0xffff…"

    // Frames inside the lock implementation (.spinlock.text or .sched.text),
    // which a caller lookup skips, as perf lock contention does.
    bool in_lock_text(uint64_t ip) const;

    // A text symbol's address by name (linear: for the few look-ups at start).
    std::optional<uint64_t> address_of(std::string_view name) const;
    const std::vector<Symbol>& text_symbols() const { return text_; }
    // Data symbols beyond the section markers (CONFIG_KALLSYMS_ALL).
    bool has_data_symbols() const { return data_.size() > 64; }

    // The kernel data symbol a lock lives at ("rtnl_mutex"), if it is a global.
    std::optional<std::string> global_object(uint64_t address) const;

private:
    void add_line(std::string_view line);
    void finish();

    std::string names_;         // every kept symbol's name, back to back
    std::vector<Symbol> text_;  // sorted by address
    std::vector<Symbol> data_;  // sorted by address
    KernelSections sections_;
};

}  // namespace lockscope
