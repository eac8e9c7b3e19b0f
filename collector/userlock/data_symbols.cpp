#include "userlock/data_symbols.h"

#include <elfutils/libdwfl.h>
#include <gelf.h>

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

struct Candidate {
    uint64_t uaddr;
    std::optional<DataSymbol> found;
};

// A module's data object containing the address. A module's mapped range
// from /proc/PID/maps can stop short of its .bss (the anonymous part after
// the file's last page), so every module's symbol table is asked.
int find_in_module(Dwfl_Module* module, void** /*userdata*/, const char* name, Dwarf_Addr /*start*/, void* arg)
{
    auto* candidate = static_cast<Candidate*>(arg);
    const int count = dwfl_module_getsymtab(module);
    for (int i = 1; i < count; ++i) {
        GElf_Sym sym;
        GElf_Addr value = 0;
        const char* symbol = dwfl_module_getsym_info(module, i, &sym, &value, nullptr, nullptr, nullptr);
        const int type = GELF_ST_TYPE(sym.st_info);
        if (symbol == nullptr || sym.st_shndx == SHN_UNDEF || (type != STT_OBJECT && type != STT_TLS)) {
            continue;
        }
        const uint64_t size = sym.st_size != 0 ? sym.st_size : 1;
        if (candidate->uaddr >= value && candidate->uaddr - value < size) {
            candidate->found = DataSymbol{unwind::function_name(symbol), file_name(name)};
            return DWARF_CB_ABORT;
        }
    }
    return DWARF_CB_OK;
}

}  // namespace

struct DataSymbols::Process {
    Dwfl* dwfl = nullptr;
    ~Process()
    {
        if (dwfl != nullptr) {
            dwfl_end(dwfl);
        }
    }
};

DataSymbols::DataSymbols() = default;
DataSymbols::~DataSymbols() = default;

std::optional<DataSymbol> DataSymbols::lookup(pid_t pid, uint64_t uaddr)
{
    auto& process = processes_[pid];
    if (!process) {
        process = std::make_unique<Process>();
        process->dwfl = dwfl_begin(&kCallbacks);
        if (process->dwfl == nullptr) {
            return std::nullopt;
        }
        dwfl_report_begin(process->dwfl);
        const int err = dwfl_linux_proc_report(process->dwfl, pid);
        dwfl_report_end(process->dwfl, nullptr, nullptr);
        if (err != 0) {
            return std::nullopt;
        }
    }
    if (process->dwfl == nullptr) {
        return std::nullopt;
    }
    Candidate candidate{uaddr, std::nullopt};
    dwfl_getmodules(process->dwfl, find_in_module, &candidate, 0);
    return candidate.found;
}

void DataSymbols::forget(pid_t pid)
{
    processes_.erase(pid);
}

}  // namespace lockscope::userlock
