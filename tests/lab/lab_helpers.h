// Shared by the kernel lab tests: skip with a reason where guests cannot
// run, find leftover qemu processes, read a session's report.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "subprocess.h"

#define LOCKSCOPE_REQUIRE_LAB()                                                                  \
    do {                                                                                         \
        if (geteuid() != 0)                                                                      \
            GTEST_SKIP() << "needs root (apt-get download into the lab cache, BPF in the host)"; \
        if (!lockscope::test::on_path("qemu-system-x86_64"))                                     \
            GTEST_SKIP() << "qemu-system-x86_64 missing: scripts/install-deps.sh installs it";   \
    } while (0)

namespace lockscope::test {

inline bool on_path(const std::string& name)
{
    return run({"sh", "-c", "command -v " + name}).exit_code == 0;
}

// Processes whose command line mentions `needle` (a path only this test used).
inline int processes_mentioning(const std::string& needle)
{
    int found = 0;
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
        const std::string pid = entry.path().filename().string();
        if (pid.find_first_not_of("0123456789") != std::string::npos || pid == std::to_string(getpid()))
            continue;
        std::ifstream in(entry.path() / "cmdline");
        std::stringstream s;
        s << in.rdbuf();
        if (s.str().find(needle) != std::string::npos)
            found++;
    }
    return found;
}

inline std::string last_line(const std::string& text)
{
    const size_t end = text.find_last_not_of('\n');
    if (end == std::string::npos)
        return {};
    const size_t start = text.rfind('\n', end);
    return text.substr(start == std::string::npos ? 0 : start + 1,
                       end - (start == std::string::npos ? 0 : start + 1) + 1);
}

// `lockscope report SESSION --format json`, parsed.
inline nlohmann::json report_json(const std::string& session)
{
    const Finished r = run({lockscope_bin(), "report", session, "--format", "json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out);
}

inline std::string make_temp_dir(const std::string& name)
{
    const std::string dir = temp_path(name);
    std::filesystem::create_directories(dir);
    return dir;
}

}  // namespace lockscope::test
