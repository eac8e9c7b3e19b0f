// lockscope lab: records a workload under other kernels booted in qemu and
// optionally diffs the sessions it brings back.
#include <cstdio>

#include "cli/options.h"
#include "core/error.h"
#include "lab/lab.h"

namespace lockscope::cli {
namespace {

constexpr const char* kLabUsage =
    "usage: lockscope lab (--kernel PATH [--modules DIR] | --debian-kernel SPEC)... [options]\n"
    "\n"
    "The kernel lab: boots each kernel in qemu (KVM when /dev/kvm is usable, TCG\n"
    "otherwise) with an initramfs holding this lockscope, records the workload\n"
    "inside, brings the session back into -o DIR (named after the guest's kernel\n"
    "release) and powers the guest off. Guests run side by side where they do not\n"
    "share host CPUs (--jobs), else one after another. The host's kernel is never\n"
    "touched. Sessions are ordinary: report, diff and the dashboard read them.\n"
    "\n"
    "Kernels (repeatable, in order):\n"
    "  --kernel PATH         a bzImage/vmlinuz; --modules DIR after it gives its\n"
    "                        lib/modules/<release> when 9p/virtio are modules\n"
    "  --debian-kernel SPEC  a Debian kernel package, or VERSION[-FLAVOUR] such as\n"
    "                        6.1 or 6.1-rt (newest unsigned image apt knows),\n"
    "                        fetched with apt-get download and kept in the cache\n"
    "\n"
    "Needs qemu-system-x86 and busybox-static; root for apt-get download's cache.";

constexpr const char* kLabExamples =
    "  lockscope lab --debian-kernel 6.1 --debian-kernel 6.1-rt --workload pipe -t 2 -d 2 --repeat 3 -o lab --diff\n"
    "  lockscope lab --kernel bzImage-a --kernel bzImage-b --workload unlink1 --diff";

// --modules belongs to the --kernel before it, which Program_options cannot
// tell; the kernels are read in command-line order here.
std::vector<lab::KernelSource> kernel_sources(const Args& args)
{
    std::vector<lab::KernelSource> out;
    for (size_t i = 0; i < args.size(); i++) {
        std::string name = args[i], value;
        const size_t eq = name.find('=');
        if (name.rfind("--", 0) == 0 && eq != std::string::npos) {
            value = name.substr(eq + 1);
            name = name.substr(0, eq);
        } else if (i + 1 < args.size() && (name == "--kernel" || name == "--debian-kernel" || name == "--modules")) {
            value = args[++i];
        }
        if (name == "--kernel")
            out.push_back({value, {}, {}});
        else if (name == "--debian-kernel")
            out.push_back({{}, {}, value});
        else if (name == "--modules") {
            if (out.empty() || out.back().image.empty())
                throw UsageError("--modules goes after the --kernel it belongs to");
            out.back().modules_dir = value;
        }
    }
    return out;
}

}  // namespace

int cmd_lab(const Args& args)
{
    lab::LabOptions o;
    bool diff = false;
    std::vector<std::string> kernels, debian, modules;
    po::options_description visible("options");
    visible.add_options()("help,h", "show this help")("kernel", po::value(&kernels),
                                                      "kernel image to boot (repeatable)")(
        "modules", po::value(&modules), "modules directory of the --kernel before it")(
        "debian-kernel", po::value(&debian), "Debian kernel package or VERSION[-FLAVOUR] (repeatable)")(
        "workload,w", po::value(&o.workload)->default_value("pipe"), "workload to record in each guest")(
        "threads,t", po::value(&o.threads)->default_value(2), "workload threads")(
        "duration,d", po::value(&o.duration_s)->default_value(5.0, "5"), "seconds per run")(
        "repeat,r", po::value(&o.repeat)->default_value(1), "runs per kernel, for diff statistics (3+ for Welch)")(
        "output,o", po::value(&o.output_dir)->default_value("."), "directory for the sessions (<release>.lockscope)")(
        "force,f", po::bool_switch(&o.overwrite), "replace existing sessions")(
        "diff", po::bool_switch(&diff), "print 'lockscope diff' of each consecutive pair of sessions at the end")(
        "timeout", po::value(&o.timeout_s),
        "watchdog: seconds a guest may take before qemu is killed "
        "(default: from the workload, 120 s + twice the runs' time)")("cpus", po::value(&o.cpus)->default_value(2),
                                                                      "guest CPUs")(
        "memory", po::value(&o.memory_mib)->default_value(1024), "guest memory in MiB")(
        "accel", po::value(&o.accel)->default_value("auto"),
        "kvm, tcg, or auto: KVM when /dev/kvm is usable, TCG when qemu fails under it")(
        "jobs,j", po::value(&o.jobs),
        "guests booted side by side (default: one per host CPU under TCG, which runs a guest on one host "
        "thread; with --accel kvm as many as the host has CPUs for; 1: one after another)")(
        "qemu", po::value(&o.qemu)->default_value("qemu-system-x86_64"), "qemu binary")(
        "cache", po::value(&o.cache_dir),
        "where downloaded kernels are kept "
        "(default: $LOCKSCOPE_LAB_CACHE, $XDG_CACHE_HOME/lockscope/lab, "
        "/var/cache/lockscope/lab)");
    po::positional_options_description none;
    po::variables_map vm;
    if (!parse(args, visible, visible, none, vm, {kLabUsage, kLabExamples}))
        return kExitOk;
    o.kernels = kernel_sources(args);

    const std::vector<std::string> sessions = lab::run_lab(o);
    if (diff && sessions.size() < 2)
        std::fprintf(stderr, "lockscope lab: --diff needs two kernels; nothing to compare\n");
    for (size_t i = 0; diff && i + 1 < sessions.size(); i++) {
        std::fflush(stderr);
        std::printf("%s== lockscope diff %s %s\n\n", i ? "\n" : "", sessions[i].c_str(), sessions[i + 1].c_str());
        std::fflush(stdout);
        if (int rc = cmd_diff({sessions[i], sessions[i + 1]}); rc != kExitOk)
            return rc;
    }
    return kExitOk;
}

}  // namespace lockscope::cli
