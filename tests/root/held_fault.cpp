#include "held_fault.h"

#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

namespace lockscope::test {

HeldPageFault::HeldPageFault() : page_(size_t(sysconf(_SC_PAGESIZE)))
{
    auto fail = [&](const char* what) {
        const std::string why = std::string("userfaultfd: ") + what + ": " + strerror(errno);
        close_all();
        throw std::runtime_error(why);
    };
    uffd_ = int(syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK));
    if (uffd_ < 0)
        fail("open");
    uffdio_api api{.api = UFFD_API, .features = 0, .ioctls = 0};
    if (ioctl(uffd_, UFFDIO_API, &api) != 0)
        fail("UFFDIO_API");
    buffer_ = mmap(nullptr, page_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (buffer_ == MAP_FAILED) {
        buffer_ = nullptr;
        fail("mmap");
    }
    uffdio_register reg{};
    reg.range = {uint64_t(uintptr_t(buffer_)), page_};
    reg.mode = UFFDIO_REGISTER_MODE_MISSING;
    if (ioctl(uffd_, UFFDIO_REGISTER, &reg) != 0)
        fail("UFFDIO_REGISTER");
}

HeldPageFault::~HeldPageFault()
{
    close_all();
}

void HeldPageFault::close_all()
{
    if (uffd_ >= 0)
        close(uffd_);
    if (buffer_)
        munmap(buffer_, page_);
    uffd_ = -1;
    buffer_ = nullptr;
}

bool HeldPageFault::release()
{
    uffdio_zeropage zero{};
    zero.range = {uint64_t(uintptr_t(buffer_)), page_};
    return ioctl(uffd_, UFFDIO_ZEROPAGE, &zero) == 0;
}

std::vector<std::thread> start_file_writers(const std::string& file, int n)
{
    std::vector<std::thread> writers;
    for (int i = 0; i < n; i++)
        writers.emplace_back([file] {
            const char bytes[16] = {};
            const int own = open(file.c_str(), O_WRONLY | O_CLOEXEC);
            (void)!write(own, bytes, sizeof bytes);
            close(own);
        });
    return writers;
}

}  // namespace lockscope::test
