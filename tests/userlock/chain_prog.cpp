// The program userlock_chain_test records: a user lock whose owner waits
// for a kernel lock. Three threads, one round at a time:
//   C writes to a file from a buffer whose page fault userfaultfd holds, so
//     C sleeps in the fault holding the file's i_rwsem;
//   B takes g_chain_lock and writes to the same file, so it waits for the
//     i_rwsem while holding the mutex;
//   A then waits for g_chain_lock.
// The main thread lets each step begin only when the one before is in
// place (the fault's event; /proc says B sleeps in pwrite() and A in futex()),
// then ends the round by resolving the fault. So every round has A asleep
// on the mutex while B waits for the kernel lock C holds, and the program's
// own counters say how many rounds /proc confirmed that. After each round
// comes a control round: B holds the mutex asleep in nanosleep (in the
// kernel, but waiting for no lock) while A waits for it.
//
// argv: FILE ROUNDS. Prints "tids A B C", "file INODE" and, after the rounds,
// "rounds N confirmed M contended K control_confirmed P control_contended L"
// and "done"; exits
// when stdin closes.
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>

pthread_mutex_t g_chain_lock = PTHREAD_MUTEX_INITIALIZER;

namespace {

std::atomic<int> c_go{-1}, b_go{-1}, a_go{-1};
std::atomic<int> b_locked{-1};         // B holds g_chain_lock in this step
std::atomic<int> control_release{-1};  // B may let go of the mutex in this control step
std::atomic<int> done_a{-1}, done_b{-1}, done_c{-1};
std::atomic<pid_t> tid_a{0}, tid_b{0}, tid_c{0};
// A's lock attempts that found the mutex taken: in rounds, in control rounds.
std::atomic<long> contended[2] = {0, 0};
int file_fd = -1;
char* fault_pages = nullptr;
long page_size = 0;

[[noreturn]] void die(const char* what)
{
    std::fprintf(stderr, "chain_prog: %s: %s\n", what, std::strerror(errno));
    std::exit(1);
}

void await(const std::atomic<int>& flag, int step)
{
    while (flag.load() != step) {
        usleep(200);
    }
}

// The state letter of /proc/self/task/TID/stat and the syscall it is in
// (the first field of /proc/self/task/TID/syscall; -1 when running).
bool asleep_in(pid_t tid, char state, long syscall_nr)
{
    const std::string dir = "/proc/self/task/" + std::to_string(tid);
    std::ifstream stat(dir + "/stat");
    std::string line;
    std::getline(stat, line);
    const auto paren = line.rfind(')');
    if (paren == std::string::npos || paren + 2 >= line.size() || line[paren + 2] != state) {
        return false;
    }
    std::ifstream sys(dir + "/syscall");
    long nr = -1;
    return (sys >> nr) && nr == syscall_nr;
}

// Polls until the thread sleeps in that state and syscall, for at most 10 s.
bool until_asleep_in(pid_t tid, char state, long syscall_nr)
{
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!asleep_in(tid, state, syscall_nr)) {
        if (std::chrono::steady_clock::now() > deadline) {
            return false;
        }
        usleep(500);
    }
    return true;
}

// Steps alternate: even ones are rounds (round = step / 2), odd ones control rounds.
bool control(int step)
{
    return step % 2 == 1;
}

__attribute__((noinline)) void hold_inode_lock(int step)
{
    if (control(step)) {
        return;
    }
    const int round = step / 2;
    // i_rwsem is taken before the copy from the buffer faults. pwrite, not
    // write: write() on a file shared by threads takes the file's f_pos_lock
    // first, and B would wait for that mutex instead.
    if (pwrite(file_fd, fault_pages + round * page_size, 64, 0) != 64) {
        die("write from the held page");
    }
}

__attribute__((noinline)) void write_under_mutex(int step)
{
    pthread_mutex_lock(&g_chain_lock);
    b_locked.store(step);
    if (control(step)) {
        while (control_release.load() != step) {
            usleep(200);
        }
        pthread_mutex_unlock(&g_chain_lock);
        return;
    }
    const char byte = 'b';
    if (pwrite(file_fd, &byte, 1, 64) != 1) {  // waits for the i_rwsem C holds
        die("write under the mutex");
    }
    pthread_mutex_unlock(&g_chain_lock);
}

__attribute__((noinline)) void wait_for_mutex(int step)
{
    if (pthread_mutex_trylock(&g_chain_lock) != 0) {
        contended[step % 2].fetch_add(1);
        pthread_mutex_lock(&g_chain_lock);
    }
    pthread_mutex_unlock(&g_chain_lock);
}

void thread_loop(std::atomic<pid_t>& tid, const std::atomic<int>& go, std::atomic<int>& done, int steps,
                 void (*run)(int))
{
    tid.store(static_cast<pid_t>(syscall(SYS_gettid)));
    for (int step = 0; step < steps; ++step) {
        await(go, step);
        run(step);
        done.store(step);
    }
}

int open_userfaultfd(int rounds)
{
    const int uffd = static_cast<int>(syscall(SYS_userfaultfd, O_CLOEXEC));
    if (uffd < 0) {
        die("userfaultfd");
    }
    uffdio_api api{.api = UFFD_API, .features = 0, .ioctls = 0};
    if (ioctl(uffd, UFFDIO_API, &api) != 0) {
        die("UFFDIO_API");
    }
    const size_t bytes = static_cast<size_t>(rounds) * static_cast<size_t>(page_size);
    void* pages = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (pages == MAP_FAILED) {
        die("mmap");
    }
    fault_pages = static_cast<char*>(pages);
    uffdio_register reg{};
    reg.range = {reinterpret_cast<uint64_t>(pages), bytes};
    reg.mode = UFFDIO_REGISTER_MODE_MISSING;
    if (ioctl(uffd, UFFDIO_REGISTER, &reg) != 0) {
        die("UFFDIO_REGISTER");
    }
    return uffd;
}

void await_all(int step)
{
    await(done_a, step);
    await(done_b, step);
    await(done_c, step);
}

// A control round: A waits while B, holding the mutex, sleeps in no lock;
// whether /proc confirmed A asleep on the mutex.
bool run_control(int step)
{
    c_go.store(step);
    b_go.store(step);
    await(b_locked, step);
    a_go.store(step);
    const bool confirmed = until_asleep_in(tid_a.load(), 'S', SYS_futex);
    control_release.store(step);
    await_all(step);
    return confirmed;
}

// One round; whether /proc confirmed A asleep on the mutex while B waited in pwrite().
bool run_round(int uffd, int step)
{
    c_go.store(step);
    uffd_msg msg{};
    if (read(uffd, &msg, sizeof(msg)) != sizeof(msg) || msg.event != UFFD_EVENT_PAGEFAULT) {
        die("read the page fault");
    }
    b_go.store(step);
    await(b_locked, step);
    bool confirmed = until_asleep_in(tid_b.load(), 'D', SYS_pwrite64);
    a_go.store(step);
    confirmed = until_asleep_in(tid_a.load(), 'S', SYS_futex) && confirmed;
    confirmed = confirmed && asleep_in(tid_b.load(), 'D', SYS_pwrite64);
    uffdio_zeropage zero{};
    zero.range = {msg.arg.pagefault.address & ~static_cast<uint64_t>(page_size - 1), static_cast<uint64_t>(page_size)};
    if (ioctl(uffd, UFFDIO_ZEROPAGE, &zero) != 0) {
        die("UFFDIO_ZEROPAGE");
    }
    await_all(step);
    return confirmed;
}

}  // namespace

int main(int argc, char** argv)
{
    if (argc != 3 || std::atoi(argv[2]) <= 0) {
        std::fprintf(stderr, "usage: chain_prog FILE ROUNDS\n");
        return 2;
    }
    const int rounds = std::atoi(argv[2]);
    page_size = sysconf(_SC_PAGESIZE);
    file_fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (file_fd < 0) {
        die(argv[1]);
    }
    struct stat st {};
    if (fstat(file_fd, &st) != 0) {
        die("fstat");
    }
    const int uffd = open_userfaultfd(rounds);

    const int steps = 2 * rounds;
    std::thread c(thread_loop, std::ref(tid_c), std::cref(c_go), std::ref(done_c), steps, hold_inode_lock);
    std::thread b(thread_loop, std::ref(tid_b), std::cref(b_go), std::ref(done_b), steps, write_under_mutex);
    std::thread a(thread_loop, std::ref(tid_a), std::cref(a_go), std::ref(done_a), steps, wait_for_mutex);
    while (tid_a.load() == 0 || tid_b.load() == 0 || tid_c.load() == 0) {
        usleep(1000);
    }
    std::cout << "tids " << tid_a.load() << ' ' << tid_b.load() << ' ' << tid_c.load() << "\n"
              << "file " << st.st_ino << "\nready" << std::endl;
    std::string line;
    std::getline(std::cin, line);

    int confirmed = 0;
    int control_confirmed = 0;
    for (int step = 0; step < steps; ++step) {
        if (control(step)) {
            control_confirmed += run_control(step) ? 1 : 0;
        } else {
            confirmed += run_round(uffd, step) ? 1 : 0;
        }
    }
    a.join();
    b.join();
    c.join();
    std::cout << "rounds " << rounds << " confirmed " << confirmed << " contended " << contended[0].load()
              << " control_confirmed " << control_confirmed << " control_contended " << contended[1].load() << "\ndone"
              << std::endl;
    while (std::getline(std::cin, line)) {
    }
    return 0;
}
