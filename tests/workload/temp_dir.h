// A test's own empty directory, so a test can tell that a workload left
// nothing behind in the --dir it was given.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <string>

namespace lockscope::workload::testing {

class TempDir {
public:
    TempDir()
    {
        std::string templ = (std::filesystem::temp_directory_path() / "lockscope-workload-test-XXXXXX").string();
        if (mkdtemp(templ.data()))
            path_ = templ;
    }
    ~TempDir()
    {
        std::error_code ec;
        if (!path_.empty())
            std::filesystem::remove_all(path_, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    const std::filesystem::path& path() const { return path_; }
    bool empty() const { return std::filesystem::is_empty(path_); }

private:
    std::filesystem::path path_;
};

}  // namespace lockscope::workload::testing
