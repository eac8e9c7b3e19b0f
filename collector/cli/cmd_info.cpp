// lockscope info: what this machine supports and what will work.
#include <sys/utsname.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/options.h"
#include "core/error.h"
#include "core/host/metadata.h"
#include "lockscope_version.h"
#include "probe/features.h"
#include "probe/rwsem_spin.h"

namespace lockscope::cli {
namespace {

void print_text(std::map<std::string, std::string>& meta, const std::vector<probe::Feature>& features, bool can_record)
{
    std::printf("lockscope   %s\n", LOCKSCOPE_VERSION);
    std::printf("kernel      %s (%s)\n", meta["kernel_release"].c_str(), meta["machine"].c_str());
    std::printf("cpus        %s x %s%s\n", meta["online_cpus"].c_str(), meta["cpu_model"].c_str(),
                meta["virtualised"] == "yes" ? " (virtualised)" : "");
    std::printf("\n");
    for (const probe::Feature& f : features)
        std::printf("  [%s] %-32s %s\n", f.available ? "ok" : (f.required ? "!!" : "--"), f.name.c_str(),
                    f.detail.c_str());
    // Optional: fentry on the rwsem writer's spin (probe/rwsem_spin.h).
    std::printf("\nrwsem spin observation: %s\n", probe::rwsem_spin_probe_status().c_str());
    std::printf("\nkernel config:\n");
    for (const auto& [key, value] : meta)
        if (key.rfind("config.", 0) == 0)
            std::printf("  %-36s %s\n", key.substr(7).c_str(), value.c_str());
    std::printf("\n%s\n", can_record ? "record: will work (report, diff and export work anywhere)"
                                     : "record: will NOT work here (see the lines marked !!); report, diff "
                                       "and export still work");
}

void print_json(const std::map<std::string, std::string>& meta, const std::vector<probe::Feature>& features,
                bool can_record)
{
    nlohmann::json j;
    j["version"] = LOCKSCOPE_VERSION;
    j["kernel_release"] = meta.count("kernel_release") ? meta.at("kernel_release") : "";
    j["record"] = can_record;
    j["rwsem_spin_observation"] = probe::rwsem_spin_probe_status();
    for (const probe::Feature& f : features)
        j["features"].push_back(
            {{"name", f.name}, {"available", f.available}, {"required", f.required}, {"detail", f.detail}});
    for (const auto& [key, value] : meta)
        if (key.rfind("config.", 0) == 0)
            j["config"][key.substr(7)] = value;
    std::printf("%s\n", j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
}

}  // namespace

int cmd_info(const Args& args)
{
    std::string format = "text";
    po::options_description visible("options");
    visible.add_options()("help,h", "show this help")(
        "format,F", po::value(&format)->default_value("text"),
        "text, or json: {version, record, features[{name, available, required, detail}], config, ...} for "
        "scripts");
    po::positional_options_description none;
    po::variables_map vm;
    if (!parse(args, visible, visible, none, vm,
               {"usage: lockscope info [--format text|json]\n\nShows what this machine supports for recording and "
                "which parts of\nlockscope will work here. Lines marked !! stop `record`; lines marked -- are "
                "optional\nor off. tracefs is one of them: lockscope attaches through BTF and never needs it.",
                "  lockscope info\n"
                "  lockscope info --format json | jq .record"}))
        return kExitOk;
    if (format != "text" && format != "json")
        throw UsageError("--format must be text or json, not '" + format + "'");

    auto meta = collect_host_metadata();
    const std::vector<probe::Feature> features = probe::detect_features();
    bool can_record = true;
    for (const probe::Feature& f : features)
        if (f.required && !f.available)
            can_record = false;
    if (format == "json")
        print_json(meta, features, can_record);
    else
        print_text(meta, features, can_record);
    return kExitOk;
}

}  // namespace lockscope::cli
