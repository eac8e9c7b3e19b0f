// libFuzzer, structure-aware: the input is SQL applied to a valid session
// (huge counts, negative durations, NULLs, dropped tables, a newer schema
// version), so mutations stay SQLite files that reach the row validation.
#include "session_harness.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    lockscope::fuzz::exercise_sql_on_valid_session(data, size);
    return 0;
}
