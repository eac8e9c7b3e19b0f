#include "identity/user_data_symbols.h"

#include <elfutils/libdwfl.h>
#include <gelf.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <vector>

#include "unwind/proc_maps.h"
#include "unwind/symbol_names.h"

namespace lockscope::userlock {
namespace {

const Dwfl_Callbacks kCallbacks = {
    .find_elf = dwfl_linux_proc_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = nullptr,
    .debuginfo_path = nullptr,
};

std::string file_name(const char* path)
{
    const std::string p = path != nullptr ? path : "";
    const auto slash = p.rfind('/');
    return slash == std::string::npos ? p : p.substr(slash + 1);
}

struct DataObject {
    uint64_t start = 0;
    uint64_t bytes = 0;
    std::string symbol;
    std::string module;
};

struct Index {
    std::vector<DataObject> objects;   // data symbols
    std::vector<DataObject> sections;  // writable sections (.data, .bss, ...): symbol is the section's name
};

// Adds a module's writable sections, as mapped in the process.
void index_sections(Dwfl_Module* module, const std::string& file, std::vector<DataObject>& sections)
{
    GElf_Addr bias = 0;
    Elf* elf = dwfl_module_getelf(module, &bias);
    size_t strings = 0;
    if (elf == nullptr || elf_getshdrstrndx(elf, &strings) != 0) {
        return;
    }
    for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr header;
        if (gelf_getshdr(scn, &header) == nullptr || header.sh_size == 0 ||
            (header.sh_flags & (SHF_ALLOC | SHF_WRITE)) != (SHF_ALLOC | SHF_WRITE)) {
            continue;
        }
        const char* name = elf_strptr(elf, strings, header.sh_name);
        sections.push_back({header.sh_addr + bias, header.sh_size, name != nullptr ? name : "?", file});
    }
}

// Adds a module's data objects (STT_OBJECT, STT_TLS) to the index. Every
// module's symbol table is read once: a module's range from /proc/PID/maps
// can stop short of its .bss (the anonymous part after the file's last
// page), so an address is not first matched to a module.
int index_module(Dwfl_Module* module, void** /*userdata*/, const char* name, Dwarf_Addr /*start*/, void* arg)
{
    auto* index = static_cast<Index*>(arg);
    auto* objects = &index->objects;
    const int count = dwfl_module_getsymtab(module);
    const std::string file = file_name(name);
    index_sections(module, file, index->sections);
    for (int i = 1; i < count; ++i) {
        GElf_Sym sym;
        GElf_Addr value = 0;
        const char* symbol = dwfl_module_getsym_info(module, i, &sym, &value, nullptr, nullptr, nullptr);
        const int type = GELF_ST_TYPE(sym.st_info);
        if (symbol == nullptr || sym.st_shndx == SHN_UNDEF || (type != STT_OBJECT && type != STT_TLS)) {
            continue;
        }
        objects->push_back({value, sym.st_size != 0 ? sym.st_size : 1, symbol, file});
    }
    return DWARF_CB_OK;
}

}  // namespace

struct DataSymbols::Process {
    Index index;  // each by start address
};

DataSymbols::DataSymbols() = default;
DataSymbols::~DataSymbols() = default;

const DataSymbols::Process* DataSymbols::process(pid_t pid, pid_t tid)
{
    auto& process = processes_[pid];
    if (process) {
        return process.get();
    }
    process = std::make_unique<Process>();
    bool read = false;
    if (Dwfl* dwfl = dwfl_begin(&kCallbacks)) {
        dwfl_report_begin(dwfl);
        const int err = unwind::report_process_maps(dwfl, pid, tid);
        dwfl_report_end(dwfl, nullptr, nullptr);
        if (err == 0) {
            dwfl_getmodules(dwfl, index_module, &process->index, 0);
            read = true;
        }
        dwfl_end(dwfl);
    }
    if (!read) {
        processes_.erase(pid);
        return nullptr;
    }
    for (auto* list : {&process->index.objects, &process->index.sections}) {
        std::sort(list->begin(), list->end(),
                  [](const DataObject& a, const DataObject& b) { return a.start < b.start; });
    }
    return process.get();
}

std::optional<DataSymbol> DataSymbols::lookup(pid_t pid, uint64_t uaddr, pid_t tid, std::span<const pid_t> forked_from)
{
    const Process* process = this->process(pid, tid);
    for (std::size_t i = 0; process == nullptr && i < forked_from.size() && forked_from[i] > 0; ++i) {
        process = this->process(forked_from[i], 0);
    }
    if (process == nullptr) {
        return std::nullopt;
    }
    const auto& objects = process->index.objects;
    auto after = std::upper_bound(objects.begin(), objects.end(), uaddr,
                                  [](uint64_t address, const DataObject& o) { return address < o.start; });
    // Objects can nest (a symbol for a struct and one for its member): the
    // nearest start below the address that still contains it.
    while (after != objects.begin()) {
        --after;
        if (uaddr - after->start < after->bytes) {
            return DataSymbol{unwind::function_name(after->symbol), after->module};
        }
        if (uaddr - after->start > (1U << 20)) {
            break;  // no data object is that large: the address is in none
        }
    }
    const auto& sections = process->index.sections;
    auto section = std::upper_bound(sections.begin(), sections.end(), uaddr,
                                    [](uint64_t address, const DataObject& o) { return address < o.start; });
    if (section != sections.begin() && uaddr - std::prev(section)->start < std::prev(section)->bytes) {
        --section;
        char offset[32];
        std::snprintf(offset, sizeof(offset), "+0x%llx", static_cast<unsigned long long>(uaddr - section->start));
        return DataSymbol{section->module + ":" + section->symbol + offset, section->module, "user-section"};
    }
    return std::nullopt;
}

void DataSymbols::forget(pid_t pid)
{
    processes_.erase(pid);
}

namespace {

// shared_place() in one maps file; none when it cannot be read.
std::optional<std::string> shared_place_in(const std::string& maps_path, uint64_t uaddr)
{
    std::ifstream maps(maps_path);
    if (!maps) {
        return std::nullopt;
    }
    bool any = false;
    for (std::string line; std::getline(maps, line);) {
        any = true;
        // start-end perms offset dev inode [path]
        unsigned long long start = 0, end = 0, offset = 0, inode = 0;
        char perms[8] = {}, dev[16] = {};
        if (std::sscanf(line.c_str(), "%llx-%llx %7s %llx %15s %llu", &start, &end, perms, &offset, dev, &inode) != 6 ||
            uaddr < start || uaddr >= end) {
            continue;
        }
        if (perms[3] != 's') {
            return "";
        }
        char place[64];
        std::snprintf(place, sizeof(place), "%s:%llu+0x%llx", dev, inode, offset + (uaddr - start));
        return place;
    }
    // A zombie's maps read empty: unread, not private.
    return any ? std::optional<std::string>("") : std::nullopt;
}

}  // namespace

std::optional<std::string> shared_place(pid_t pid, uint64_t uaddr, pid_t tid, std::span<const pid_t> forked_from)
{
    const std::string proc = "/proc/" + std::to_string(pid);
    std::vector<std::string> paths = {proc + "/maps"};
    if (tid > 0 && tid != pid) {
        paths.push_back(proc + "/task/" + std::to_string(tid) + "/maps");
    }
    for (pid_t ancestor : forked_from) {
        if (ancestor > 0) {
            paths.push_back("/proc/" + std::to_string(ancestor) + "/maps");
        }
    }
    for (const std::string& path : paths) {
        if (auto place = shared_place_in(path, uaddr)) {
            return place;
        }
    }
    return std::nullopt;
}

}  // namespace lockscope::userlock
