#include "probe/oncpu_oracle.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "oncpu_bpf.skel.h"
#include "probe/libbpf_log.h"

namespace lockscope::probe {
namespace {

const char* const kObject = "exact owner oracle (BPF on sched_switch)";
const char* const kNoPrivilege =
    "the exact owner oracle needs root or CAP_BPF + CAP_PERFMON; without it bench uses the spin budget";

Error load_error(const char* what, int err)
{
    if (err == EPERM || err == EACCES)
        return Error(what, kObject, err, kNoPrivilege);
    return Error(what, kObject, err, probe::last_libbpf_warning());
}

// "/proc/P/task/T/stat": the state is the first field after the command,
// which is in parentheses and may itself contain ") ".
char thread_state(pid_t tgid, std::uint32_t tid)
{
    std::ifstream f("/proc/" + std::to_string(tgid) + "/task/" + std::to_string(tid) + "/stat");
    std::string line;
    std::getline(f, line);
    const size_t close = line.rfind(')');
    return close != std::string::npos && close + 2 < line.size() ? line[close + 2] : '?';
}

std::vector<std::uint32_t> threads_in_state_r(pid_t tgid)
{
    std::vector<std::uint32_t> out;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/proc/" + std::to_string(tgid) + "/task", ec)) {
        const std::uint32_t tid = std::uint32_t(std::stoul(entry.path().filename().string()));
        if (thread_state(tgid, tid) == 'R')
            out.push_back(tid);
    }
    return out;
}

}  // namespace

OnCpuOracle OnCpuOracle::load(pid_t tgid, std::uint32_t entries)
{
    if (tgid <= 0 || entries == 0 || (entries & (entries - 1)) != 0)
        throw Error("cannot load", kObject, EINVAL, "needs a process id and a power-of-two table size");
    if (!std::filesystem::exists("/sys/kernel/btf/vmlinux"))
        throw Error("cannot load", kObject, 0, "the kernel has no BTF (/sys/kernel/btf/vmlinux)");
    if (!std::filesystem::exists("/proc/" + std::to_string(tgid)))
        throw Error("cannot load", kObject, ESRCH, "no process " + std::to_string(tgid));
    probe::keep_libbpf_warnings();

    oncpu_bpf* skel = oncpu_bpf__open();
    if (!skel)
        throw load_error("cannot open", errno);
    OnCpuOracle oracle(skel, entries);  // owns skel from here on
    skel->rodata->targ_tgid = std::uint32_t(tgid);
    skel->rodata->slot_mask = entries - 1;
    skel->rodata->nr_cpus = oracle.cpus_;
    bpf_map__set_value_size(skel->maps.oncpu,
                            LS_ONCPU_WORDS(entries, oracle.cpus_) * std::uint32_t(sizeof(std::uint32_t)));
    if (int err = oncpu_bpf__load(skel))
        throw load_error("cannot load", -err);
    if (int err = oncpu_bpf__attach(skel))
        throw load_error("cannot attach", -err);
    oracle.map_table();
    oracle.seed(tgid);
    return oracle;
}

OnCpuOracle::OnCpuOracle(oncpu_bpf* skel, std::uint32_t entries) noexcept
    : skel_(skel), entries_(entries), cpus_(std::uint32_t(std::clamp(libbpf_num_possible_cpus(), 1, LS_ONCPU_MAX_CPUS)))
{
}

int OnCpuOracle::table_fd() const noexcept
{
    return skel_ ? bpf_map__fd(skel_->maps.oncpu) : -1;
}

void OnCpuOracle::map_table()
{
    const size_t page = size_t(sysconf(_SC_PAGESIZE));
    table_bytes_ = (LS_ONCPU_WORDS(entries_, cpus_) * sizeof(std::uint32_t) + page - 1) / page * page;
    // Read-only: only the BPF program (and seed(), through its own mapping) writes.
    void* p = mmap(nullptr, table_bytes_, PROT_READ, MAP_SHARED, bpf_map__fd(skel_->maps.oncpu), 0);
    if (p == MAP_FAILED)
        throw Error("cannot mmap", "exact owner oracle table", errno);
    table_ = p;
    table_oracle_ =
        std::make_unique<reflock::OnCpuTableOracle>(static_cast<const volatile std::uint32_t*>(p), entries_);
}

// Threads already on a CPU at attach time have had no switch-in to mark
// them. Mark every thread in state R, then look again and unmark those no
// longer R: a thread that switched out before our mark would otherwise stay
// marked until it next runs, however long it sleeps. What remains wrong is
// transient: a runnable-but-waiting thread marked on CPU is fixed at its
// next switch-out, which comes soon because it is runnable. The marks are
// compare-and-swaps on a writable mapping of our own (the map's value is
// the whole table, so a syscall update would overwrite the program's
// concurrent marks); the oracle keeps only the read-only mapping.
void OnCpuOracle::seed(pid_t tgid)
{
    void* p = mmap(nullptr, table_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(skel_->maps.oncpu), 0);
    if (p == MAP_FAILED)
        return;  // not fatal: each thread's next switch marks it
    auto* table = static_cast<std::uint32_t*>(p);
    auto cas = [&](std::uint32_t tid, std::uint32_t from, std::uint32_t to) {
        std::atomic_ref<std::uint32_t>(table[LS_ONCPU_TID_SLOT(tid, entries_)]).compare_exchange_strong(from, to);
    };
    const std::vector<std::uint32_t> marked = threads_in_state_r(tgid);
    for (std::uint32_t tid : marked)
        cas(tid, 0, tid);
    for (std::uint32_t tid : marked)
        if (thread_state(tgid, tid) != 'R')
            cas(tid, tid, 0);
    munmap(p, table_bytes_);
}

OnCpuOracle::OnCpuOracle(OnCpuOracle&& other) noexcept
    : skel_(std::exchange(other.skel_, nullptr)),
      table_(std::exchange(other.table_, nullptr)),
      table_bytes_(std::exchange(other.table_bytes_, 0)),
      entries_(other.entries_),
      cpus_(other.cpus_),
      table_oracle_(std::move(other.table_oracle_))
{
}

OnCpuOracle& OnCpuOracle::operator=(OnCpuOracle&& other) noexcept
{
    if (this != &other) {
        reset();
        skel_ = std::exchange(other.skel_, nullptr);
        table_ = std::exchange(other.table_, nullptr);
        table_bytes_ = std::exchange(other.table_bytes_, 0);
        entries_ = other.entries_;
        cpus_ = other.cpus_;
        table_oracle_ = std::move(other.table_oracle_);
    }
    return *this;
}

OnCpuOracle::~OnCpuOracle()
{
    reset();
}

void OnCpuOracle::reset() noexcept
{
    table_oracle_.reset();
    if (table_)
        munmap(table_, table_bytes_);
    table_ = nullptr;
    if (skel_)
        oncpu_bpf__destroy(skel_);
    skel_ = nullptr;
}

}  // namespace lockscope::probe
