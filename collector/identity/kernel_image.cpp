#include "identity/kernel_image.h"

#include <sys/utsname.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <unordered_map>

namespace lockscope::identity {
namespace {

bool parse_hex(std::string_view s, uint64_t& v)
{
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 16);
    return ec == std::errc() && p == s.data() + s.size();
}

std::string default_system_map()
{
    utsname u{};
    uname(&u);
    return std::string("/boot/System.map-") + u.release;
}

}  // namespace

KernelImage KernelImage::load(const KernelSymbols& kallsyms, std::vector<std::string>& warnings,
                              const std::string& iomem, const std::string& system_map)
{
    KernelImage k;
    k.load_iomem(kallsyms, iomem);
    k.load_system_map(kallsyms, system_map.empty() ? default_system_map() : system_map, warnings);
    return k;
}

// "  03000000-0327c0bf : Kernel data": physical; the image is mapped
// contiguously, so its virtual address is _text plus the distance from
// the start of "Kernel code".
void KernelImage::load_iomem(const KernelSymbols& kallsyms, const std::string& path)
{
    const auto text = kallsyms.address_of("_text");
    if (!text)
        return;
    std::ifstream in(path);
    std::string line;
    std::optional<uint64_t> code;
    std::vector<std::pair<uint64_t, uint64_t>> phys;
    while (std::getline(in, line)) {
        const size_t colon = line.find(" : Kernel ");
        if (colon == std::string::npos)
            continue;
        const std::string what = line.substr(colon + 10);
        const size_t start = line.find_first_not_of(' ');
        const size_t dash = line.find('-', start);
        uint64_t a = 0, b = 0;
        if (dash == std::string::npos || !parse_hex(std::string_view(line).substr(start, dash - start), a) ||
            !parse_hex(std::string_view(line).substr(dash + 1, colon - dash - 1), b) || b < a || (a == 0 && b == 0))
            continue;
        if (what == "code")
            code = a;
        else if (what == "data" || what == "bss" || what == "rodata")
            phys.emplace_back(a, b + 1);
    }
    if (!code)
        return;
    for (auto [a, b] : phys)
        if (a >= *code)
            ranges_.emplace_back(*text + (a - *code), *text + (b - *code));
}

void KernelImage::load_system_map(const KernelSymbols& kallsyms, const std::string& path,
                                  std::vector<std::string>& warnings)
{
    std::ifstream in(path);
    if (!in) {
        map_status_ = "no " + path;
        return;
    }
    std::unordered_map<std::string, uint64_t> functions;
    std::vector<std::pair<uint64_t, std::string>> data;
    KernelSections sections;
    std::string line;
    while (std::getline(in, line)) {
        // "ffffffff81000000 T _text"
        if (line.size() < 20 || line[16] != ' ' || line[18] != ' ')
            continue;
        uint64_t addr = 0;
        if (!parse_hex(std::string_view(line).substr(0, 16), addr))
            continue;
        const char type = line[17];
        std::string name = line.substr(19);
        sections.note(name, addr);
        if (type == 'T' || type == 't')
            functions.emplace(name, addr);
        else if (type == 'D' || type == 'd' || type == 'B' || type == 'b')
            data.emplace_back(addr, std::move(name));
    }
    const auto text = kallsyms.address_of("_text");
    auto map_text = functions.find("_text");
    if (!text || map_text == functions.end() || data.empty()) {
        map_status_ = path + " has no _text or no data symbols: not used";
        warnings.push_back(map_status_);
        return;
    }
    // KASLR moves the whole image by one offset: every function must agree.
    const uint64_t shift = *text - map_text->second;
    size_t compared = 0, agreed = 0;
    const auto& syms = kallsyms.text_symbols();
    const size_t step = std::max<size_t>(1, syms.size() / 400);
    for (size_t i = 0; i < syms.size(); i += step) {
        auto it = functions.find(std::string(kallsyms.name(syms[i])));
        if (it == functions.end())
            continue;
        compared++;
        if (it->second + shift == syms[i].address)
            agreed++;
    }
    if (compared < 50 || agreed < compared * 95 / 100) {
        map_status_ = path + " does not match the running kernel (" + std::to_string(agreed) + " of " +
                      std::to_string(compared) + " functions where kallsyms has them): ignored";
        warnings.push_back(map_status_);
        return;
    }
    for (auto& [addr, name] : data)
        data_.emplace_back(addr + shift, std::move(name));
    std::sort(data_.begin(), data_.end());
    for (const KernelSections::Range& r : {sections.data, sections.bss})
        if (r.known())
            map_sections_.emplace_back(r.begin + shift, r.end + shift);
    map_status_ = path + " (matches the running kernel)";
}

bool KernelImage::in_data(uint64_t address) const
{
    for (auto [a, b] : ranges_)
        if (address >= a && address < b)
            return true;
    for (auto [a, b] : map_sections_)
        if (address >= a && address < b)
            return true;
    return false;
}

std::optional<std::string> KernelImage::symbol(uint64_t address) const
{
    auto it = std::upper_bound(data_.begin(), data_.end(), address,
                               [](uint64_t a, const std::pair<uint64_t, std::string>& s) { return a < s.first; });
    if (it == data_.begin())
        return std::nullopt;
    --it;
    if (it->first == address)
        return it->second;
    // Inside a variable only where the sections say it is data; System.map
    // has no sizes, so the next symbol bounds it.
    for (auto [a, b] : map_sections_)
        if (address >= a && address < b)
            return it->second;
    return std::nullopt;
}

}  // namespace lockscope::identity
