// record when the machine works against it: a full disk, a second
// recorder, a reader, planted symbolic links, unusable output paths; and
// read-only commands as an ordinary user. What is checked is what the user
// would see: the exit status, the sentence, the file left behind, and that
// no BPF program of the recorder outlives it.
#include <bpf/bpf.h>
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "core/analysis/report.h"
#include "core/storage/session_store.h"
#include "root_helpers.h"
#include "subprocess.h"

namespace fs = std::filesystem;

namespace lockscope {
namespace {

constexpr uid_t kNobody = 65534;

// The BPF programs a running process holds open, by kernel program id
// (from /proc/PID/fdinfo): other recorders on the machine do not count.
std::set<uint32_t> bpf_programs_of(pid_t pid)
{
    std::set<uint32_t> ids;
    const std::string fd_dir = "/proc/" + std::to_string(pid) + "/fd";
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(fd_dir, ec)) {
        std::error_code link_ec;
        if (fs::read_symlink(entry.path(), link_ec).string() != "anon_inode:bpf-prog")
            continue;
        std::ifstream info("/proc/" + std::to_string(pid) + "/fdinfo/" + entry.path().filename().string());
        for (std::string line; std::getline(info, line);)
            if (line.rfind("prog_id:", 0) == 0)
                ids.insert(uint32_t(std::stoul(line.substr(8))));
    }
    return ids;
}

// True once none of `ids` is loaded; the kernel frees a program shortly
// after its last reference is gone.
bool programs_gone(const std::set<uint32_t>& ids)
{
    for (int attempt = 0; attempt < 50; attempt++) {
        bool any = false;
        for (uint32_t id : ids) {
            int fd = bpf_prog_get_fd_by_id(id);
            if (fd >= 0) {
                any = true;
                close(fd);
            }
        }
        if (!any)
            return true;
        usleep(100'000);
    }
    return false;
}

// A small tmpfs, mounted for one test and unmounted with it.
class SmallFilesystem {
public:
    explicit SmallFilesystem(const std::string& options)
    {
        dir_ = test::temp_path("mnt");
        fs::create_directory(dir_);
        mounted_ = ::mount("tmpfs", dir_.c_str(), "tmpfs", 0, options.c_str()) == 0;
        error_ = mounted_ ? "" : std::strerror(errno);
    }
    ~SmallFilesystem()
    {
        if (mounted_)
            ::umount2(dir_.c_str(), MNT_DETACH);
        std::error_code ec;
        fs::remove(dir_, ec);
    }
    SmallFilesystem(const SmallFilesystem&) = delete;
    SmallFilesystem& operator=(const SmallFilesystem&) = delete;
    bool mounted() const { return mounted_; }
    const std::string& error() const { return error_; }
    std::string file(const std::string& name) const { return dir_ + "/" + name; }

private:
    std::string dir_;
    std::string error_;
    bool mounted_ = false;
};

// Writes until the file system refuses; returns the errno that stopped it.
int fill(const std::string& path)
{
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return errno;
    std::vector<char> block(64 * 1024, 'x');
    int err = 0;
    for (;;) {
        ssize_t n = ::write(fd, block.data(), block.size());
        if (n < 0) {
            err = errno;
            break;
        }
        if (n == 0)
            break;
    }
    ::close(fd);
    return err;
}

std::string read_all(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_all(const std::string& path, const std::string& text)
{
    std::ofstream(path) << text;
}

// Error lines `record` printed: each failure must be one sentence.
size_t error_lines(const std::string& err)
{
    size_t n = 0;
    for (size_t at = 0; (at = err.find("lockscope record: ", at)) != std::string::npos; at++)
        n++;
    return n;
}

test::Finished lockscope(std::vector<std::string> args, uid_t uid = 0)
{
    args.insert(args.begin(), test::lockscope_bin());
    return test::Process::start(args, false, uid).wait(120);
}

test::Process start_recording(const std::string& out, const std::string& seconds = "30",
                              const std::string& interval = "0.2")
{
    return test::Process::start(
        {test::lockscope_bin(), "record", "--workload", "pipe", "-t", "2", "-d", seconds, "-i", interval, "-o", out});
}

size_t intervals_in_report(const test::Finished& f)
{
    try {
        return nlohmann::json::parse(f.out).at("totals").at("intervals").get<size_t>();
    } catch (const std::exception& e) {
        ADD_FAILURE() << "report --format json printed no totals.intervals: " << e.what() << "\n" << f.out;
        return 0;
    }
}

TEST(RecordDiskFull, StopsWithOneSentenceAndKeepsEveryCommittedInterval)
{
    LOCKSCOPE_REQUIRE_BPF();
    SmallFilesystem disk("size=4m,mode=0755");
    if (!disk.mounted())
        GTEST_SKIP() << "cannot mount a tmpfs: " << disk.error();
    const std::string out = disk.file("full.lockscope");
    test::Process rec = start_recording(out, "120", "0.1");
    ASSERT_TRUE(rec.wait_for_stderr("lockscope: recording", 30));
    usleep(1'000'000);
    const std::set<uint32_t> programs = bpf_programs_of(rec.pid());
    EXPECT_FALSE(programs.empty()) << "the recorder holds no BPF program: the check below would prove nothing";
    const size_t committed = load_session(out).intervals.size();
    EXPECT_GE(committed, 3u);

    EXPECT_EQ(fill(disk.file("filler")), ENOSPC);
    test::Finished f = rec.wait(60);
    EXPECT_EQ(f.exit_code, 1) << f.err;
    EXPECT_NE(f.err.find("No space left on device"), std::string::npos) << f.err;
    EXPECT_NE(f.err.find(out), std::string::npos) << f.err;
    EXPECT_EQ(error_lines(f.err), 1u) << f.err;
    EXPECT_NE(f.err.find("it keeps the"), std::string::npos) << "how much the file holds:\n" << f.err;
    EXPECT_TRUE(programs_gone(programs)) << "BPF programs of the recorder stayed loaded";

    // Readable as it is, on the still-full disk, with every interval that
    // was committed before the disk filled.
    test::Finished report = lockscope({"report", out, "--format", "json"});
    ASSERT_EQ(report.exit_code, 0) << report.err;
    EXPECT_GE(intervals_in_report(report), committed);
    EXPECT_GT(build_report(load_session(out), {}).totals.counters.contentions, 0u);
}

TEST(RecordTwice, TwoRecordersAtOnceBothRecord)
{
    LOCKSCOPE_REQUIRE_BPF();
    const std::string a = test::temp_path("first.lockscope"), b = test::temp_path("second.lockscope");
    test::Process first = start_recording(a, "2");
    test::Process second = start_recording(b, "2");
    for (auto* rec : {&first, &second}) {
        test::Finished f = rec->wait(60);
        EXPECT_EQ(f.exit_code, 0) << f.err;
    }
    for (const std::string& path : {a, b}) {
        Session s = load_session(path);
        ASSERT_EQ(s.runs.size(), 1u) << path;
        EXPECT_EQ(s.runs[0].status, "complete") << path;
        EXPECT_GT(build_report(s, {}).totals.counters.contentions, 0u) << path;
    }
}

TEST(RecordTwice, ASecondRecorderNeverWritesIntoAFileBeingRecorded)
{
    LOCKSCOPE_REQUIRE_BPF();
    const std::string out = test::temp_path("busy.lockscope");
    test::Process first = start_recording(out, "4");
    ASSERT_TRUE(first.wait_for_stderr("lockscope: recording", 30));
    usleep(600'000);

    test::Finished plain = lockscope({"record", "-d", "1", "-o", out});
    EXPECT_EQ(plain.exit_code, 1) << plain.err;
    EXPECT_NE(plain.err.find("choose another name"), std::string::npos) << plain.err;
    test::Finished forced = lockscope({"record", "-d", "1", "--force", "-o", out});
    EXPECT_EQ(forced.exit_code, 1) << forced.err;
    EXPECT_NE(forced.err.find("another lockscope is recording into it"), std::string::npos) << forced.err;

    test::Finished f = first.wait(60);
    EXPECT_EQ(f.exit_code, 0) << f.err;
    Session s = load_session(out);
    ASSERT_EQ(s.runs.size(), 1u);
    EXPECT_EQ(s.runs[0].status, "complete");
    EXPECT_EQ(s.meta_value("workload"), "pipe");
    EXPECT_GE(s.intervals.size(), 15u) << "4 s at 0.2 s per interval";
}

TEST(RecordReader, ReportDuringRecordingShowsTheCompletedIntervals)
{
    LOCKSCOPE_REQUIRE_BPF();
    const std::string out = test::temp_path("live.lockscope");
    test::Process rec = start_recording(out, "4");
    ASSERT_TRUE(rec.wait_for_stderr("lockscope: recording", 30));
    usleep(1'500'000);
    test::Finished live = lockscope({"report", out, "--format", "json"});
    ASSERT_EQ(live.exit_code, 0) << live.err;
    const size_t live_intervals = intervals_in_report(live);
    EXPECT_GE(live_intervals, 3u);
    EXPECT_TRUE(peek_session(out).recording);

    test::Finished f = rec.wait(60);
    EXPECT_EQ(f.exit_code, 0) << f.err;
    EXPECT_GT(load_session(out).intervals.size(), live_intervals);
    EXPECT_FALSE(peek_session(out).recording);
}

TEST(RecordOutput, NeverWritesThroughASymlinkAtTheOutputPath)
{
    LOCKSCOPE_REQUIRE_BPF();
    const std::string victim = test::temp_path("victim");
    write_all(victim, "precious\n");
    const std::string link = test::temp_path("link.lockscope");
    ASSERT_EQ(symlink(victim.c_str(), link.c_str()), 0);
    for (bool force : {false, true}) {
        std::vector<std::string> args{"record", "-d", "1", "-o", link};
        if (force)
            args.push_back("--force");
        test::Finished f = lockscope(args);
        EXPECT_EQ(f.exit_code, 1) << f.err;
        EXPECT_NE(f.err.find("symbolic link"), std::string::npos) << f.err;
        EXPECT_EQ(read_all(victim), "precious\n");
        EXPECT_TRUE(fs::is_symlink(link));
    }
    // A dangling link must not create its target either.
    const std::string target = test::temp_path("would-be-created");
    const std::string dangling = test::temp_path("dangling.lockscope");
    ASSERT_EQ(symlink(target.c_str(), dangling.c_str()), 0);
    test::Finished f = lockscope({"record", "-d", "1", "-o", dangling});
    EXPECT_EQ(f.exit_code, 1) << f.err;
    EXPECT_FALSE(fs::exists(target));
}

TEST(RecordOutput, SymlinksPlantedAtTheSidecarPathsAreNotFollowed)
{
    LOCKSCOPE_REQUIRE_BPF();
    const std::string out = test::temp_path("sidecars.lockscope");
    std::vector<std::string> victims;
    for (const char* suffix : {"-wal", "-shm", "-journal"}) {
        victims.push_back(test::temp_path(std::string("victim") + suffix));
        write_all(victims.back(), "precious\n");
        ASSERT_EQ(symlink(victims.back().c_str(), (out + suffix).c_str()), 0);
    }
    test::Finished f = lockscope({"record", "-d", "1", "-o", out});
    EXPECT_EQ(f.exit_code, 0) << f.err;
    for (const std::string& v : victims)
        EXPECT_EQ(read_all(v), "precious\n") << v;
    EXPECT_GE(load_session(out).intervals.size(), 1u);
}

TEST(RecordOutput, DirectoryOrReadOnlyOutputIsOneSentenceBeforeAnythingIsAttached)
{
    LOCKSCOPE_REQUIRE_BPF();
    const std::string dir = test::temp_path("a-directory");
    fs::create_directory(dir);
    test::Finished f = lockscope({"record", "-d", "1", "-o", dir});
    EXPECT_EQ(f.exit_code, 1) << f.err;
    EXPECT_NE(f.err.find("'" + dir + "'"), std::string::npos) << f.err;
    EXPECT_EQ(f.err.find("lockscope: recording"), std::string::npos) << "failed only after attaching:\n" << f.err;
    EXPECT_EQ(error_lines(f.err), 1u) << f.err;

    SmallFilesystem readonly("size=1m,mode=0755");
    if (!readonly.mounted())
        GTEST_SKIP() << "cannot mount a tmpfs: " << readonly.error();
    const std::string ro_out = readonly.file("x.lockscope");
    // Remount read-only: root ignores permission bits, not a read-only mount.
    ASSERT_EQ(::mount(nullptr, fs::path(ro_out).parent_path().c_str(), nullptr, MS_REMOUNT | MS_RDONLY, nullptr), 0)
        << std::strerror(errno);
    f = lockscope({"record", "-d", "1", "-o", ro_out});
    EXPECT_EQ(f.exit_code, 1) << f.err;
    EXPECT_NE(f.err.find("Read-only file system"), std::string::npos) << f.err;
    EXPECT_EQ(f.err.find("lockscope: recording"), std::string::npos) << f.err;
    EXPECT_FALSE(fs::exists(ro_out));
}

TEST(LeastPrivilege, ReadOnlyCommandsWorkAsAnOrdinaryUser)
{
    LOCKSCOPE_REQUIRE_BPF();
    const std::string a = test::temp_path("mine-a.lockscope"), b = test::temp_path("mine-b.lockscope");
    for (const std::string& out : {a, b}) {
        test::Finished rec = lockscope({"record", "--workload", "pipe", "-t", "2", "-d", "1", "-o", out});
        ASSERT_EQ(rec.exit_code, 0) << rec.err;
        struct stat st {};
        ASSERT_EQ(stat(out.c_str(), &st), 0);
        ASSERT_EQ(st.st_uid, 0u);
        ASSERT_EQ(st.st_mode & 0777, 0644u);
    }
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"report", a},
          std::vector<std::string>{"report", a, "--format", "json", "--by", "task"},
          std::vector<std::string>{"report", a, "--format", "csv", "--by", "caller"},
          std::vector<std::string>{"diff", a, b}, std::vector<std::string>{"diff", a, b, "--format", "json"}}) {
        test::Finished f = lockscope(args, kNobody);
        EXPECT_EQ(f.exit_code, 0) << args[0] << " " << args.back() << ": " << f.err;
        EXPECT_FALSE(f.out.empty());
    }
    test::Finished f = lockscope({"report", a}, kNobody);
    EXPECT_NE(f.out.find("pipe_inode_info.mutex"), std::string::npos) << f.out;
}

TEST(LeastPrivilege, RecordWithOneOfTwoCapabilitiesNamesTheMissingOne)
{
    LOCKSCOPE_REQUIRE_BPF();
    const std::string out = test::temp_path("halfcap.lockscope");
    // nobody with CAP_BPF but without CAP_PERFMON.
    test::Finished f = test::run({"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=+bpf",
                                  "--ambient-caps=+bpf", test::lockscope_bin(), "record", "-d", "1", "-o", out},
                                 60);
    if (f.exit_code == 127 || f.err.find("setpriv:") != std::string::npos)
        GTEST_SKIP() << "setpriv cannot grant CAP_BPF here: " << f.err;
    EXPECT_EQ(f.exit_code, 1) << f.err;
    EXPECT_NE(f.err.find("CAP_BPF yes"), std::string::npos) << f.err;
    EXPECT_NE(f.err.find("CAP_PERFMON missing"), std::string::npos) << f.err;
    EXPECT_EQ(error_lines(f.err), 1u) << f.err;
    EXPECT_FALSE(fs::exists(out)) << "the privilege check must come before the file is created";
}

}  // namespace
}  // namespace lockscope
