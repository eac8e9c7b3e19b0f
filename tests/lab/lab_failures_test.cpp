// The kernel lab's failure paths: each ends in one sentence, exit 1, and
// no qemu left running.
#include <sys/mount.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>

#include "lab_helpers.h"

namespace lockscope::test {
namespace {

void expect_one_line_failure(const Finished& r, const std::string& text)
{
    EXPECT_EQ(r.exit_code, 1) << r.err;
    const std::string last = last_line(r.err);
    EXPECT_EQ(last.rfind("lockscope lab: ", 0), 0u) << r.err;
    EXPECT_NE(last.find(text), std::string::npos) << r.err;
}

std::string garbage_kernel()
{
    const std::string path = temp_path("vmlinuz-garbage");
    std::ofstream out(path, std::ios::binary);
    std::mt19937 rng(42);
    for (int i = 0; i < (1 << 20); i++)
        out.put(char(rng()));
    return path;
}

TEST(LabFailures, MissingQemuIsNamedWithItsPackage)
{
    const Finished r = run({lockscope_bin(), "lab", "--kernel", garbage_kernel(), "--qemu",
                            "/nonexistent/qemu-system-x86_64", "-o", make_temp_dir("lab-noqemu")});
    expect_one_line_failure(r, "qemu not found");
    EXPECT_NE(r.err.find("qemu-system-x86"), std::string::npos);
    // The same with the default name and a PATH that has no qemu.
    const Finished path = run({"env", "PATH=/nonexistent", lockscope_bin(), "lab", "--kernel", garbage_kernel()});
    expect_one_line_failure(path, "qemu not found");
}

TEST(LabFailures, KernelThatDoesNotBootIsReportedAndNothingKeepsRunning)
{
    LOCKSCOPE_REQUIRE_LAB();
    const std::string image = garbage_kernel();
    const std::string dir = make_temp_dir("lab-garbage");
    const Finished r = run({lockscope_bin(), "lab", "--kernel", image, "--accel", "tcg", "-o", dir}, 300);
    expect_one_line_failure(r, "kernel did not boot");
    EXPECT_EQ(processes_mentioning(image), 0);
}

// The "console log: DIR/....console.log" a failure names, or "".
std::string console_log_named(const std::string& err, const std::string& dir)
{
    const size_t at = err.find("console log: " + dir);
    const size_t end = err.find(".console.log", at);
    if (at == std::string::npos || end == std::string::npos)
        return "";
    return err.substr(at + 13, end + 12 - (at + 13));
}

TEST(LabFailures, WatchdogStopsAGuestThatOverrunsItsTime)
{
    LOCKSCOPE_REQUIRE_LAB();
    const std::string dir = make_temp_dir("lab-watchdog");
    const Finished r =
        run({lockscope_bin(), "lab", "--debian-kernel", "6.1", "--accel", "tcg", "--timeout", "2", "-o", dir}, 600);
    expect_one_line_failure(r, "the watchdog stopped the guest");
    // The guest's console is kept for the post-mortem.
    const std::string log_path = console_log_named(r.err, dir);
    ASSERT_FALSE(log_path.empty()) << r.err;
    EXPECT_TRUE(std::filesystem::exists(log_path)) << log_path;
    EXPECT_EQ(processes_mentioning("lockscope-lab."), 0);
}

// A recording that outlives the watchdog: before qemu is killed the guest
// says what each of lockscope's tasks waits in, and the kernel's
// blocked-task and per-CPU backtraces land in the console log. A 40 s
// watchdog (the shortest that asks for the report) reports at 13 s after
// the guest's init, which starts about 6 s after qemu under TCG on an idle
// host, and the recorder is waiting in its interval some 5 s after that:
// the report lands 20 s before the kill.
TEST(LabFailures, AGuestStuckPastItsWatchdogSaysWhereLockscopeWaits)
{
    LOCKSCOPE_REQUIRE_LAB();
    const std::string dir = make_temp_dir("lab-stuck");
    const Finished r = run(
        {lockscope_bin(), "lab", "--debian-kernel", "6.1", "--accel", "tcg", "--timeout", "40", "-d", "600", "-o", dir},
        600);
    expect_one_line_failure(r, "the watchdog stopped the guest");
    EXPECT_NE(r.err.find("the guest's lockscope tasks after 13 s: lockscope "), std::string::npos) << r.err;
    // The recorder waits for its next interval in sigtimedwait: its stack says
    // so. Its state and wchan depend on the moment: under a slow TCG guest it
    // may be caught just woken, runnable, or with the kernel not telling.
    EXPECT_NE(r.err.find("[ do_sigtimedwait __x64_sys_rt_sigtimedwait "), std::string::npos) << r.err;
    const std::string log_path = console_log_named(r.err, dir);
    ASSERT_FALSE(log_path.empty()) << r.err;
    std::ifstream console(log_path);
    const std::string text((std::istreambuf_iterator<char>(console)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("sysrq: Show Blocked State"), std::string::npos);
    EXPECT_NE(text.find("NMI backtrace for cpu"), std::string::npos);
    EXPECT_EQ(processes_mentioning("lockscope-lab."), 0);
}

// Two kernels under the default `--accel auto`: where KVM is usable, the
// first guest, which fails before it boots, must still let the lab go on
// (and end) rather than leave it waiting to learn whether KVM works.
TEST(LabFailures, NoSpaceForTheInitramfsIsOneSentence)
{
    LOCKSCOPE_REQUIRE_LAB();
    const std::string small = make_temp_dir("lab-full-tmp");
    ASSERT_EQ(mount("tmpfs", small.c_str(), "tmpfs", 0, "size=4m"), 0) << std::strerror(errno);
    const Finished r = run({"env", "TMPDIR=" + small, lockscope_bin(), "lab", "--debian-kernel", "6.1",
                            "--debian-kernel", "6.1-rt", "-o", make_temp_dir("lab-full-out")},
                           600);
    umount2(small.c_str(), MNT_DETACH);
    expect_one_line_failure(r, "cannot write initramfs");
    EXPECT_NE(r.err.find("No space left on device"), std::string::npos) << r.err;
    EXPECT_EQ(processes_mentioning(small), 0);
}

}  // namespace
}  // namespace lockscope::test
