// What the fuzz targets and their replay test run on one input: every path
// by which lockscope reads a session someone handed it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace lockscope::fuzz {

// How far an input got; the replay test uses it to check that the corpus
// still reaches the formatting code and still covers refusals.
enum class Outcome { Refused, Loaded };

// Opens `path` the way report, diff and the GUI do (summary, first-paint,
// totals-only and full loads), then builds and formats every report
// grouping, a diff against itself and a reference session, and every
// export format (chrome-trace streams the episodes from `path`). A
// lockscope::Error or UsageError is the expected answer to a bad file; any
// other exception is a bug and aborts, so that libFuzzer reports it.
Outcome exercise_session_file(const std::string& path);

// Writes `data` to a scratch file (reused by the calling thread) and
// exercises it as above.
Outcome exercise_session_bytes(const uint8_t* data, size_t size);

// Applies `data` as SQL statements to a fresh copy of a valid session
// written by SessionWriter, then exercises the result. Statements that
// fail are ignored (what ran before them stays applied); ATTACH and
// VACUUM INTO are refused so that an input cannot write elsewhere.
Outcome exercise_sql_on_valid_session(const uint8_t* data, size_t size);

}  // namespace lockscope::fuzz
