#include "reflock/harness/harness_locks.h"

#include "reflock/mutex.h"
#include "reflock/mutex46.h"
#include "reflock/rwsem.h"

#include <pthread.h>
#include <shared_mutex>
#include <stdexcept>

namespace reflock::harness {
namespace {

// Any exclusive-only lock: shared acquisitions take it exclusively.
template <typename M>
class ExclusiveLock final : public HarnessLock {
public:
    template <typename... Args>
    explicit ExclusiveLock(Args... args) : m_(args...)
    {
    }
    void lock() override { m_.lock(); }
    void unlock() override { m_.unlock(); }
    void lock_shared() override { m_.lock(); }
    void unlock_shared() override { m_.unlock(); }
    bool has_shared() const noexcept override { return false; }

private:
    M m_;
};

class RwSemLock final : public HarnessLock {
public:
    RwSemLock(Policy policy, RwSemOptions options) : s_(policy, options) {}
    void lock() override { s_.lock(); }
    void unlock() override { s_.unlock(); }
    void lock_shared() override { s_.lock_shared(); }
    void unlock_shared() override { s_.unlock_shared(); }
    bool has_shared() const noexcept override { return true; }

private:
    RwSem s_;
};

// pthread_mutex_t as a Lockable, for ExclusiveLock.
class PthreadMutex {
public:
    PthreadMutex() = default;
    PthreadMutex(const PthreadMutex&) = delete;
    ~PthreadMutex() { pthread_mutex_destroy(&m_); }
    void lock() { pthread_mutex_lock(&m_); }
    void unlock() { pthread_mutex_unlock(&m_); }

private:
    pthread_mutex_t m_ = PTHREAD_MUTEX_INITIALIZER;
};

class PthreadRwlockLock final : public HarnessLock {
public:
    ~PthreadRwlockLock() override { pthread_rwlock_destroy(&l_); }
    void lock() override { pthread_rwlock_wrlock(&l_); }
    void unlock() override { pthread_rwlock_unlock(&l_); }
    void lock_shared() override { pthread_rwlock_rdlock(&l_); }
    void unlock_shared() override { pthread_rwlock_unlock(&l_); }
    bool has_shared() const noexcept override { return true; }

private:
    pthread_rwlock_t l_ = PTHREAD_RWLOCK_INITIALIZER;
};

class StdSharedMutexLock final : public HarnessLock {
public:
    void lock() override { m_.lock(); }
    void unlock() override { m_.unlock(); }
    void lock_shared() override { m_.lock_shared(); }
    void unlock_shared() override { m_.unlock_shared(); }
    bool has_shared() const noexcept override { return true; }

private:
    std::shared_mutex m_;
};

}  // namespace

std::unique_ptr<HarnessLock> make_lock(const LockSpec& spec)
{
    switch (spec.kind) {
        case LockKind::Mutex:
            return std::make_unique<ExclusiveLock<Mutex>>();
        case LockKind::Mutex46:
            return std::make_unique<ExclusiveLock<Mutex46>>(spec.release_window_ns);
        case LockKind::RwSem:
            return std::make_unique<RwSemLock>(spec.policy, RwSemOptions{.release_window_ns = spec.release_window_ns});
        case LockKind::PthreadMutex:
            return std::make_unique<ExclusiveLock<PthreadMutex>>();
        case LockKind::PthreadRwlock:
            return std::make_unique<PthreadRwlockLock>();
        case LockKind::StdSharedMutex:
            return std::make_unique<StdSharedMutexLock>();
    }
    throw std::invalid_argument("unknown lock kind");
}

}  // namespace reflock::harness
