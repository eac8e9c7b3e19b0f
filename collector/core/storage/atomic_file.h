// Files that appear whole or not at all. A writer writes into a file of its
// own in the target's directory and gives it the target's name only when
// done (commit(): fsync, then link or rename, both atomic), so a command
// interrupted or failing half way leaves the target as it was: no half
// file, and an existing file lost only to a complete replacement.
#pragma once

#include <sys/types.h>

#include <memory>
#include <ostream>
#include <string>

namespace lockscope {

class AtomicFile {
public:
    // Opens the writer's own file. An existing regular file at `path` is
    // replaced at commit() only with `replace` (else Error: "choose another
    // name, or overwrite it with --force"), keeping its permissions; a
    // symbolic link is followed, so the file it names is the one replaced.
    // Something at `path` that is not a regular file (/dev/null, a pipe, a
    // terminal) loses nothing when written: it is written directly. Throws
    // lockscope::Error.
    AtomicFile(std::string path, bool replace);
    ~AtomicFile();  // without commit(): the file is discarded, `path` untouched
    AtomicFile(const AtomicFile&) = delete;
    AtomicFile& operator=(const AtomicFile&) = delete;

    std::ostream& stream();
    // Flushes, syncs and puts the file in place. Throws lockscope::Error
    // (a write that failed, a full disk, a file created at `path` meanwhile
    // without `replace`).
    void commit();

    const std::string& path() const { return path_; }

private:
    class Impl;
    std::string path_;
    std::unique_ptr<Impl> impl_;
};

// A new file beside `path` under a fresh hidden name (".NAME.xxxxxx",
// which no name lockscope looks for matches), created exclusively with
// `mode` less the umask: its descriptor, with the name in `temp`; -1 and
// errno where it cannot be made.
int create_temporary_beside(const std::string& path, std::string& temp, mode_t mode);

// Renames `temp` to `path`: over an existing file with `replace`, else only
// where there still is none (EEXIST). 0, or the errno.
int rename_into_place(const std::string& temp, const std::string& path, bool replace);

}  // namespace lockscope
