// The session the CLI tests read without recording: one second of the pipe
// workload at 4 threads on 2 CPUs, recorded by lockscope and kept in the
// session-file fuzzers' corpus. Needs LOCKSCOPE_SOURCE_DIR.
#pragma once

namespace lockscope::test {

inline constexpr const char* kRecordedPipe =
    LOCKSCOPE_SOURCE_DIR "/tests/fuzz/corpus/session_file/load-recorded-pipe-1s.lockscope";

}  // namespace lockscope::test
