// A rolling series of session files in one directory (`record
// --session-dir`): an always-on recorder starts a new file every so often
// and removes the oldest so that the directory stays within a count and a
// size. The files are ordinary sessions; each is complete once the next
// one has started.
#pragma once

#include <cstdint>
#include <ctime>
#include <string>
#include <vector>

namespace lockscope {

struct RotationPolicy {
    std::string dir;
    double every_s = 3600;   // start a new file after this long
    unsigned keep = 0;       // at most this many files (0: no count limit)
    uint64_t max_bytes = 0;  // at most this many bytes in all (0: no size limit)

    // A file grows to at most this before the next starts, so that the
    // newest files fit under max_bytes together (0: no size trigger).
    uint64_t file_bytes() const { return max_bytes / 4; }
};

// "lockscope-20261201-191500.123.lockscope": UTC, milliseconds, so that
// names sort in the order the files were started.
std::string rotated_session_name(timespec when);

// The series' files in `dir`, oldest first (names this recorder gives;
// other files are never touched).
std::vector<std::string> rotated_sessions(const std::string& dir);

// Bytes a session takes on disk, its write-ahead log included.
uint64_t session_bytes(const std::string& path);

// Removes the oldest files of the series until it holds at most `keep`
// files and `max_bytes` bytes, counting `current` (the file being written,
// never removed). Returns the paths removed. Throws lockscope::Error when
// the directory cannot be read or a file cannot be removed.
std::vector<std::string> prune_sessions(const RotationPolicy& policy, const std::string& current);

}  // namespace lockscope
