#include "probe/rwsem_spin.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <unordered_map>

#include "bpfmap/map_read.h"
#include "bpfmap/vmlinux_btf.h"
#include "lockscope_abi.h"
#include "probe/libbpf_log.h"
#include "rwsem_spin_bpf.skel.h"

namespace lockscope::probe {
namespace {

constexpr int kENOTSUPP = 524;  // the kernel-internal errno BPF attach paths return

enum class Mode { None, SpinFunction, InlinedSpin };

struct Choice {
    Mode mode = Mode::None;
    std::string reason;  // when None
};

// Which hooks this kernel offers, from its BTF (static functions appear
// there only when they were not inlined away).
Choice choose_mode()
{
    const btf* vmlinux = vmlinux_btf();
    if (!vmlinux)
        return {Mode::None, "no kernel BTF"};
    auto has_func = [&](const char* name) { return btf__find_by_name_kind(vmlinux, name, BTF_KIND_FUNC) >= 0; };
    Choice c;
    if (has_func("rwsem_optimistic_spin"))
        c.mode = Mode::SpinFunction;
    else if (has_func("rwsem_down_write_slowpath") && has_func("rwsem_spin_on_owner") &&
             btf__find_by_name_kind(vmlinux, "btf_trace_contention_begin", BTF_KIND_TYPEDEF) >= 0)
        c.mode = Mode::InlinedSpin;
    else
        c.reason = "this kernel has no traceable rwsem spin function (PREEMPT_RT rwsems do not spin)";
    return c;
}

// Whether this kernel loads an fentry program on `function` at all: two
// instructions, no object to open. Kernels that refuse fentry (this one's
// refusal is the answer the whole skeleton would give) then cost no parse
// of the kernel's BTF for the skeleton and no load of its programs. 0 or an
// errno value.
int fentry_refusal(const char* function)
{
    const btf* vmlinux = vmlinux_btf();
    const int id = vmlinux ? btf__find_by_name_kind(vmlinux, function, BTF_KIND_FUNC) : -1;
    if (id <= 0)
        return 0;  // the skeleton's own load says what is wrong
    const bpf_insn insns[] = {
        {BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0},
        {BPF_JMP | BPF_EXIT, 0, 0, 0, 0},
    };
    LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = BPF_TRACE_FENTRY,
                .attach_btf_id = static_cast<__u32>(id));
    const int fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, "ls_fentry_probe", "GPL", insns, 2, &opts);
    if (fd >= 0) {
        close(fd);
        return 0;
    }
    return errno;
}

// The errors by which a kernel says it does not offer fentry programs.
bool kernel_refuses(int err)
{
    return err == EPERM || err == EACCES || err == kENOTSUPP || err == EOPNOTSUPP || err == ENOTSUP;
}

std::string refusal(int err)
{
    if (kernel_refuses(err))
        return "fentry refused by this kernel";
    return std::string("cannot load: ") + std::strerror(err);
}

}  // namespace

std::unique_ptr<RwsemSpin> RwsemSpin::attach()
{
    std::unique_ptr<RwsemSpin> out(new RwsemSpin());
    const Choice choice = choose_mode();
    if (choice.mode == Mode::None) {
        out->status_ = "unavailable (" + choice.reason + ")";
        return out;
    }
    const int refused =
        fentry_refusal(choice.mode == Mode::SpinFunction ? "rwsem_optimistic_spin" : "rwsem_down_write_slowpath");
    if (kernel_refuses(refused)) {
        out->status_ = "unavailable (" + refusal(refused) + ")";
        return out;
    }
    // A refusal is an expected outcome here; keep libbpf's load log off the terminal.
    keep_libbpf_warnings();
    rwsem_spin_bpf* skel = rwsem_spin_bpf__open();
    int err = skel ? 0 : errno;
    if (skel) {
        const bool function = choice.mode == Mode::SpinFunction;
        bpf_program__set_autoload(skel->progs.spin_enter, function);
        bpf_program__set_autoload(skel->progs.spin_exit, function);
        bpf_program__set_autoload(skel->progs.slowpath_enter, !function);
        bpf_program__set_autoload(skel->progs.spin_on_owner, !function);
        bpf_program__set_autoload(skel->progs.writer_queued, !function);
        err = -rwsem_spin_bpf__load(skel);
        if (!err)
            err = -rwsem_spin_bpf__attach(skel);
    }
    if (err) {
        if (skel)
            rwsem_spin_bpf__destroy(skel);
        out->status_ = "unavailable (" + refusal(err) + ")";
        return out;
    }
    out->skel_ = skel;
    out->status_ = choice.mode == Mode::SpinFunction
                       ? "on (fentry/fexit rwsem_optimistic_spin)"
                       : "on (fentry rwsem_down_write_slowpath + rwsem_spin_on_owner: the spin is inlined)";
    return out;
}

RwsemSpin::~RwsemSpin()
{
    if (skel_)
        rwsem_spin_bpf__destroy(skel_);
}

void RwsemSpin::detach()
{
    if (skel_)
        rwsem_spin_bpf__detach(skel_);
}

void RwsemSpin::merge_into(RawSnapshot& snapshot) const
{
    if (!skel_)
        return;
    // The writer rows by address, so that each spinning rwsem finds its row
    // in constant time however many locks the snapshot holds.
    std::unordered_map<uint64_t, size_t> writers;
    for (size_t i = 0; i < snapshot.locks.size(); ++i)
        if ((snapshot.locks[i].flags & LS_F_KIND_MASK) == LCB_F_WRITE)
            writers.emplace(snapshot.locks[i].address, i);
    for_each_entry<__u64, ls_rwsem_spin>(skel_->maps.rwsem_spin, 1, [&](__u64 key, const ls_rwsem_spin* v) {
        const auto [at, fresh] = writers.try_emplace(key, snapshot.locks.size());
        if (fresh) {
            RawLock lock;
            lock.address = key;
            lock.flags = LCB_F_WRITE;
            snapshot.locks.push_back(lock);
        }
        RawLock& row = snapshot.locks[at->second];
        const uint64_t failures = std::min(v->spin_failures, v->spin_attempts);
        row.counters.spin_attempts += v->spin_attempts;
        row.counters.spin_failures += failures;
        row.counters.spin_successes += v->spin_attempts - failures;
    });
    snapshot.counters.lost.lock_map_full += skel_->bss->lost_locks;
}

std::string rwsem_spin_probe_status()
{
    if (geteuid() != 0)
        return "unknown (needs root to probe fentry)";
    return RwsemSpin::attach()->status();
}

}  // namespace lockscope::probe
