// reflock's rwsem policy names as they appear in bench sessions: run labels
// ("rwsem@5.4 t=2 #1"), lock names ("rwsem@5.4") and bench.locks. The names
// were corrected to name the first kernel release that behaved that way:
// label version 2 (3.16, 5.x), then 3 (4.7 -> 4.2, once release trees were
// compared), stored as bench.policy_labels. Sessions written before carry
// the old names; they are renamed when such a session is opened, so old and
// new sessions diff against each other by the same labels. The table lives
// here, in core, because the GUI opens sessions without reflock.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "core/model.h"

namespace lockscope {

inline constexpr const char* kPolicyLabelsKey = "bench.policy_labels";
inline constexpr const char* kPolicyLabelsVersion = "3";
// Set on a session whose labels were renamed on opening (value: the renames).
inline constexpr const char* kPolicyLabelsRenamedKey = "bench.policy_labels_renamed";

struct PolicyRename {
    std::string_view old_name, new_name;
    int version;  // the label version that renamed it: applies to sessions older than that
};
// 3.16 -> 3.16-rc2, 3.16-fix -> 3.16, 5.2 -> 5.3-rc-tip, 5.3 -> 5.4, 6.x -> 5.19
// (version 2); 4.7 -> 4.2 (version 3).
std::span<const PolicyRename> policy_renames();
// "3.16 -> 3.16-rc2, 3.16-fix -> 3.16, ...": the renames a session of label
// version `from` (1: none recorded) goes through.
std::string policy_renames_text(int from = 1);

// Every "rwsem@OLD" in `text` with OLD's new name, for a session of label
// version `from` (one pass: 3.16-fix becomes 3.16, not 3.16-rc2).
std::string rename_old_policies(std::string_view text, int from = 1);

// A bench session of an older label version (none recorded: version 1): its
// labels, lock names and bench.locks renamed, kPolicyLabelsRenamedKey set.
// Other sessions unchanged.
void upgrade_policy_labels(Session& session);

// A lock the user named on the command line ("rwsem@5.3"): its current name,
// and in `note` what changed when the name is an old one (empty otherwise).
// "rwsem@3.16" keeps its current meaning (the 3.16 release) with a note,
// since it meant 3.16-rc2 before.
std::string current_lock_name(std::string_view lock, std::string& note);

}  // namespace lockscope
