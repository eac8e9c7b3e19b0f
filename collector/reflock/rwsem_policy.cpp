// The rwsem policies and the kernel code each one follows. Commit subjects
// are from torvalds/linux; versions are the first release containing them.
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

//                                     xadd  spin  no-own new-w  nullbusy skipwake hoStop hoSpin rdSpin steal
constexpr std::array kPolicies{
    // 3.15: rwsem-xadd without optimistic spinning; writers queue at once.
    PolicyInfo{Policy::V3_15, "3.15", {true, false, false, false, false, false, false, false, false, false}},
    // 3.16-rc1: "locking/rwsem: Support optimistic spinning" (4fc828e24cd9):
    // rwsem_can_spin_on_owner() starts with on_cpu = true, so a writer spins
    // on a reader-owned (owner NULL) rwsem until need_resched() - the
    // xfs_repair 5x regression.
    PolicyInfo{Policy::V3_16, "3.16", {true, true, true, true, false, false, false, false, false, false}},
    // 3.16-rc5: "locking/rwsem: Allow conservative optimistic spinning when
    // readers have lock": no owner -> do not spin.
    PolicyInfo{Policy::V3_16_Fix, "3.16-fix", {true, true, false, true, false, false, false, false, false, false}},
    // 4.1 "locking/rwsem: Avoid deceiving lock spinners" and "Check for active
    // lock before bailing on spinning"; 4.2 "Reduce spinlock contention in
    // wakeup after up_read()/up_write()". As shipped in 4.7, where the
    // i_mutex -> i_rwsem conversion exposed it: after the owner leaves,
    // rwsem_spin_on_owner() stops unless count is 0 or WAITING_BIAS.
    PolicyInfo{Policy::V4_7, "4.7", {true, true, false, false, true, true, false, false, false, false}},
    // 4.7 with Dave Hansen's hack (LKML, June 2016, "performance delta after
    // VFS i_mutex=>i_rwsem conversion"): that final count check removed.
    PolicyInfo{Policy::V4_7_Hacked, "4.7-hacked", {true, true, false, false, false, true, false, false, false, false}},
    // Waiman Long's rework merged for v5.3 ("locking/rwsem: Implement lock
    // handoff to prevent lock starvation" 4f23dbc1e657 and the count/owner
    // rewrite), before 91d2a812dfb9: a pending HANDOFF stops spinners and the
    // handoff writer sleeps. Reader-owned: no spinning (the time-based
    // reader-owned spin is kept for "6.x" here).
    PolicyInfo{Policy::V5_2, "5.2", {false, true, false, false, false, false, true, false, false, false}},
    // + "locking/rwsem: Make handoff writer optimistically spin on owner"
    // (91d2a812dfb9, v5.3): spinners ignore HANDOFF; the handoff writer spins
    // on an on-CPU owner instead of sleeping.
    PolicyInfo{Policy::V5_3, "5.3", {false, true, false, false, false, false, false, true, false, false}},
    // 6.x: + "Enable time-based spinning on reader-owned rwsem" (7d43f1ce9dd0)
    // with its NONSPINNABLE marking, "Remove reader optimistic spinning"
    // (617f3ef95177, 5.11), "Enable reader optimistic lock stealing"
    // (1a728dff855a, 5.11), "Make handoff bit handling more consistent"
    // (d257cc8cb8d5, 5.19).
    PolicyInfo{Policy::V6_X, "6.x", {false, true, false, false, false, false, false, true, true, true}},
};

const PolicyInfo& info(Policy policy) noexcept { return kPolicies[static_cast<std::size_t>(policy)]; }

constexpr std::array kAllPolicies{Policy::V3_15, Policy::V3_16, Policy::V3_16_Fix, Policy::V4_7,
                                  Policy::V4_7_Hacked, Policy::V5_2, Policy::V5_3, Policy::V6_X};
static_assert(kAllPolicies.size() == kPolicies.size());

} // namespace

std::string_view to_string(Policy policy) noexcept { return info(policy).name; }

std::span<const Policy> all_policies() noexcept { return kAllPolicies; }

PolicyTraits traits(Policy policy) noexcept { return info(policy).traits; }

std::string policy_names() {
  std::string names;
  for (const auto& p : kPolicies) {
    if (!names.empty()) names += ", ";
    names += p.name;
  }
  return names;
}

Policy parse_policy(std::string_view name) {
  for (const auto& p : kPolicies)
    if (p.name == name) return p.policy;
  throw std::invalid_argument("unknown rwsem policy '" + std::string(name) + "' (valid: " + policy_names() + ")");
}

} // namespace reflock
