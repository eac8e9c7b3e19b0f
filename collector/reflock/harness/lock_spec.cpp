#include "reflock/harness/lock_spec.h"

#include <stdexcept>

namespace reflock::harness {
namespace {

constexpr std::string_view kRwSemPrefix = "rwsem@";

struct NamedKind {
    std::string_view name;
    LockKind kind;
};
constexpr NamedKind kKinds[] = {{"mutex", LockKind::Mutex},
                                {"mutex@4.6", LockKind::Mutex46},
                                {"pthread_mutex", LockKind::PthreadMutex},
                                {"pthread_rwlock", LockKind::PthreadRwlock},
                                {"std_shared_mutex", LockKind::StdSharedMutex}};

}  // namespace

std::vector<std::string> every_lock_name()
{
    std::vector<std::string> names;
    for (const NamedKind& k : kKinds)
        names.emplace_back(k.name);
    for (Policy p : all_policies())
        names.push_back(std::string(kRwSemPrefix) + std::string(to_string(p)));
    return names;
}

std::string lock_names()
{
    return "mutex, mutex@4.6, rwsem@POLICY (POLICY: " + policy_names() +
           "), pthread_mutex, pthread_rwlock, std_shared_mutex";
}

LockSpec parse_lock(std::string_view text)
{
    LockSpec spec;
    if (text.starts_with(kRwSemPrefix)) {
        spec.kind = LockKind::RwSem;
        spec.policy = parse_policy(text.substr(kRwSemPrefix.size()));
        return spec;
    }
    for (const auto& k : kKinds)
        if (k.name == text) {
            spec.kind = k.kind;
            return spec;
        }
    throw std::invalid_argument("unknown lock '" + std::string(text) + "' (valid: " + lock_names() + ")");
}

std::string to_string(const LockSpec& lock)
{
    if (lock.kind == LockKind::RwSem)
        return std::string(kRwSemPrefix) + std::string(reflock::to_string(lock.policy));
    for (const auto& k : kKinds)
        if (k.kind == lock.kind)
            return std::string(k.name);
    return "?";
}

}  // namespace reflock::harness
