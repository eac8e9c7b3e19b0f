// libFuzzer: arbitrary bytes as a session file (truncated, flipped,
// foreign SQLite, not SQLite at all) through every reader.
#include "session_harness.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    lockscope::fuzz::exercise_session_bytes(data, size);
    return 0;
}
