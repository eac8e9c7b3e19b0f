#include "lab/guest_init.h"

#include <cstdio>
#include <sstream>

namespace lockscope::lab {
namespace {

// Single-quoted for sh: workload names and paths come from the command line.
std::string quoted(const std::string& s)
{
    std::string out = "'";
    for (char c : s)
        out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

}  // namespace

std::string guest_init_script(const GuestRun& run)
{
    std::ostringstream s;
    char duration[32];
    std::snprintf(duration, sizeof duration, "%g", run.duration_s);
    std::string library_path;
    for (const std::string& dir : run.library_dirs)
        library_path += (library_path.empty() ? "" : ":") + dir;

    s << "#!/bin/busybox sh\n"
         "/bin/busybox --install -s\n"
         "export PATH=/bin:/sbin:/usr/bin:/usr/sbin\n"
      << "export LD_LIBRARY_PATH=" << quoted(library_path) << "\n"
      << "say() { echo \"" << kConsolePrefix << "$*\"; }\n"
      << "fail() { say \"error $*\"; poweroff -f; sleep 60; }\n"
         "mount -t proc proc /proc\n"
         "mount -t sysfs sysfs /sys\n"
         "mount -t devtmpfs devtmpfs /dev\n"
         "mount -t tmpfs tmpfs /tmp\n"
         "mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null\n"
         "hostname lockscope-lab\n"
         "say \"booted $(uname -r)\"\n";
    for (const std::string& m : run.modules)
        s << "insmod /lib/modules/lab/" << m << ".ko || fail \"cannot load module " << m << "\"\n";
    s << "mount -t 9p -o trans=virtio,version=9p2000.L " << kShareTag
      << " /lab || "
         "fail \"cannot mount the results share: the kernel needs 9p over virtio (CONFIG_NET_9P_VIRTIO, "
         "CONFIG_9P_FS) built in, or its modules directory\"\n"
         // The session's config lines come from /boot/config-<release>, as on a host.
         "[ -f /boot/lab-config ] && cp /boot/lab-config /boot/config-$(uname -r)\n"
         "uname -r > /lab/release\n"
         "say recording\n"
         "cd /tmp\n";
    if (run.stuck_after_s > 0) {
        // Before the host's watchdog kills qemu: what each of lockscope's
        // tasks (recorder and workload) is waiting in, so that a hang says
        // where it is.
        char after[32];
        std::snprintf(after, sizeof after, "%.0f", run.stuck_after_s);
        s << "( sleep " << after << "\n"
          << "  echo\n"  // ends the recorder's status line
          << "  say \"" << kStuckWord << "after " << after << " s:\"\n"
          << "  for t in /proc/[0-9]*/task/[0-9]*; do\n"
             "    case $(cat $t/comm 2>/dev/null) in lockscope*) ;; *) continue ;; esac\n"
             // A task caught between waits (on its way into or out of one)
             // shows no stack or no wchan, or a stack of another moment than
             // its wchan (state, stack and wchan are three reads, slow under
             // TCG): look again, up to three times.
             "    for try in 1 2 3; do\n"
             "      st=$(sed 's/.*) //' $t/stat 2>/dev/null | cut -d' ' -f1)\n"
             "      stack=$(sed -n '1,3s/^\\[<[0-9a-f]*>\\] \\([^+]*\\).*/\\1/p' $t/stack 2>/dev/null | tr '\\n' ' ')\n"
             "      w=$(cat $t/wchan 2>/dev/null); [ \"$w\" = 0 ] && w=\n"
             "      [ \"$st\" = R ] && break\n"
             "      [ -n \"$w\" ] && case \" $stack\" in *\" $w \"*) break ;; esac\n"
             "      sleep 1\n"
             "    done\n"
          << "    say \"" << kStuckWord
          << "$(cat $t/comm) ${t##*/} $st${w:+ in $w} [ $stack]\"\n"
             "  done\n"
             "  echo 7 > /proc/sys/kernel/printk\n"
             "  echo w > /proc/sysrq-trigger\n"
             "  echo l > /proc/sysrq-trigger\n"
             ") &\n"
             "guard=$!\n";
    }
    s << "/bin/lockscope record --workload " << quoted(run.workload) << " -t " << run.threads << " -d " << duration
      << " --repeat " << run.repeat << " -o /tmp/session.lockscope\n"
      << "echo $? > /lab/status\n";
    if (run.stuck_after_s > 0)
        s << "kill $guard 2>/dev/null\n";
    // Whether this kernel takes the user-space lock programs: a command
    // recorded as a user runs one (user locks on), its session brought home
    // for the host to read how they were recorded.
    s << "say \"user locks\"\n"
         "/bin/lockscope record -o /tmp/user-locks.lockscope -- /bin/lockscope workload pipe -t 2 -d 1 "
         ">/dev/null 2>/lab/user-locks.err && cp /tmp/user-locks.lockscope /lab/user-locks.lockscope\n";
    s << ""
         "[ -f /tmp/session.lockscope ] && cp /tmp/session.lockscope /lab/session.lockscope\n"
         "sync\n"
         "umount /lab\n"
         "say \"powering off\"\n"
         "poweroff -f\n"
         "sleep 60\n";
    return s.str();
}

}  // namespace lockscope::lab
