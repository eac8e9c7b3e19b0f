#include "recording.h"

#include <gtest/gtest.h>

#include "subprocess.h"

namespace lockscope::test {

Recorded record_workload(const std::vector<std::string>& workload_args, const std::vector<std::string>& record_args,
                         std::string* record_err)
{
    std::vector<std::string> argv = {lockscope_bin(), "workload"};
    argv.insert(argv.end(), workload_args.begin(), workload_args.end());
    Process target = Process::start(argv, /*hold=*/true);
    Observer observer(target.pid());
    const std::string out = temp_path("counts.lockscope");
    std::vector<std::string> rec_argv = {
        lockscope_bin(), "record", "-p", std::to_string(target.pid()), "-o", out, "-i", "0.5"};
    rec_argv.insert(rec_argv.end(), record_args.begin(), record_args.end());
    Process rec = Process::start(rec_argv);
    EXPECT_TRUE(rec.wait_for_stderr("lockscope: recording", 30)) << "recorder did not attach";
    target.release();
    Finished w = target.wait(60);
    EXPECT_EQ(w.exit_code, 0) << w.err;
    Finished r = rec.wait(60);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    if (record_err)
        *record_err = r.err;
    Recorded result{observer.read(), load_session(out), {}, w.cpu_ns};
    ReportOptions all;
    all.top = SIZE_MAX;
    result.report = build_report(result.session, all);
    return result;
}

}  // namespace lockscope::test
