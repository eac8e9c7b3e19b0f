#include "reflock/spin_fail.h"

namespace reflock {

std::string_view to_string(SpinFail reason) noexcept
{
    switch (reason) {
        case SpinFail::OwnerOffCpu:
            return "owner-off-cpu";
        case SpinFail::OwnerNullCountBusy:
            return "owner-null-count-busy";
        case SpinFail::ReaderOwned:
            return "reader-owned";
        case SpinFail::Handoff:
            return "handoff";
        case SpinFail::BudgetExhausted:
            return "budget-exhausted";
        case SpinFail::NoOwner:
            return "no-owner";
        case SpinFail::NonSpinnable:
            return "non-spinnable";
        case SpinFail::OwnerChanged:
            return "owner-changed";
    }
    return "unknown";
}

}  // namespace reflock
