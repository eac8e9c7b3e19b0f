#include "reflock/harness/harness_locks.h"

#include "reflock/mutex.h"
#include "reflock/mutex46.h"
#include "reflock/rwsem.h"

#include <pthread.h>
#include <shared_mutex>
#include <stdexcept>

namespace reflock::harness {
namespace {

// Any Lockable as a HarnessLock: a reader-writer lock (one with
// lock_shared()) takes each side as it is; an exclusive-only lock takes the
// shared side exclusively.
template <typename M>
class AdaptedLock final : public HarnessLock {
public:
    template <typename... Args>
    explicit AdaptedLock(Args... args) : m_(args...)
    {
    }
    void lock() override { m_.lock(); }
    void unlock() override { m_.unlock(); }
    void lock_shared() override
    {
        if constexpr (kShared)
            m_.lock_shared();
        else
            m_.lock();
    }
    void unlock_shared() override
    {
        if constexpr (kShared)
            m_.unlock_shared();
        else
            m_.unlock();
    }
    bool has_shared() const noexcept override { return kShared; }

private:
    static constexpr bool kShared = requires(M & m) { m.lock_shared(); };
    M m_;
};

// pthread_mutex_t as a Lockable, for AdaptedLock.
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

// pthread_rwlock_t as a SharedLockable, for AdaptedLock.
class PthreadRwlock {
public:
    PthreadRwlock() = default;
    PthreadRwlock(const PthreadRwlock&) = delete;
    ~PthreadRwlock() { pthread_rwlock_destroy(&l_); }
    void lock() { pthread_rwlock_wrlock(&l_); }
    void unlock() { pthread_rwlock_unlock(&l_); }
    void lock_shared() { pthread_rwlock_rdlock(&l_); }
    void unlock_shared() { pthread_rwlock_unlock(&l_); }

private:
    pthread_rwlock_t l_ = PTHREAD_RWLOCK_INITIALIZER;
};

}  // namespace

std::unique_ptr<HarnessLock> make_lock(const LockSpec& spec)
{
    switch (spec.kind) {
        case LockKind::Mutex:
            return std::make_unique<AdaptedLock<Mutex>>();
        case LockKind::Mutex46:
            return std::make_unique<AdaptedLock<Mutex46>>(spec.release_window_ns);
        case LockKind::RwSem:
            return std::make_unique<AdaptedLock<RwSem>>(spec.policy,
                                                        RwSemOptions{.release_window_ns = spec.release_window_ns});
        case LockKind::PthreadMutex:
            return std::make_unique<AdaptedLock<PthreadMutex>>();
        case LockKind::PthreadRwlock:
            return std::make_unique<AdaptedLock<PthreadRwlock>>();
        case LockKind::StdSharedMutex:
            return std::make_unique<AdaptedLock<std::shared_mutex>>();
    }
    throw std::invalid_argument("unknown lock kind");
}

}  // namespace reflock::harness
