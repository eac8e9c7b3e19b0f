#include "lab/lab.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <exception>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "core/error.h"
#include "core/host/metadata.h"
#include "core/storage/session_store.h"
#include "lab/guest_init.h"
#include "lab/guest_modules.h"
#include "lab/initramfs.h"
#include "lab/kernel.h"
#include "lab/process.h"
#include "lab/qemu.h"
#include "workload/workload.h"
#include "core/clock.h"

namespace fs = std::filesystem;

namespace lockscope::lab {
namespace {

// What a guest needs to mount the results share when the drivers are modules.
const std::vector<std::string> kShareModules = {"virtio_pci", "9pnet_virtio", "9p"};

// Once guests run side by side, each progress line names its kernel.
thread_local std::string guest_label;
std::atomic<bool> side_by_side{false};
std::mutex progress_mutex;

void progress(const std::string& line)
{
    const std::lock_guard<std::mutex> hold(progress_mutex);
    const std::string prefix = side_by_side && !guest_label.empty() ? guest_label + ": " : "";
    std::fprintf(stderr, "lockscope lab: %s%s\n", prefix.c_str(), line.c_str());
}

std::string format_seconds(double s)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f s", s);
    return buf;
}

// A private directory for the initramfs and the share, removed on every path.
class TempDir {
public:
    TempDir()
    {
        const char* tmp = std::getenv("TMPDIR");
        std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/lockscope-lab.XXXXXX";
        if (!mkdtemp(pattern.data()))
            throw Error("cannot create a temporary directory in", fs::path(pattern).parent_path().string(), errno,
                        "point TMPDIR at a writable directory");
        path_ = pattern;
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    ~TempDir()
    {
        std::error_code ec;
        fs::remove_all(path_, ec);
    }
    const std::string& path() const { return path_; }

private:
    std::string path_;
};

std::string read_trimmed(const std::string& path)
{
    std::ifstream in(path);
    std::string s;
    std::getline(in, s);
    return s;
}

GuestKernel prepare(const KernelSource& source, const std::string& cache_dir)
{
    if (!source.debian.empty())
        return debian_kernel(source.debian, cache_dir, progress);
    return local_kernel(source.image, source.modules_dir);
}

std::vector<std::string> library_dirs(const std::string& binary)
{
    std::set<std::string> dirs;
    for (const std::string& lib : shared_libraries(binary))
        dirs.insert(fs::path(lib).parent_path().string());
    return {dirs.begin(), dirs.end()};
}

// Turns the guest's console into progress lines and remembers what went wrong.
class ConsoleWatcher {
public:
    ConsoleWatcher(unsigned repeat, double start_s) : repeat_(repeat), start_s_(start_s) {}

    void operator()(const std::string& line)
    {
        const std::string prefix = kConsolePrefix;
        // Not only at the start: a line the init script writes while the
        // recorder's status line (no newline until its run ends) is on the
        // console is appended to it.
        if (const size_t at = line.find(prefix); at != std::string::npos) {
            const std::string what = line.substr(at + prefix.size());
            if (what.rfind("booted", 0) == 0) {
                booted_ = true;
                progress("booted " + what.substr(std::min(what.size(), size_t(7))) + " in " + since_start());
                if (on_booted)
                    on_booted();
            } else if (what == "recording") {
                progress(repeat_ > 1 ? "recording run 1/" + std::to_string(repeat_) + "..." : "recording...");
                run_ = 1;
            } else if (what.rfind("error ", 0) == 0) {
                guest_error_ = what.substr(6);
            } else if (what == "user locks") {
                progress("recording a command's user-space locks...");
            } else if (what == "powering off") {
                progress("powering off");
            } else if (what.rfind(kStuckWord, 0) == 0) {
                stuck_.push_back(what.substr(std::strlen(kStuckWord)));
            }
            return;
        }
        if (line.rfind("lockscope record: ", 0) == 0)
            record_error_ = line.substr(18);
        else if (line.rfind("lockscope: ", 0) == 0 && line.find("rwsem spin observation") != std::string::npos)
            progress("guest " + line.substr(11));
        // The recorder's status line names its run: "  run 2  1.0 s  events ...".
        const size_t run = line.find("run ");
        if (run != std::string::npos && line.find(" s  events") != std::string::npos) {
            const unsigned n = unsigned(std::strtoul(line.c_str() + run + 4, nullptr, 10));
            if (n > run_ && n <= repeat_) {
                run_ = n;
                progress("recording run " + std::to_string(n) + "/" + std::to_string(repeat_) + "...");
            }
        }
        if (line.find("Kernel panic") != std::string::npos)
            panic_ = line.substr(line.find("Kernel panic"));
    }

    bool booted() const { return booted_; }
    std::function<void()> on_booted;  // when the guest's init says it has booted
    const std::string& guest_error() const { return guest_error_; }
    const std::string& record_error() const { return record_error_; }
    const std::string& panic() const { return panic_; }
    // The guest's own report of a recording that ran too long: "after N s",
    // then one "comm tid state in wchan [ stack ]" per user-space task.
    const std::vector<std::string>& stuck() const { return stuck_; }

private:
    std::string since_start() const { return format_seconds(monotonic_s() - start_s_); }

    unsigned repeat_;
    double start_s_;
    unsigned run_ = 0;
    bool booted_ = false;
    std::string guest_error_, record_error_, panic_;
    std::vector<std::string> stuck_;
};

std::mutex names_mutex;

std::string unique_destination(const std::string& dir, const std::string& release, std::set<std::string>& used)
{
    const std::lock_guard<std::mutex> hold(names_mutex);
    std::string name = release;
    for (int i = 2; used.count(name); i++)
        name = release + "-" + std::to_string(i);
    used.insert(name);
    return (fs::path(dir) / (name + ".lockscope")).string();
}

void keep_console_log(const std::string& from, const std::string& to)
{
    std::error_code ec;
    fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec);
}

std::map<std::string, std::string> host_facts(const BootResult& boot, const GuestKernel& kernel, const LabOptions& o,
                                              const std::string& load_before)
{
    utsname u{};
    uname(&u);
    std::map<std::string, std::string> m;
    m["virtualised"] = boot.kvm ? "qemu-kvm" : "qemu-tcg";
    m["lab.host"] = u.nodename;
    m["lab.host_kernel_release"] = u.release;
    m["lab.host_cpus"] = std::to_string(sysconf(_SC_NPROCESSORS_ONLN));
    m["lab.host_loadavg_before"] = load_before;
    m["lab.host_loadavg_after"] = read_loadavg();
    m["lab.guest_cpus"] = std::to_string(o.cpus);
    m["lab.guest_memory_mib"] = std::to_string(o.memory_mib);
    m["lab.kernel_image"] = fs::path(kernel.image).filename().string();
    if (!kernel.package.empty())
        m["lab.kernel_package"] = kernel.package;
    m["lab.kernel_config"] = kernel.config.empty() ? "none shipped with the image" : "from the kernel's package";
    char elapsed[32];
    std::snprintf(elapsed, sizeof elapsed, "%.1f", boot.elapsed_s);
    m["lab.guest_elapsed_s"] = elapsed;
    return m;
}

// How the guest's kernel took the user-space lock programs, from the short
// recording of a command after the workload's: "recorded", "unavailable: "
// and why, or "not recorded: " and the recorder's last words.
std::string guest_user_locks(const std::string& share)
{
    const std::string session = share + "/user-locks.lockscope";
    if (access(session.c_str(), R_OK) != 0) {
        std::string last, line;
        std::ifstream err(share + "/user-locks.err");
        while (std::getline(err, line))
            if (!line.empty())
                last = line;
        return "not recorded: " + (last.empty() ? std::string("lockscope record left no session") : last);
    }
    try {
        const Session s = load_session(session);
        if (s.user_lock_runs.empty())
            return "not recorded: the session has no user-lock run";
        return s.user_lock_runs.front().status;
    } catch (const std::exception& e) {
        return std::string("not recorded: ") + e.what();
    }
}

void build_guest_initramfs(const GuestKernel& kernel, const LabOptions& o, const std::string& path)
{
    const std::string self = fs::read_symlink("/proc/self/exe").string();
    GuestRun run;
    run.workload = o.workload;
    run.threads = o.threads;
    run.duration_s = o.duration_s;
    run.repeat = o.repeat;
    run.library_dirs = library_dirs(self);
    run.stuck_after_s = stuck_after_s(o.timeout_s > 0 ? o.timeout_s : default_timeout_s(o));
    InitramfsSpec spec;
    spec.lockscope_binary = self;
    spec.busybox = find_busybox();
    if (spec.busybox.empty())
        throw Error("busybox not found", "", 0, "install the busybox-static package (scripts/install-deps.sh does)");
    spec.kernel_config = kernel.config;
    if (!kernel.modules_dir.empty()) {
        spec.modules = resolve_guest_modules(kernel.modules_dir, kShareModules);
        for (const GuestModule& m : spec.modules)
            run.modules.push_back(m.name);
    }
    spec.init_script = guest_init_script(run);
    build_initramfs(path, spec);
}

// Under KVM a guest runs its init within a few seconds (TCG needs about ten).
constexpr double kKvmBootDeadlineS = 20;

// Boots once; under `accel auto`, a qemu that aborts under KVM before the
// guest ran a line (nested KVM hiding MSRs does that), or a guest that has
// not booted under KVM by kKvmBootDeadlineS (nested KVM hanging it in early
// boot does that), is retried with TCG, and later kernels go straight to TCG.
// booted(kvm): once the guest has booted, or once KVM failed and TCG is next.
BootResult boot_guest(const GuestKernel& kernel, const LabOptions& o, BootOptions& boot_options, bool& use_kvm,
                      std::optional<ConsoleWatcher>& watcher, const std::function<void(bool)>& booted)
{
    for (;;) {
        boot_options.kvm = use_kvm;
        progress("booting " + kernel.label + (use_kvm ? " (qemu, KVM)" : " (qemu, TCG)") + ", " +
                 std::to_string(o.cpus) + " CPUs, " + std::to_string(o.memory_mib) + " MiB");
        ConsoleWatcher attempt(o.repeat, monotonic_s());
        attempt.on_booted = [&booted, kvm = use_kvm] { booted(kvm); };
        const bool may_fall_back = use_kvm && o.accel == "auto";
        boot_options.boot_deadline_s = may_fall_back ? kKvmBootDeadlineS : 0;
        boot_options.booted = [&attempt] { return attempt.booted(); };
        const BootResult boot = lab::boot(boot_options, std::ref(attempt));
        boot_options.booted = nullptr;
        if (may_fall_back && boot.no_boot) {
            progress("the guest did not boot under KVM within " + format_seconds(kKvmBootDeadlineS) +
                     " (nested KVM can hang a guest silently); using TCG from now on");
            use_kvm = false;
            booted(false);
            continue;
        }
        if (may_fall_back && !attempt.booted() && !boot.timed_out && boot.qemu_status != 0) {
            progress("qemu failed under KVM (" + boot.last_console_line + "); using TCG from now on");
            use_kvm = false;
            booted(false);
            continue;
        }
        watcher.emplace(attempt);
        return boot;
    }
}

// What went wrong in a guest that did not leave a session, as one Error.
void check_guest_outcome(const BootResult& boot, const ConsoleWatcher& watcher, const BootOptions& boot_options,
                         const std::string& share,
                         const std::function<Error(const std::string&, const std::string&)>& fail)
{
    if (boot.timed_out) {
        std::string where;
        for (const std::string& line : watcher.stuck())
            where += (where.empty() ? "; the guest's lockscope tasks " : where.back() == ':' ? " " : ", ") + line;
        throw fail("the watchdog stopped the guest", "it did not finish within " +
                                                         format_seconds(boot_options.timeout_s) +
                                                         "; raise --timeout on a slow host" + where);
    }
    if (!watcher.booted()) {
        if (boot.qemu_status != 0)
            throw fail("kernel did not boot",
                       "qemu exited with status " + std::to_string(boot.qemu_status) + ": " + boot.last_console_line);
        throw fail("kernel did not boot",
                   watcher.panic().empty() ? "it stopped before running the lab's init" : watcher.panic());
    }
    if (!watcher.guest_error().empty())
        throw fail("guest failed", watcher.guest_error());
    const std::string status = read_trimmed(share + "/status");
    if (status.empty())
        throw fail("guest stopped before lockscope record finished",
                   watcher.panic().empty() ? "last console line: " + boot.last_console_line : watcher.panic());
    if (status != "0")
        throw fail("lockscope record failed in the guest",
                   watcher.record_error().empty() ? "exit status " + status : watcher.record_error());
    if (access((share + "/session.lockscope").c_str(), R_OK) != 0)
        throw fail("the guest left no session file", "lockscope record exited 0");
}

void refuse_existing(const std::string& destination, bool overwrite)
{
    if (!overwrite && fs::exists(destination))
        throw Error("session exists", destination, 0, "use --force to replace it, or another -o directory");
}

// One guest: build its initramfs, boot it, bring the session home.
// booted(kvm): as boot_guest calls it.
std::string record_in_guest(const GuestKernel& kernel, const LabOptions& o, const std::string& destination_dir,
                            std::set<std::string>& used_names, bool& use_kvm, const std::function<void(bool)>& booted)
{
    // Debian kernels name their session before booting: fail before the wait.
    if (!kernel.release.empty())
        refuse_existing((fs::path(destination_dir) / (kernel.release + ".lockscope")).string(), o.overwrite);
    TempDir tmp;
    const std::string share = tmp.path() + "/share";
    fs::create_directory(share);
    BootOptions boot_options;
    boot_options.qemu = o.qemu;
    boot_options.kernel = kernel.image;
    boot_options.initramfs = tmp.path() + "/initramfs.cpio";
    boot_options.share_dir = share;
    boot_options.cpus = o.cpus;
    boot_options.memory_mib = o.memory_mib;
    boot_options.timeout_s = o.timeout_s > 0 ? o.timeout_s : default_timeout_s(o);
    boot_options.console_log = tmp.path() + "/console.log";
    build_guest_initramfs(kernel, o, boot_options.initramfs);

    const std::string load_before = read_loadavg();
    std::optional<ConsoleWatcher> watcher;
    const BootResult boot = boot_guest(kernel, o, boot_options, use_kvm, watcher, booted);
    const std::string saved_log = (fs::path(destination_dir) / (kernel.label + ".console.log")).string();
    check_guest_outcome(boot, *watcher, boot_options, share, [&](const std::string& what, const std::string& why) {
        keep_console_log(boot_options.console_log, saved_log);
        return Error(what, kernel.label, 0, why + "; console log: " + saved_log);
    });
    const std::string session = share + "/session.lockscope";
    std::map<std::string, std::string> facts = host_facts(boot, kernel, o, load_before);
    facts["lab.user_locks"] = guest_user_locks(share);
    progress("user-space locks: " + facts["lab.user_locks"]);
    annotate_session(session, facts);

    const std::string release = read_trimmed(share + "/release");
    const std::string destination =
        unique_destination(destination_dir, release.empty() ? kernel.label : release, used_names);
    refuse_existing(destination, o.overwrite);
    std::error_code ec;
    fs::copy_file(session, destination, fs::copy_options::overwrite_existing, ec);
    if (ec)
        throw Error("cannot write session", destination, ec.value());
    progress((side_by_side ? "" : kernel.label + ": ") + destination + " (" + format_seconds(boot.elapsed_s) +
             " in the guest, " + (boot.kvm ? "qemu-kvm" : "qemu-tcg") + ")");
    return destination;
}

}  // namespace

double stuck_after_s(double timeout_s)
{
    // Counted from the guest's init, which starts 10-25 s after qemu under
    // TCG: leave the report time to reach the console before the kill.
    if (timeout_s >= 120)
        return timeout_s - 60;
    return timeout_s >= 40 ? std::floor(timeout_s / 3) : 0;
}

double default_timeout_s(const LabOptions& o)
{
    // Boot and power-off take ~10 s under TCG on an idle 2-CPU host; each run
    // adds its duration and the recorder's setup. Generous, since a busy host
    // slows TCG down a lot; the watchdog is for hangs, not for slowness.
    const double per_run = o.duration_s + 10.0;
    return std::ceil(120.0 + 2.0 * per_run * double(o.repeat));
}

void validate(const LabOptions& o)
{
    if (o.kernels.empty())
        throw UsageError("give at least one kernel: --kernel PATH or --debian-kernel 6.1 (repeatable)");
    for (const KernelSource& k : o.kernels)
        if (!k.image.empty() && !k.debian.empty())
            throw UsageError("a kernel is either --kernel PATH or --debian-kernel SPEC");
    if (o.repeat < 1)
        throw UsageError("--repeat must be at least 1");
    if (!(o.duration_s > 0) || !std::isfinite(o.duration_s))
        throw UsageError("-d/--duration must be a positive number of seconds");
    if (o.threads < 1)
        throw UsageError("-t/--threads must be at least 1");
    if (o.cpus < 1 || o.cpus > 64)
        throw UsageError("--cpus must be between 1 and 64");
    if (o.memory_mib < 256)
        throw UsageError("--memory must be at least 256 MiB");
    if (o.accel != "auto" && o.accel != "kvm" && o.accel != "tcg")
        throw UsageError("--accel must be auto, kvm or tcg");
    if (o.accel == "kvm" && !kvm_usable())
        throw Error("cannot use KVM", "/dev/kvm", 0, "it is missing or not accessible; use --accel tcg");
    if (o.timeout_s < 0 || !std::isfinite(o.timeout_s))
        throw UsageError("--timeout must be a positive number of seconds");
    if (!workload::find(o.workload))
        throw UsageError("unknown workload '" + o.workload + "' (see 'lockscope workload --help')");
    require_qemu(o.qemu);
    if (find_busybox().empty())
        throw Error("busybox not found", "", 0, "install the busybox-static package (scripts/install-deps.sh does)");
    std::error_code ec;
    // -o names a directory for the sessions: made if it does not exist yet
    // (the README's own example passes a new one).
    if (!fs::exists(o.output_dir, ec) && !fs::create_directories(o.output_dir, ec) && ec)
        throw Error("cannot create the output directory", o.output_dir, ec.value());
    if (!fs::is_directory(o.output_dir, ec))
        throw Error("output is not a directory", o.output_dir, 0, "give -o a directory for the sessions");
}

unsigned guests_at_once(const LabOptions& o, bool kvm, size_t kernels)
{
    if (o.jobs > 0)
        return unsigned(std::min<size_t>(o.jobs, kernels));
    // Single-threaded TCG runs a guest's vCPUs on one host thread: one guest
    // per host CPU. Under KVM each vCPU is a host thread: guests that share
    // host CPUs would distort each other's contention, so one at a time
    // unless the host has CPUs for all of them.
    const long host = std::max(1L, sysconf(_SC_NPROCESSORS_ONLN));
    const long per_guest = kvm ? long(o.cpus) : 1;
    return unsigned(std::clamp<long>(host / per_guest, 1, long(kernels)));
}

namespace {

// The kernels' guests, taken in order by one or more threads. Under `accel
// auto` the first guest settles KVM or TCG; the others start once it has
// booted, one after another under KVM, side by side with it under TCG.
class Guests {
public:
    Guests(const std::vector<GuestKernel>& kernels, const LabOptions& o, bool kvm, bool settled)
        : kernels_(kernels), o_(o), sessions_(kernels.size()), failed_(kernels.size()), kvm_(kvm), settled_(settled)
    {
    }
    Guests(const Guests&) = delete;
    Guests& operator=(const Guests&) = delete;
    // Not left running when run_lab leaves early (a thread that could not start).
    ~Guests()
    {
        for (std::thread& t : threads_)
            if (t.joinable())
                t.join();
    }

    size_t left()
    {
        const std::lock_guard<std::mutex> hold(mutex_);
        return kernels_.size() - next_;
    }

    void start(unsigned threads)
    {
        for (unsigned t = 0; t < threads; t++)
            threads_.emplace_back([this] { work(); });
    }

    // Whether the first guest booted under KVM, once it has booted or failed.
    bool settled_kvm()
    {
        std::unique_lock<std::mutex> hold(mutex_);
        settled_cv_.wait(hold, [this] { return settled_; });
        return kvm_;
    }

    std::vector<std::string> finish()
    {
        for (std::thread& t : threads_)
            t.join();
        for (const std::exception_ptr& e : failed_)
            if (e)
                std::rethrow_exception(e);
        return sessions_;
    }

private:
    void settle(bool kvm)
    {
        const std::lock_guard<std::mutex> hold(mutex_);
        if (settled_)
            return;
        kvm_ = kvm;
        settled_ = true;
        settled_cv_.notify_all();
    }

    void work()
    {
        for (;;) {
            size_t i;
            bool kvm;
            {
                const std::lock_guard<std::mutex> hold(mutex_);
                // One after another, a failure ends the lab; side by side,
                // the guests already running finish.
                if (next_ == kernels_.size() || (stopped_ && !side_by_side))
                    return;
                i = next_++;
                kvm = kvm_;
            }
            guest_label = kernels_[i].label;
            if (!side_by_side)
                progress("kernel " + std::to_string(i + 1) + "/" + std::to_string(kernels_.size()) + ": " +
                         kernels_[i].label);
            try {
                sessions_[i] = record_in_guest(kernels_[i], o_, o_.output_dir, used_names_, kvm,
                                               [this](bool booted_kvm) { settle(booted_kvm); });
            } catch (...) {
                failed_[i] = std::current_exception();
                const std::lock_guard<std::mutex> hold(mutex_);
                stopped_ = true;
            }
            settle(kvm);  // a guest that failed before it booted
            const std::lock_guard<std::mutex> hold(mutex_);
            kvm_ = kvm_ && kvm;  // once KVM failed, TCG from then on
        }
    }

    const std::vector<GuestKernel>& kernels_;
    const LabOptions& o_;
    std::vector<std::string> sessions_;
    std::vector<std::exception_ptr> failed_;
    std::set<std::string> used_names_;
    std::vector<std::thread> threads_;
    std::mutex mutex_;
    std::condition_variable settled_cv_;
    size_t next_ = 0;
    bool stopped_ = false;
    bool kvm_;
    bool settled_;
};

void say_side_by_side(size_t kernels, unsigned at_once, bool kvm)
{
    side_by_side = true;
    progress(std::to_string(kernels) + " kernels, " + std::to_string(at_once) + " guests at once (" +
             (kvm ? "KVM" : "TCG: one host CPU each") + ")");
}

}  // namespace

std::vector<std::string> run_lab(const LabOptions& o)
{
    validate(o);
    const std::string cache = o.cache_dir.empty() ? default_cache_dir() : o.cache_dir;
    const double start = monotonic_s();
    const bool use_kvm = o.accel == "kvm" || (o.accel == "auto" && kvm_usable());
    std::vector<GuestKernel> kernels;
    for (const KernelSource& source : o.kernels)
        kernels.push_back(prepare(source, cache));
    side_by_side = false;
    // Under `accel auto` the first guest settles KVM or TCG for the others.
    const bool settling = o.accel == "auto" && use_kvm;
    Guests guests(kernels, o, use_kvm, !settling);
    if (settling) {
        guests.start(1);
        const bool kvm = guests.settled_kvm();
        const unsigned more = guests_at_once(o, kvm, kernels.size());
        if (more > 1 && guests.left() > 0) {
            say_side_by_side(kernels.size(), more, kvm);
            guests.start(unsigned(std::min<size_t>(more - 1, guests.left())));
        }
    } else {
        const unsigned at_once = guests_at_once(o, use_kvm, kernels.size());
        if (at_once > 1)
            say_side_by_side(kernels.size(), at_once, use_kvm);
        guests.start(at_once);
    }
    const std::vector<std::string> sessions = guests.finish();
    progress("done: " + std::to_string(sessions.size()) + " session" + (sessions.size() == 1 ? "" : "s") + " in " +
             format_seconds(monotonic_s() - start));
    return sessions;
}

}  // namespace lockscope::lab
