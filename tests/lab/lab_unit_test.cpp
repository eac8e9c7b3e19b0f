// The kernel lab's pieces that need no qemu: package resolution, module
// dependencies, the guest's init script.
#include <gtest/gtest.h>

#include <string>

#include "lab/guest_init.h"
#include "lab/guest_modules.h"
#include "lab/kernel.h"
#include "lab/lab.h"

namespace lockscope::lab {
namespace {

const std::string kNames =
    "linux-image-6.1.0-9-amd64-unsigned\n"
    "linux-image-6.1.0-50-amd64-unsigned\n"
    "linux-image-6.1.0-50-rt-amd64-unsigned\n"
    "linux-image-6.1.0-50-cloud-amd64-unsigned\n"
    "linux-image-6.1.0-50-amd64\n"
    "linux-image-6.1.0-50-amd64-dbg\n"
    "linux-image-6.12.117+deb12-amd64-unsigned\n"
    "linux-image-6.12.117+deb12-rt-amd64-unsigned\n";

TEST(LabPackages, VersionPicksTheNewestUnsignedImageOfThatFlavour)
{
    EXPECT_EQ(resolve_debian_package("6.1", kNames), "linux-image-6.1.0-50-amd64-unsigned");
    EXPECT_EQ(resolve_debian_package("6.1-rt", kNames), "linux-image-6.1.0-50-rt-amd64-unsigned");
    EXPECT_EQ(resolve_debian_package("6.1-cloud", kNames), "linux-image-6.1.0-50-cloud-amd64-unsigned");
    EXPECT_EQ(resolve_debian_package("6.12-rt", kNames), "linux-image-6.12.117+deb12-rt-amd64-unsigned");
}

TEST(LabPackages, NewerAbiWinsNumericallyNotAlphabetically)
{
    const std::string names = "linux-image-6.1.0-9-amd64-unsigned\nlinux-image-6.1.0-10-amd64-unsigned\n";
    EXPECT_EQ(resolve_debian_package("6.1", names), "linux-image-6.1.0-10-amd64-unsigned");
}

TEST(LabPackages, UnknownVersionsAndPackagesResolveToNothing)
{
    EXPECT_EQ(resolve_debian_package("5.10", kNames), "");
    EXPECT_EQ(resolve_debian_package("6.1-nosuch", kNames), "");
    EXPECT_EQ(resolve_debian_package("linux-image-9.9.9-amd64-unsigned", kNames), "");
    EXPECT_EQ(resolve_debian_package("linux-image-6.1.0-50-amd64", kNames), "linux-image-6.1.0-50-amd64");
}

TEST(LabModules, DependsComeFromModinfo)
{
    const std::string module = std::string(
        "\x7f"
        "ELF junk\0license=GPL\0depends=virtio,9pnet,virtio_ring\0vermagic=6.1",
        64);
    EXPECT_EQ(module_depends(module), (std::vector<std::string>{"virtio", "9pnet", "virtio_ring"}));
    const std::string none = std::string("\0depends=\0name=netfs\0", 21);
    EXPECT_TRUE(module_depends(none).empty());
}

TEST(LabInit, RecordsTheWorkloadAndReportsOverTheConsole)
{
    GuestRun run;
    run.workload = "unlink1";
    run.threads = 3;
    run.duration_s = 2.5;
    run.repeat = 4;
    run.modules = {"virtio", "9p"};
    const std::string init = guest_init_script(run);
    EXPECT_NE(init.find("lockscope record --workload 'unlink1' -t 3 -d 2.5 --repeat 4"), std::string::npos) << init;
    // then a command, with its user-space locks, whose session comes home too
    EXPECT_GT(init.find("record -o /tmp/user-locks.lockscope -- "), init.find("echo $? > /lab/status")) << init;
    EXPECT_NE(init.find("/lab/user-locks.lockscope"), std::string::npos) << init;
    EXPECT_LT(init.find("insmod /lib/modules/lab/virtio.ko"), init.find("insmod /lib/modules/lab/9p.ko"));
    EXPECT_NE(init.find(std::string(kConsolePrefix)), std::string::npos);
    EXPECT_NE(init.find("poweroff -f"), std::string::npos);
}

TEST(LabInit, ReportsAStuckRecordingOnlyWhenAsked)
{
    GuestRun run;
    EXPECT_EQ(guest_init_script(run).find("sysrq-trigger"), std::string::npos);
    run.stuck_after_s = 268;
    const std::string init = guest_init_script(run);
    EXPECT_NE(init.find("( sleep 268\n"), std::string::npos) << init;
    EXPECT_NE(init.find("say \"" + std::string(kStuckWord) + "after 268 s:\""), std::string::npos) << init;
    EXPECT_LT(init.find("sysrq-trigger"), init.find("/bin/lockscope record"));
    EXPECT_LT(init.find("/bin/lockscope record"), init.find("kill $guard"));
    EXPECT_LT(init.find("kill $guard"), init.rfind("poweroff -f"));
}

TEST(LabInit, StuckReportComesBeforeTheWatchdogOrNotAtAll)
{
    EXPECT_EQ(stuck_after_s(328), 268);
    EXPECT_EQ(stuck_after_s(90), 30);
    EXPECT_EQ(stuck_after_s(2), 0);
}

TEST(LabInit, QuotesWhatComesFromTheCommandLine)
{
    GuestRun run;
    run.workload = "pipe'; reboot; '";
    const std::string init = guest_init_script(run);
    EXPECT_NE(init.find("--workload 'pipe'\\''; reboot; '\\'''"), std::string::npos) << init;
}

}  // namespace
}  // namespace lockscope::lab
