// A fresh directory for a workload's files, removed with everything in it
// when the owner goes away (also on an early stop or an exception).
#pragma once

#include <filesystem>
#include <string>

namespace lockscope::workload {

class ScratchDir {
public:
    // Creates lockscope-workload-XXXXXX under `parent`; an empty parent means
    // $TMPDIR, else /tmp. Throws lockscope::Error when it cannot.
    explicit ScratchDir(const std::string& parent);
    ~ScratchDir();
    ScratchDir(const ScratchDir&) = delete;
    ScratchDir& operator=(const ScratchDir&) = delete;

    const std::filesystem::path& path() const { return path_; }

private:
    std::filesystem::path path_;
};

}  // namespace lockscope::workload
