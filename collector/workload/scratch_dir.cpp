#include "workload/scratch_dir.h"

#include "core/error.h"

#include <cerrno>
#include <cstdlib>
#include <system_error>

namespace lockscope::workload {

ScratchDir::ScratchDir(const std::string& parent)
{
    std::string base = parent;
    if (base.empty()) {
        const char* tmpdir = std::getenv("TMPDIR");
        base = tmpdir && *tmpdir ? tmpdir : "/tmp";
    }
    std::string templ = (std::filesystem::path(base) / "lockscope-workload-XXXXXX").string();
    if (!mkdtemp(templ.data()))
        throw Error("create scratch directory in", base, errno, "pass --dir with a writable directory");
    path_ = templ;
}

ScratchDir::~ScratchDir()
{
    std::error_code ec;  // a destructor must not throw; a leftover is the lesser harm
    std::filesystem::remove_all(path_, ec);
}

}  // namespace lockscope::workload
