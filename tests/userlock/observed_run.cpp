#include "observed_run.h"

#include <sys/syscall.h>

#include <chrono>
#include <cstdio>
#include <sstream>

#include "futex_observer_bpf.skel.h"

namespace lockscope::userlock_test {

bool read_locks(test::Program& program, std::map<std::string, LockRange>& locks, int timeout_ms)
{
    std::string text;
    while (program.line(text, timeout_ms) && text != "ready") {
        std::istringstream words(text);
        std::string tag, name;
        LockRange range;
        words >> tag >> name >> std::hex >> range.address >> std::dec >> range.bytes;
        if (tag == "lock") {
            locks[name] = range;
        }
    }
    return text == "ready" && locks.size() <= kObserved;
}

bool read_until_done(test::Program& program, std::map<std::string, long>& contended, int timeout_ms,
                     void (*between)(void*), void* arg)
{
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (std::chrono::steady_clock::now() < deadline) {
        if (between != nullptr) {
            between(arg);
        }
        std::string text;
        while (program.line(text, between != nullptr ? 0 : 50)) {
            std::istringstream words(text);
            std::string tag, name;
            long count = 0;
            words >> tag >> name >> count;
            if (tag == "contended") {
                contended[name] = count;
            }
            if (text == "done") {
                return true;
            }
        }
    }
    return false;
}

std::string disagreement(const std::string& lock, uint64_t recorded, uint64_t observed)
{
    std::printf("%-14s recorded %7llu  observed %7llu\n", lock.c_str(), static_cast<unsigned long long>(recorded),
                static_cast<unsigned long long>(observed));
    if (observed < 100) {
        return lock + ": " + std::to_string(observed) + " waits, too few for the comparison to mean anything";
    }
    const uint64_t diff = recorded > observed ? recorded - observed : observed - recorded;
    if (double(diff) > 0.02 * double(observed)) {
        return lock + ": recorded " + std::to_string(recorded) + ", observed " + std::to_string(observed);
    }
    return "";
}

FutexObserver::FutexObserver(pid_t tgid, const std::map<std::string, LockRange>& locks)
{
    skel_ = futex_observer_bpf::open();
    if (skel_ == nullptr) {
        failure_ = "cannot open the observer";
        return;
    }
    skel_->rodata->observed_tgid = static_cast<uint32_t>(tgid);
    skel_->rodata->observed_syscall = SYS_futex;
    if (futex_observer_bpf::load(skel_) != 0) {
        failure_ = "cannot load the observer";
        return;
    }
    for (const auto& [name, range] : locks) {
        if (names_.size() == kObserved) {
            failure_ = "more locks than the observer has ranges";
            return;
        }
        skel_->bss->range_start[names_.size()] = range.address;
        skel_->bss->range_bytes[names_.size()] = range.bytes;
        names_.push_back(name);
    }
    if (futex_observer_bpf::attach(skel_) != 0) {
        failure_ = "cannot attach the observer";
    }
}

FutexObserver::~FutexObserver()
{
    futex_observer_bpf::destroy(skel_);
}

std::map<std::string, uint64_t> FutexObserver::stop()
{
    std::map<std::string, uint64_t> waits;
    if (skel_ == nullptr || !failure_.empty()) {
        return waits;
    }
    futex_observer_bpf::detach(skel_);
    for (std::size_t i = 0; i < names_.size(); ++i) {
        waits[names_[i]] = skel_->bss->range_waits[i];
    }
    return waits;
}

std::map<std::string, ObservedTimes> FutexObserver::times() const
{
    std::map<std::string, ObservedTimes> out;
    if (skel_ == nullptr || !failure_.empty()) {
        return out;
    }
    for (std::size_t i = 0; i < names_.size(); ++i) {
        out[names_[i]] = {.wait_ns = skel_->bss->range_wait_ns[i],
                          .asleep_ns = skel_->bss->range_asleep_ns[i],
                          .runnable_ns = skel_->bss->range_runnable_ns[i],
                          .woken = skel_->bss->range_woken[i],
                          .raced_ns = skel_->bss->range_raced_ns[i]};
    }
    return out;
}

}  // namespace lockscope::userlock_test
