#include "core/symbols.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace lockscope {
namespace {

bool is_text(char t) { return t == 't' || t == 'T' || t == 'w' || t == 'W'; }
bool is_data(char t) { return t == 'd' || t == 'D' || t == 'b' || t == 'B'; }

const KernelSymbols::Symbol* containing(const std::vector<KernelSymbols::Symbol>& syms, uint64_t addr)
{
    auto it = std::upper_bound(syms.begin(), syms.end(), addr,
                               [](uint64_t a, const KernelSymbols::Symbol& s) { return a < s.address; });
    if (it == syms.begin())
        return nullptr;
    return &*std::prev(it);
}

}  // namespace

KernelSymbols KernelSymbols::load(const std::string& path)
{
    std::ifstream in(path);
    std::stringstream buf;
    buf << in.rdbuf();
    return parse(buf.str());
}

KernelSymbols KernelSymbols::parse(std::string_view text)
{
    KernelSymbols k;
    size_t pos = 0;
    while (pos < text.size()) {
        size_t eol = text.find('\n', pos);
        if (eol == std::string_view::npos)
            eol = text.size();
        std::string_view line = text.substr(pos, eol - pos);
        pos = eol + 1;
        // "ffffffff81000000 T _text" or "... t name\t[module]"
        size_t sp1 = line.find(' ');
        if (sp1 == std::string_view::npos || sp1 + 3 > line.size())
            continue;
        uint64_t addr = 0;
        if (std::sscanf(std::string(line.substr(0, sp1)).c_str(), "%" SCNx64, &addr) != 1 || addr == 0)
            continue;
        char type = line[sp1 + 1];
        std::string_view name = line.substr(sp1 + 3);
        const size_t tab = name.find('\t');
        const bool module = tab != std::string_view::npos;
        if (module)
            name = name.substr(0, tab);
        if (name == "__lock_text_start") k.lock_text_start_ = addr;
        else if (name == "__lock_text_end") k.lock_text_end_ = addr;
        else if (name == "__sched_text_start") k.sched_text_start_ = addr;
        else if (name == "__sched_text_end") k.sched_text_end_ = addr;
        else if (name == "_sdata") k.data_start_ = addr;
        else if (name == "_edata") k.data_end_ = addr;
        else if (name == "__bss_start") k.bss_start_ = addr;
        else if (name == "__bss_stop") k.bss_end_ = addr;
        if (is_text(type))
            k.text_.push_back({addr, std::string(name), type});
        else if (is_data(type) && !module)
            k.data_.push_back({addr, std::string(name), type});
    }
    auto by_addr = [](const Symbol& a, const Symbol& b) { return a.address < b.address; };
    std::sort(k.text_.begin(), k.text_.end(), by_addr);
    std::sort(k.data_.begin(), k.data_.end(), by_addr);
    return k;
}

const KernelSymbols::Symbol* KernelSymbols::function_at(uint64_t ip) const
{
    // kallsyms has no sizes: an address far past the nearest symbol (a BPF
    // program, an unlisted module) or past the end markers is unknown.
    constexpr uint64_t kMaxFunctionSize = 256 * 1024;
    const Symbol* s = containing(text_, ip);
    if (!s || ip - s->address > kMaxFunctionSize || s->name == "_etext" || s->name == "_einittext")
        return nullptr;
    return s;
}

std::string KernelSymbols::function_name(uint64_t ip) const
{
    const Symbol* s = function_at(ip);
    return s ? s->name : std::string();
}

std::string KernelSymbols::frame(uint64_t ip) const
{
    char buf[64];
    if (const Symbol* s = function_at(ip)) {
        std::snprintf(buf, sizeof buf, "+0x%" PRIx64, ip - s->address);
        return s->name + buf;
    }
    std::snprintf(buf, sizeof buf, "0x%" PRIx64, ip);
    return buf;
}

bool KernelSymbols::in_lock_text(uint64_t ip) const
{
    return (ip >= lock_text_start_ && ip < lock_text_end_) || (ip >= sched_text_start_ && ip < sched_text_end_);
}

std::optional<std::string> KernelSymbols::global_object(uint64_t address) const
{
    const Symbol* s = containing(data_, address);
    if (!s)
        return std::nullopt;
    if (s->address == address)
        return s->name;
    // Inside a global object only when the data section bounds are known
    // (CONFIG_KALLSYMS_ALL); heap addresses must never take a global's name.
    const bool in_data = address >= data_start_ && address < data_end_;
    const bool in_bss = address >= bss_start_ && address < bss_end_;
    if (in_data || in_bss)
        return s->name;
    return std::nullopt;
}

}  // namespace lockscope
