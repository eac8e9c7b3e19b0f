#include "reflock/hooks.h"

#include <memory>

namespace reflock {
namespace detail {
std::atomic<const Hook*> g_hook{nullptr};
}  // namespace detail

void set_test_hook(Hook hook)
{
    // Keeps the previous hook alive: a thread that loaded it just before the
    // swap may still be calling it. Tests install a handful; the leak is tiny.
    static std::unique_ptr<Hook> current;
    static std::unique_ptr<Hook> previous;
    previous = std::move(current);
    current = hook ? std::make_unique<Hook>(std::move(hook)) : nullptr;
    detail::g_hook.store(current.get(), std::memory_order_release);
}

}  // namespace reflock
