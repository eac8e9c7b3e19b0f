// Internal to the report's renderings: the user-space lock rows as a text
// section, a JSON member and a CSV table (core/analysis/user_locks.h).
#pragma once

#include <nlohmann/json.hpp>

#include <sstream>

#include "core/analysis/report.h"

namespace lockscope {

namespace report_table {
// The lock table's header and rows (report_format.cpp): the kernel's rows,
// and the user section's with the same columns.
void rows(std::ostringstream& out, const Report& rep, const TextOptions& options);
}  // namespace report_table

namespace report_user_locks {

// The section after the kernel's table, its rows in the kernel table's
// columns (user_lock_row); nothing for a session without user locks.
void text_block(std::ostringstream& out, const Report& rep, const TextOptions& options);
// Its rows alone, no header (report -q).
void rows_block(std::ostringstream& out, const Report& rep, const TextOptions& options);

// {"rows": [{"scope": "user", ...}], "left_out": {...}, ...}.
nlohmann::ordered_json json(const Report& rep);

}  // namespace report_user_locks
}  // namespace lockscope
