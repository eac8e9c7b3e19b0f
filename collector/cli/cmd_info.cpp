// lockscope info: what this machine supports and what will work.
#include <sys/utsname.h>

#include <cstdio>

#include "cli/options.h"
#include "core/error.h"
#include "core/metadata.h"
#include "probe/features.h"
#include "probe/rwsem_spin.h"

namespace lockscope::cli {

int cmd_info(const Args& args)
{
    po::options_description visible("options");
    visible.add_options()("help,h", "show this help");
    po::positional_options_description none;
    po::variables_map vm;
    if (!parse(args, visible, visible, none, vm,
               "usage: lockscope info\n\nShows what this machine supports for recording and which parts of\n"
               "lockscope will work here."))
        return kExitOk;

    auto meta = collect_host_metadata();
    std::printf("kernel      %s (%s)\n", meta["kernel_release"].c_str(), meta["machine"].c_str());
    std::printf("cpus        %s x %s%s\n", meta["online_cpus"].c_str(), meta["cpu_model"].c_str(),
                meta["virtualised"] == "yes" ? " (virtualised)" : "");
    std::printf("\n");
    bool can_record = true;
    for (const probe::Feature& f : probe::detect_features()) {
        std::printf("  [%s] %-32s %s\n", f.available ? "ok" : (f.required ? "!!" : "--"), f.name.c_str(),
                    f.detail.c_str());
        if (f.required && !f.available)
            can_record = false;
    }
    // Optional: fentry on the rwsem writer's spin (probe/rwsem_spin.h).
    std::printf("\nrwsem spin observation: %s\n", probe::rwsem_spin_probe_status().c_str());
    std::printf("\nkernel config:\n");
    for (const auto& [key, value] : meta)
        if (key.rfind("config.", 0) == 0)
            std::printf("  %-36s %s\n", key.substr(7).c_str(), value.c_str());
    std::printf("\n%s\n", can_record ? "record: will work (report, diff and export work anywhere)"
                                     : "record: will NOT work here (see the lines marked !!); report, diff "
                                       "and export still work");
    return kExitOk;
}

}  // namespace lockscope::cli
