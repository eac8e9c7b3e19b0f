// `lockscope top` under a real pseudo-terminal: it draws frames with the
// header and the workload's lock, changes sort and grouping on keys, quits on
// `q` or SIGTERM, and hands the terminal back with the settings it found.
// Without a terminal it prints plain blocks.
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "core/clock.h"
#include "root_helpers.h"
#include "subprocess.h"

namespace lockscope::test {
namespace {

// A program on the slave side of a pty, as its controlling terminal. The
// test keeps the slave open too, to read the terminal's settings after the
// program has gone.
class PtyProgram {
public:
    explicit PtyProgram(const std::vector<std::string>& argv)
    {
        winsize ws{};
        ws.ws_col = 120;
        ws.ws_row = 40;
        if (openpty(&master_, &slave_, nullptr, nullptr, &ws) != 0)
            throw std::runtime_error("openpty");
        fcntl(master_, F_SETFD, FD_CLOEXEC);
        fcntl(slave_, F_SETFD, FD_CLOEXEC);
        pid_ = fork();
        if (pid_ < 0)
            throw std::runtime_error("fork");
        if (pid_ == 0) {
            setsid();
            ioctl(slave_, TIOCSCTTY, 0);
            for (int fd = 0; fd < 3; fd++)
                dup2(slave_, fd);
            sigset_t none;
            sigemptyset(&none);
            sigprocmask(SIG_SETMASK, &none, nullptr);
            std::vector<char*> args;
            for (const std::string& a : argv)
                args.push_back(const_cast<char*>(a.c_str()));
            args.push_back(nullptr);
            execvp(args[0], args.data());
            _exit(127);
        }
    }
    ~PtyProgram()
    {
        if (pid_ > 0) {
            kill(pid_, SIGKILL);
            waitpid(pid_, nullptr, 0);
        }
        close(master_);
        close(slave_);
    }

    termios settings() const
    {
        termios t{};
        tcgetattr(slave_, &t);
        return t;
    }

    // Output since the last mark contains `text` (reads until it does).
    bool wait_for(const std::string& text, double timeout_s)
    {
        const double deadline = monotonic_s() + timeout_s;
        while (output_.find(text, mark_) == std::string::npos) {
            if (monotonic_s() > deadline)
                return false;
            pump(0.1);
        }
        return true;
    }
    void mark() { mark_ = output_.size(); }
    void send(char key) { ASSERT_EQ(write(master_, &key, 1), 1); }
    void signal(int sig) { kill(pid_, sig); }

    // Exit code, -1 on a signal or timeout.
    int wait(double timeout_s)
    {
        const double deadline = monotonic_s() + timeout_s;
        int status = 0;
        while (waitpid(pid_, &status, WNOHANG) == 0) {
            if (monotonic_s() > deadline)
                return -1;
            pump(0.05);
        }
        pid_ = -1;
        pump(0.05);
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
    const std::string& output() const { return output_; }

private:
    void pump(double timeout_s)
    {
        pollfd fd{master_, POLLIN, 0};
        if (poll(&fd, 1, int(timeout_s * 1000)) <= 0 || !(fd.revents & POLLIN))
            return;
        char buf[8192];
        const ssize_t n = read(master_, buf, sizeof buf);
        if (n > 0)
            output_.append(buf, size_t(n));
    }

    int master_ = -1, slave_ = -1;
    pid_t pid_ = -1;
    std::string output_;
    size_t mark_ = 0;
};

void expect_same_settings(const termios& before, const termios& after)
{
    EXPECT_EQ(after.c_lflag, before.c_lflag);
    EXPECT_EQ(after.c_iflag, before.c_iflag);
    EXPECT_EQ(after.c_oflag, before.c_oflag);
    EXPECT_EQ(after.c_cflag, before.c_cflag);
    for (int cc : {VMIN, VTIME, VSUSP, VINTR})
        EXPECT_EQ(after.c_cc[cc], before.c_cc[cc]) << "c_cc[" << cc << "]";
    EXPECT_TRUE(after.c_lflag & ICANON);
    EXPECT_TRUE(after.c_lflag & ECHO);
}

const std::vector<std::string> kTop{lockscope_bin(), "top", "--workload", "pipe", "--threads", "2", "-d",
                                    "120",           "-i",  "0.5"};

TEST(TopTerminal, RendersSwitchesSortAndGroupingQuitsAndRestoresTheTerminal)
{
    LOCKSCOPE_REQUIRE_BPF();
    PtyProgram top(kTop);
    const termios before = top.settings();  // openpty's defaults: canonical, echo

    ASSERT_TRUE(top.wait_for("sorted by wait", 90)) << top.output();
    ASSERT_TRUE(top.wait_for("pipe_inode_info.mutex", 30)) << top.output();
    EXPECT_NE(top.output().find("LOCK"), std::string::npos);
    EXPECT_NE(top.output().find("CPU idle"), std::string::npos);
    const termios during = top.settings();
    EXPECT_FALSE(during.c_lflag & ICANON);
    EXPECT_FALSE(during.c_lflag & ECHO);

    top.mark();
    top.send('c');
    ASSERT_TRUE(top.wait_for("sorted by contended", 10)) << top.output().substr(top.output().size() / 2);
    top.mark();
    top.send('g');
    ASSERT_TRUE(top.wait_for("by caller, sorted by contended", 10));
    ASSERT_TRUE(top.wait_for("CALLER", 10));
    top.mark();
    top.send('s');
    ASSERT_TRUE(top.wait_for("sorted by spinfail", 10));

    top.mark();
    top.send('q');
    EXPECT_EQ(top.wait(30), 0) << "top did not quit on q";
    // Cursor shown again and back on the main screen, after the last live
    // frame (the only ones with key help).
    const size_t leave = top.output().rfind("\033[?25h\033[?1049l");
    ASSERT_NE(leave, std::string::npos);
    EXPECT_GT(leave, top.output().rfind("keys: s sort"));
    expect_same_settings(before, top.settings());
}

TEST(TopTerminal, SigtermAndSighupRestoreTheTerminal)
{
    LOCKSCOPE_REQUIRE_BPF();
    for (int sig : {SIGTERM, SIGHUP}) {
        PtyProgram top(kTop);
        const termios before = top.settings();
        ASSERT_TRUE(top.wait_for("lockscope top:", 90)) << top.output();
        EXPECT_FALSE(top.settings().c_lflag & ICANON);
        top.signal(sig);
        EXPECT_EQ(top.wait(30), 0) << strsignal(sig);
        expect_same_settings(before, top.settings());
    }
}

TEST(TopPlain, PrintsOnePlainBlockPerIntervalWhenNotATerminal)
{
    LOCKSCOPE_REQUIRE_BPF();
    Finished f =
        run({lockscope_bin(), "top", "--workload", "pipe", "--threads", "2", "-d", "3", "-i", "1", "--by", "kind"});
    ASSERT_EQ(f.exit_code, 0) << f.err;
    EXPECT_EQ(f.out.find('\033'), std::string::npos) << "escape sequences in plain output";
    size_t blocks = 0;
    for (size_t at = f.out.find("lockscope top:"); at != std::string::npos; at = f.out.find("lockscope top:", at + 1))
        blocks++;
    EXPECT_GE(blocks, 3u) << f.out;
    EXPECT_NE(f.out.find("by kind, sorted by wait"), std::string::npos) << f.out;
    EXPECT_NE(f.out.find("\nmutex "), std::string::npos) << f.out;  // the pipe's mutex, grouped by kind
}

TEST(TopPlain, SaysWhatIsMissingWithoutRoot)
{
    if (geteuid() != 0)
        GTEST_SKIP() << "needs root to drop to another user";
    Process p = Process::start({lockscope_bin(), "top", "-d", "1"}, false, 65534);
    Finished f = p.wait(30);
    EXPECT_EQ(f.exit_code, 1) << f.err;
    EXPECT_NE(f.err.find("root"), std::string::npos) << f.err;
    EXPECT_EQ(f.out, "");
}

}  // namespace
}  // namespace lockscope::test
