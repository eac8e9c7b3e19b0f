#include "unwind/user_unwinder.h"

#include "unwind/proc_maps.h"
#include "unwind/symbol_names.h"

#include <dwarf.h>
#include <elfutils/libdwfl.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace lockscope::unwind {
namespace {

// find_debuginfo looks beside the file, in /usr/lib/debug (by build-id) and,
// where DEBUGINFOD_URLS is set, asks debuginfod.
char* debuginfo_path = nullptr;
const Dwfl_Callbacks kProcessCallbacks = {
    .find_elf = dwfl_linux_proc_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = nullptr,
    .debuginfo_path = &debuginfo_path,
};

std::string hex(const unsigned char* bytes, int length)
{
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string out;
    out.reserve(static_cast<std::size_t>(length) * 2);
    for (int i = 0; i < length; ++i) {
        out += kDigits[bytes[i] >> 4];
        out += kDigits[bytes[i] & 15];
    }
    return out;
}

std::string dwfl_message()
{
    return dwfl_errmsg(-1);
}

// How often a process's maps may be read again for addresses in no file.
constexpr std::chrono::seconds kRereadMaps{1};

}  // namespace

struct UserUnwinder::Process {
    struct ModuleInfo {
        std::string path;
        std::string build_id;
        std::string key;  // build-id, else path: what symbol names are cached under
        uint64_t low = 0;
    };

    pid_t pid = 0;
    Dwfl* dwfl = nullptr;
    std::unordered_map<Dwfl_Module*, ModuleInfo> modules;
    // The sample being unwound, read by the callbacks below.
    const UserRegs* regs = nullptr;
    std::span<const uint8_t> stack;
    uint64_t stack_base = 0;
    struct Pc {
        uint64_t pc;
        bool activation;
    };
    std::vector<Pc> pcs;
    std::size_t max_frames = 0;
    std::chrono::steady_clock::time_point opened;
    // The last address neither the copy nor a file could serve (0: none).
    mutable uint64_t unserved_read = 0;

    ~Process()
    {
        if (dwfl != nullptr) {
            dwfl_end(dwfl);
        }
    }

    const ModuleInfo& module(Dwfl_Module* mod)
    {
        auto found = modules.find(mod);
        if (found != modules.end()) {
            return found->second;
        }
        ModuleInfo info;
        Dwarf_Addr low = 0;
        const char* name = dwfl_module_info(mod, nullptr, &low, nullptr, nullptr, nullptr, nullptr, nullptr);
        info.path = name != nullptr ? name : "";
        info.low = low;
        const unsigned char* bits = nullptr;
        GElf_Addr vaddr = 0;
        int length = dwfl_module_build_id(mod, &bits, &vaddr);
        if (length <= 0) {
            // proc-reported modules read their build-id when the file is opened
            Dwarf_Addr bias = 0;
            if (dwfl_module_getelf(mod, &bias) != nullptr) {
                length = dwfl_module_build_id(mod, &bits, &vaddr);
            }
        }
        if (length > 0) {
            info.build_id = hex(bits, length);
        }
        info.key = info.build_id.empty() ? info.path : info.build_id;
        return modules.emplace(mod, std::move(info)).first->second;
    }

    // A word of the mapped files (text, read-only data), for CFI expressions
    // that read memory outside the stack.
    bool read_file_word(Dwarf_Addr addr, Dwarf_Word* result) const
    {
        Dwfl_Module* mod = dwfl_addrmodule(dwfl, addr);
        if (mod == nullptr) {
            return false;
        }
        Dwarf_Addr bias = 0;
        if (dwfl_module_getelf(mod, &bias) == nullptr) {
            return false;
        }
        Dwarf_Addr in_section = addr;
        Elf_Scn* section = dwfl_module_address_section(mod, &in_section, &bias);
        if (section == nullptr) {
            return false;
        }
        Elf_Data* data = elf_getdata(section, nullptr);
        if (data == nullptr || data->d_buf == nullptr || in_section + sizeof(*result) > data->d_size) {
            return false;
        }
        std::memcpy(result, static_cast<const char*>(data->d_buf) + in_section, sizeof(*result));
        return true;
    }
};

namespace {

using Process = UserUnwinder::Process;

// The Dwfl_Thread_Callbacks: the process has one thread, the sampled one,
// whose memory is the stack copy.
pid_t next_thread(Dwfl*, void* process, void** thread)
{
    if (*thread != nullptr) {
        return 0;
    }
    *thread = process;
    return static_cast<Process*>(process)->pid;
}

bool get_thread(Dwfl*, pid_t, void* process, void** thread)
{
    *thread = process;
    return true;
}

bool memory_read(Dwfl*, Dwarf_Addr addr, Dwarf_Word* result, void* arg)
{
    const auto* process = static_cast<const Process*>(arg);
    const uint64_t base = process->stack_base;
    if (addr >= base && addr - base <= process->stack.size() &&
        process->stack.size() - (addr - base) >= sizeof(*result)) {
        std::memcpy(result, process->stack.data() + (addr - base), sizeof(*result));
        return true;
    }
    if (process->read_file_word(addr, result)) {
        return true;
    }
    process->unserved_read = addr;
    return false;
}

bool set_initial_registers(Dwfl_Thread* thread, void* arg)
{
    const UserRegs& regs = *static_cast<const Process*>(arg)->regs;
#if defined(__x86_64__)
    // DWARF numbers: 6 rbp, 7 rsp
    const Dwarf_Word frame_and_stack[2] = {regs.bp, regs.sp};
    if (!dwfl_thread_state_registers(thread, 6, 2, frame_and_stack)) {
        return false;
    }
#elif defined(__aarch64__)
    // DWARF numbers: 29 x29 (frame pointer), 31 sp
    const Dwarf_Word frame[1] = {regs.bp};
    const Dwarf_Word stack[1] = {regs.sp};
    if (!dwfl_thread_state_registers(thread, 29, 1, frame) || !dwfl_thread_state_registers(thread, 31, 1, stack)) {
        return false;
    }
#else
#error "user_unwinder: no DWARF register numbers for this architecture"
#endif
    dwfl_thread_state_register_pc(thread, regs.ip);
    return true;
}

const Dwfl_Thread_Callbacks kThreadCallbacks = {
    .next_thread = next_thread,
    .get_thread = get_thread,
    .memory_read = memory_read,
    .set_initial_registers = set_initial_registers,
    .detach = nullptr,
    .thread_detach = nullptr,
};

int collect_frame(Dwfl_Frame* frame, void* arg)
{
    auto* process = static_cast<Process*>(arg);
    Dwarf_Addr pc = 0;
    bool activation = false;
    if (!dwfl_frame_pc(frame, &pc, &activation)) {
        return DWARF_CB_ABORT;
    }
    process->pcs.push_back({pc, activation});
    return process->pcs.size() < process->max_frames ? DWARF_CB_OK : DWARF_CB_ABORT;
}

// Reads the process's memory maps into a Dwfl that unwinds from copies.
// Returns nullptr and sets why when it cannot.
// `tid`, a thread of it: see report_process_maps().
std::unique_ptr<Process> open_process(pid_t pid, std::string& why, pid_t tid = 0)
{
    auto process = std::make_unique<Process>();
    process->pid = pid;
    process->dwfl = dwfl_begin(&kProcessCallbacks);
    if (process->dwfl == nullptr) {
        why = "libdwfl: " + dwfl_message();
        return nullptr;
    }
    dwfl_report_begin(process->dwfl);
    const int err = report_process_maps(process->dwfl, pid, tid);
    dwfl_report_end(process->dwfl, nullptr, nullptr);
    if (err != 0) {
        why = "cannot read the memory maps of process " + std::to_string(pid) + ": " +
              (err > 0 ? std::strerror(err) : dwfl_message()) + " (has it exited?)";
        return nullptr;
    }
    if (!dwfl_attach_state(process->dwfl, nullptr, pid, &kThreadCallbacks, process.get())) {
        why = "libdwfl cannot unwind process " + std::to_string(pid) + ": " + dwfl_message();
        return nullptr;
    }
    return process;
}

// Why a walk ended early, in the terms of the copy when it ran past it
// (libdwfl then ends the walk as if at the outermost frame); "" when it
// reached the outermost frame.
std::string stop_reason(const Process& process, int walked)
{
    const uint64_t end = process.stack_base + process.stack.size();
    // Beyond the copy but not far: the caller's frames are deeper than the copy.
    constexpr uint64_t kStackReach = 64ULL << 20;
    if (process.unserved_read >= end && process.unserved_read - end < kStackReach) {
        return "the stack copy (" + std::to_string(process.stack.size()) + " bytes) ends before the outermost frame";
    }
    if (walked == -1) {
        return "libdwfl: " + dwfl_message();
    }
    if (walked == DWARF_CB_ABORT && process.pcs.size() >= process.max_frames) {
        return "stopped at the limit of " + std::to_string(process.max_frames) + " frames";
    }
    return walked == DWARF_CB_ABORT ? "libdwfl gave a frame no address" : "";
}

}  // namespace

UserUnwinder::UserUnwinder(std::size_t max_frames) : max_frames_(max_frames == 0 ? 1 : max_frames) {}

UserUnwinder::~UserUnwinder() = default;

bool UserUnwinder::load(pid_t pid, std::string& why)
{
    auto opened = open_process(pid, why);
    if (!opened) {
        return false;
    }
    // Not a sample's reading: an address in none of these modules reads
    // the maps again at once (a library mapped since, as ld.so goes on).
    opened->opened = {};
    processes_[pid] = std::move(opened);
    return true;
}

void UserUnwinder::forget(pid_t pid)
{
    processes_.erase(pid);
}

UserUnwinder::Process* UserUnwinder::process(pid_t pid, uint64_t ip, std::string& why, pid_t tid)
{
    const auto now = std::chrono::steady_clock::now();
    auto found = processes_.find(pid);
    if (found != processes_.end()) {
        // An address in no known module: the process mapped a file since
        // (dlopen), or the pid is another process's now. Read the maps again,
        // but not for every sample of code that is in no file (a JIT's).
        if (dwfl_addrmodule(found->second->dwfl, ip) != nullptr || now - found->second->opened < kRereadMaps) {
            return found->second.get();
        }
        auto reread = open_process(pid, why, tid);
        if (!reread) {
            found->second->opened = now;  // what was read stays, for its modules
            return found->second.get();
        }
        reread->opened = now;
        found->second = std::move(reread);
        return found->second.get();
    }
    auto opened = open_process(pid, why, tid);
    if (!opened) {
        return nullptr;
    }
    opened->opened = now;
    return processes_.emplace(pid, std::move(opened)).first->second.get();
}

const UserUnwinder::Symbol& UserUnwinder::symbol(const std::string& module_key, uint64_t module_offset, void* module,
                                                 uint64_t lookup)
{
    auto& names = symbols_[module_key];
    auto found = names.find(module_offset);
    if (found != names.end()) {
        return found->second;
    }
    Symbol symbol;
    GElf_Off offset = 0;
    GElf_Sym sym;
    const char* name =
        dwfl_module_addrinfo(static_cast<Dwfl_Module*>(module), lookup, &offset, &sym, nullptr, nullptr, nullptr);
    if (name != nullptr) {
        symbol.function = function_name(name);
        symbol.offset = offset;
    }
    return names.emplace(module_offset, std::move(symbol)).first->second;
}

void UserUnwinder::name_frames(Process& process, UnwoundStack& out)
{
    out.frames.reserve(process.pcs.size());
    for (const auto& [pc, activation] : process.pcs) {
        UserFrame frame{.pc = pc};
        // A return address points after the call: look up the call itself.
        const uint64_t lookup = activation ? pc : pc - 1;
        Dwfl_Module* mod = dwfl_addrmodule(process.dwfl, lookup);
        if (mod != nullptr) {
            const Process::ModuleInfo& info = process.module(mod);
            frame.module = info.path;
            frame.build_id = info.build_id;
            frame.module_offset = pc - info.low;
            const Symbol& name = symbol(info.key, lookup - info.low, mod, lookup);
            frame.function = name.function;
            frame.function_offset = name.function.empty() ? 0 : name.offset + (pc - lookup);
        }
        out.frames.push_back(std::move(frame));
    }
}

UnwoundStack UserUnwinder::name(pid_t pid, std::span<const uint64_t> pcs)
{
    UnwoundStack out;
    if (pcs.empty()) {
        return out;
    }
    std::string why;
    Process* process = this->process(pid, pcs.front(), why);
    if (process == nullptr) {
        for (uint64_t pc : pcs) {
            out.frames.push_back(UserFrame{.pc = pc});
        }
        out.stopped = why;
        return out;
    }
    process->pcs.clear();
    for (std::size_t i = 0; i < pcs.size(); ++i) {
        process->pcs.push_back({pcs[i], i == 0});
    }
    name_frames(*process, out);
    return out;
}

UnwoundStack UserUnwinder::unwind(pid_t pid, const UserRegs& regs, std::span<const uint8_t> stack, uint64_t stack_base,
                                  pid_t tid)
{
    UnwoundStack out;
    if (regs.ip == 0 || regs.sp == 0) {
        out.stopped = "no user registers (a kernel thread)";
        return out;
    }
    std::string why;
    Process* process = this->process(pid, regs.ip, why, tid);
    if (process == nullptr) {
        // Keep the one address known.
        out.frames.push_back(UserFrame{.pc = regs.ip});
        out.stopped = why;
        return out;
    }
    process->regs = &regs;
    process->stack = stack;
    process->stack_base = stack_base;
    process->pcs.clear();
    process->max_frames = max_frames_;
    process->unserved_read = 0;
    const int walked = dwfl_getthread_frames(process->dwfl, pid, collect_frame, process);
    out.stopped = stop_reason(*process, walked);
    process->regs = nullptr;
    process->stack = {};

    name_frames(*process, out);
    return out;
}

int report_process_maps(Dwfl* dwfl, pid_t pid, pid_t tid)
{
    int err = dwfl_linux_proc_report(dwfl, pid);
    if (err != 0 && tid > 0 && tid != pid) {
        dwfl_report_begin(dwfl);
        err = dwfl_linux_proc_report(dwfl, tid);
    }
    return err;
}

}  // namespace lockscope::unwind
