// The rwsem policies and the kernel code each one follows. Commit subjects
// are from torvalds/linux. A policy is named after the first release that
// behaved that way, or, where no release did, after the kernel a seed thread
// measured ("3.16-rc2", "5.3-rc-tip"), never after a release that behaved
// otherwise. collector/reflock/README.md has the table of release ranges and
// of what each policy leaves out.
#include "reflock/rwsem.h"

#include <array>
#include <stdexcept>

namespace reflock {
namespace {

struct PolicyInfo {
    Policy policy;
    std::string_view name;
    PolicyTraits traits;
};

//                                     xadd  spin  no-own new-w  nullbusy skipwake rdMark hoStop hoSpin rdSpin steal
//                                     rdOpt  direct
constexpr std::array kPolicies{
    // 3.15: rwsem-xadd without optimistic spinning; writers queue at once.
    PolicyInfo{Policy::V3_15,
               "3.15",
               {true, false, false, false, false, false, false, false, false, false, false, false, false}},
    // 3.16-rc1 .. rc4: "locking/rwsem: Support optimistic spinning"
    // (4fc828e24cd9): rwsem_can_spin_on_owner() starts with on_cpu = true, so
    // a writer spins on a reader-owned (owner NULL) rwsem until need_resched()
    // - the xfs_repair 5x regression, measured on 3.16-rc2. Fixed before the
    // 3.16 release, so no release behaved this way.
    PolicyInfo{Policy::V3_16_Rc2,
               "3.16-rc2",
               {true, true, true, true, false, false, false, false, false, false, false, false, false}},
    // 3.16: + "locking/rwsem: Allow conservative optimistic spinning when
    // readers have lock" (Jason Low): no owner -> do not spin.
    PolicyInfo{Policy::V3_16,
               "3.16",
               {true, true, false, true, false, false, false, false, false, false, false, false, false}},
    // 4.1 "locking/rwsem: Avoid deceiving lock spinners" and "Check for active
    // lock before bailing on spinning"; 4.2 "Reduce spinlock contention in
    // wakeup after up_read()/up_write()". As in 4.2 .. 4.7, named after 4.2,
    // the first release with all three (4.1.15 lacks the wake skip, 4.2.8 has
    // it); 4.7's i_mutex -> i_rwsem conversion exposed it: after the owner
    // leaves, rwsem_spin_on_owner() stops unless count is 0 or WAITING_BIAS.
    PolicyInfo{
        Policy::V4_2, "4.2", {true, true, false, false, true, true, false, false, false, false, false, false, false}},
    // 4.7 with Dave Hansen's hack (LKML, June 2016, "performance delta after
    // VFS i_mutex=>i_rwsem conversion"): that final count check removed.
    PolicyInfo{Policy::V4_7_Hacked,
               "4.7-hacked",
               {true, true, false, false, false, true, false, false, false, false, false, false, false}},
    // 4.8: "locking/rwsem: Add reader-owned state to the owner field"
    // (19c5d690e416), as it stood until v5.2: readers mark `owner`
    // READER_OWNED and leave the mark behind; a writer spins when the owner is
    // NULL (the count is no longer checked, so 4.7's regression is gone) and
    // stops on a reader mark, even a stale one. No handoff. The later
    // RWSEM_ANONYMOUSLY_OWNED bit (in 5.2, not yet in 4.10) and 5.2's reader
    // task in the owner word make the same spinning decisions.
    PolicyInfo{
        Policy::V4_8, "4.8", {true, true, true, false, false, true, true, false, false, false, false, false, false}},
    // The seed's "5.2-rc6 + tip's rwsem patches": Waiman Long's rework that
    // shipped in v5.3 ("locking/rwsem: Implement lock handoff to prevent lock
    // starvation" 4f23dbc1e657 and the count/owner rewrite; "Enable time-based
    // spinning on reader-owned rwsem" 7d43f1ce9dd0; "Enable readers spinning
    // on writer" cf69482d62d9 with "Adaptive disabling of reader optimistic
    // spinning" 5cfd92e12e13), before 91d2a812dfb9: a
    // pending HANDOFF stops a spinner watching a writer owner, and the
    // handoff writer sleeps.
    PolicyInfo{Policy::V5_3_RcTip,
               "5.3-rc-tip",
               {false, true, false, false, false, false, false, true, false, true, false, true, false}},
    // 5.4: + "locking/rwsem: Make handoff writer optimistically spin on owner"
    // (91d2a812dfb9): spinners ignore HANDOFF; the handoff writer spins on an
    // on-CPU owner instead of sleeping.
    PolicyInfo{
        Policy::V5_4, "5.4", {false, true, false, false, false, false, false, false, true, true, false, true, false}},
    // 5.19: + "Remove reader optimistic spinning" (617f3ef95177, 5.11),
    // "Enable reader optimistic lock stealing" (1a728dff855a, 5.11), "Make
    // handoff bit handling more consistent" (d257cc8cb8d5, 5.16), "Allow
    // slowpath writer to ignore handoff bit if not set by first waiter"
    // (6eebd5fb2083, 5.19); as in 6.0 .. 6.2.
    PolicyInfo{
        Policy::V5_19, "5.19", {false, true, false, false, false, false, false, false, true, true, true, false, false}},
    // 6.3: + "locking/rwsem: Enable direct rwsem lock handoff": rwsem_mark_wake()
    // gives a free lock with HANDOFF set to the first waiter, a writer, before
    // it runs (owner set, HANDOFF cleared, waiter dequeued); a reader setting
    // HANDOFF also stops spinners (rwsem_set_nonspinnable()).
    PolicyInfo{
        Policy::V6_3, "6.3", {false, true, false, false, false, false, false, false, true, true, true, false, true}},
};

const PolicyInfo& info(Policy policy) noexcept
{
    return kPolicies[static_cast<std::size_t>(policy)];
}

constexpr std::array kAllPolicies{Policy::V3_15, Policy::V3_16_Rc2,  Policy::V3_16, Policy::V4_2,  Policy::V4_7_Hacked,
                                  Policy::V4_8,  Policy::V5_3_RcTip, Policy::V5_4,  Policy::V5_19, Policy::V6_3};
static_assert(kAllPolicies.size() == kPolicies.size());

}  // namespace

std::string_view to_string(Policy policy) noexcept
{
    return info(policy).name;
}

std::span<const Policy> all_policies() noexcept
{
    return kAllPolicies;
}

PolicyTraits traits(Policy policy) noexcept
{
    return info(policy).traits;
}

std::string policy_names()
{
    std::string names;
    for (const auto& p : kPolicies) {
        if (!names.empty())
            names += ", ";
        names += p.name;
    }
    return names;
}

Policy parse_policy(std::string_view name)
{
    for (const auto& p : kPolicies)
        if (p.name == name)
            return p.policy;
    throw std::invalid_argument("unknown rwsem policy '" + std::string(name) + "' (valid: " + policy_names() + ")");
}

}  // namespace reflock
