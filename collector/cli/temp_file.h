// A file of our own under $TMPDIR (or /tmp), removed when it goes out of
// scope with the files SQLite keeps beside it: contention's session, and
// the session report -i - reads from standard input.
#pragma once

#include <string>

namespace lockscope::cli {

class TempFile {
public:
    // Creates "PREFIX-XXXXXX.SUFFIX" (empty, mode 0600); a failure is a lockscope::Error.
    TempFile(const std::string& prefix, const std::string& suffix);
    ~TempFile();
    TempFile(const TempFile&) = delete;
    TempFile& operator=(const TempFile&) = delete;

    const std::string& path() const { return path_; }

private:
    std::string path_;
};

// Copies everything from `in` into `out`; false (errno set) on a read or write error.
bool copy_fd(int in, int out);

}  // namespace lockscope::cli
