// Internal to the report's renderings: the user-space lock rows as a text
// section, a JSON member and a CSV table (core/analysis/user_locks.h).
#pragma once

#include <nlohmann/json.hpp>

#include <sstream>

#include "core/analysis/report.h"

namespace lockscope::report_user_locks {

// The section after the kernel's table; nothing for a session without user locks.
void text_block(std::ostringstream& out, const Report& rep);
// Its rows alone, no header (report -q).
void rows_block(std::ostringstream& out, const Report& rep);

// {"rows": [{"scope": "user", ...}], "left_out": {...}, ...}.
nlohmann::ordered_json json(const Report& rep);

}  // namespace lockscope::report_user_locks
