#include "core/host/symbols.h"

#include <algorithm>
#include <charconv>
#include <cinttypes>
#include <cstdint>
#include <system_error>
#include <utility>
#include <cstdio>
#include <fstream>

namespace lockscope {
namespace {

bool is_text(char t)
{
    return t == 't' || t == 'T' || t == 'w' || t == 'W';
}
bool is_data(char t)
{
    return t == 'd' || t == 'D' || t == 'b' || t == 'B';
}

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
    // Line by line: the file is several megabytes, and the recorder's peak
    // memory is what a user sees in top.
    KernelSymbols k;
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line))
        k.add_line(line);
    k.finish();
    return k;
}

KernelSymbols KernelSymbols::parse(std::string_view text)
{
    KernelSymbols k;
    size_t pos = 0;
    while (pos < text.size()) {
        size_t eol = text.find('\n', pos);
        if (eol == std::string_view::npos)
            eol = text.size();
        k.add_line(text.substr(pos, eol - pos));
        pos = eol + 1;
    }
    k.finish();
    return k;
}

void KernelSections::note(std::string_view name, uint64_t address)
{
    const std::pair<std::string_view, uint64_t*> marks[] = {
        {"__lock_text_start", &lock_text.begin},
        {"__lock_text_end", &lock_text.end},
        {"__sched_text_start", &sched_text.begin},
        {"__sched_text_end", &sched_text.end},
        {"_sdata", &data.begin},
        {"_edata", &data.end},
        {"__bss_start", &bss.begin},
        {"__bss_stop", &bss.end},
    };
    for (const auto& [mark, into] : marks)
        if (name == mark) {
            *into = address;
            return;
        }
}

void KernelSymbols::add_line(std::string_view line)
{
    // "ffffffff81000000 T _text" or "... t name\t[module]"
    size_t sp1 = line.find(' ');
    if (sp1 == std::string_view::npos || sp1 + 3 > line.size() || sp1 > 16)
        return;
    uint64_t addr = 0;
    const auto [end, ec] = std::from_chars(line.data(), line.data() + sp1, addr, 16);
    if (ec != std::errc() || end != line.data() + sp1 || addr == 0)
        return;
    const char type = line[sp1 + 1];
    std::string_view name = line.substr(sp1 + 3);
    const size_t tab = name.find('\t');
    const bool module = tab != std::string_view::npos;
    if (module)
        name = name.substr(0, tab);
    sections_.note(name, addr);
    std::vector<Symbol>* into = is_text(type) ? &text_ : is_data(type) && !module ? &data_ : nullptr;
    if (!into || name.size() > UINT16_MAX || names_.size() + name.size() > UINT32_MAX)
        return;
    into->push_back({addr, uint32_t(names_.size()), uint16_t(name.size()), type});
    names_.append(name);
}

void KernelSymbols::finish()
{
    auto by_addr = [](const Symbol& a, const Symbol& b) { return a.address < b.address; };
    std::sort(text_.begin(), text_.end(), by_addr);
    std::sort(data_.begin(), data_.end(), by_addr);
    names_.shrink_to_fit();
    text_.shrink_to_fit();
    data_.shrink_to_fit();
}

const KernelSymbols::Symbol* KernelSymbols::function_at(uint64_t ip) const
{
    // kallsyms has no sizes: an address far past the nearest symbol (a BPF
    // program, an unlisted module) or past the end markers is unknown.
    constexpr uint64_t kMaxFunctionSize = 256 * 1024;
    const Symbol* s = containing(text_, ip);
    if (!s || ip - s->address > kMaxFunctionSize || name(*s) == "_etext" || name(*s) == "_einittext")
        return nullptr;
    return s;
}

std::string KernelSymbols::function_name(uint64_t ip) const
{
    const Symbol* s = function_at(ip);
    return s ? std::string(name(*s)) : std::string();
}

std::string KernelSymbols::frame(uint64_t ip) const
{
    char buf[64];
    if (const Symbol* s = function_at(ip)) {
        std::snprintf(buf, sizeof buf, "+0x%" PRIx64, ip - s->address);
        return std::string(name(*s)) + buf;
    }
    std::snprintf(buf, sizeof buf, "0x%" PRIx64, ip);
    return buf;
}

std::optional<uint64_t> KernelSymbols::address_of(std::string_view wanted) const
{
    for (const Symbol& s : text_)
        if (name(s) == wanted)
            return s.address;
    return std::nullopt;
}

bool KernelSymbols::in_lock_text(uint64_t ip) const
{
    return sections_.lock_text.contains(ip) || sections_.sched_text.contains(ip);
}

std::optional<std::string> KernelSymbols::global_object(uint64_t address) const
{
    const Symbol* s = containing(data_, address);
    if (!s)
        return std::nullopt;
    if (s->address == address)
        return std::string(name(*s));
    // Inside a global object only when the data section bounds are known
    // (CONFIG_KALLSYMS_ALL); heap addresses must never take a global's name.
    if (sections_.data.contains(address) || sections_.bss.contains(address))
        return std::string(name(*s));
    return std::nullopt;
}

}  // namespace lockscope
