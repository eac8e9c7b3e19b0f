// Boots one guest in qemu and watches it: console lines go to a log file
// and to a listener, a watchdog kills qemu when the guest overruns its time.
#pragma once

#include <functional>
#include <string>

namespace lockscope::lab {

struct BootOptions {
    std::string qemu = "qemu-system-x86_64";
    std::string kernel;  // image
    std::string initramfs;
    std::string share_dir;  // exported to the guest over 9p (guest_init.h's kShareTag)
    bool kvm = false;       // -accel kvm; TCG otherwise
    unsigned cpus = 2;
    unsigned memory_mib = 1024;
    double timeout_s = 300;
    std::string console_log;  // every byte the guest printed
    // When set: qemu is stopped (BootResult::no_boot) if booted() is still
    // false this many seconds after the start. Nested KVM can hang a guest in
    // its early boot without a word, where TCG boots it.
    double boot_deadline_s = 0;
    std::function<bool()> booted;
};

struct BootResult {
    bool kvm = false;
    bool timed_out = false;  // the watchdog killed qemu
    bool no_boot = false;    // stopped at boot_deadline_s: the guest never booted
    double elapsed_s = 0;
    int qemu_status = 0;  // exit status of qemu
    std::string last_console_line;
};

// True when /dev/kvm exists and this process can open it (qemu may still
// fail under KVM, e.g. nested in a VM that hides MSRs: callers fall back).
bool kvm_usable();

// The full path of the qemu binary, or an Error saying how to get one.
std::string require_qemu(const std::string& name);

// Runs qemu until it exits. `on_line` sees each console line (split at \n
// and \r) as it arrives. When the guest overruns options.timeout_s, qemu is
// killed and reaped and the result says so. Throws lockscope::Error when
// qemu cannot start.
BootResult boot(const BootOptions& options, const std::function<void(const std::string&)>& on_line);

}  // namespace lockscope::lab
