// A page fault held as long as a test likes, through userfaultfd: a thread
// that touches buffer() sleeps in handle_userfault, holding whatever locks
// its path took first, until release().
#pragma once

#include <cstddef>
#include <string>
#include <thread>
#include <vector>

namespace lockscope::test {

class HeldPageFault {
public:
    HeldPageFault();  // a page registered for missing faults; throws std::runtime_error
    ~HeldPageFault();
    HeldPageFault(const HeldPageFault&) = delete;
    HeldPageFault& operator=(const HeldPageFault&) = delete;

    void* buffer() const { return buffer_; }
    size_t size() const { return page_; }
    bool release();  // maps a zero page: the faulting thread goes on

private:
    void close_all();

    int uffd_ = -1;
    void* buffer_ = nullptr;
    size_t page_ = 0;
};

// @n threads, each writing a few bytes to @file through an fd of its own (a
// shared one would queue them on the file's f_pos_lock first): they queue on
// the inode's i_rwsem behind a thread held in a fault under it. Join them.
std::vector<std::thread> start_file_writers(const std::string& file, int n);

}  // namespace lockscope::test
