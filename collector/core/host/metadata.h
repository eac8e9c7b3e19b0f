// Facts about the recording machine stored in every session, so a diff can
// say what differs besides the numbers.
#pragma once

#include <map>
#include <string>

namespace lockscope {

// host, kernel_release, kernel_version, config.* (see session_store.h),
// cpu_model, online_cpus, start_time, tool_version, virtualised.
std::map<std::string, std::string> collect_host_metadata();

// The lock-relevant lines of a kernel config text ("y", "n" when unset).
std::map<std::string, std::string> lock_config_lines(const std::string& config_text);

// The running kernel's config: /proc/config.gz, else /boot/config-<release>;
// empty when neither is readable.
std::string read_kernel_config();

std::string iso8601_now();

// The host's /proc/loadavg load figures ("0.52 0.40 0.31"); empty if unreadable.
std::string read_loadavg();

// Adds or replaces metadata keys in a finished session file, for facts only
// known after it was recorded (the kernel lab notes the host's load and the
// virtualisation around a guest's recording). Throws lockscope::Error.
void annotate_session(const std::string& path, const std::map<std::string, std::string>& meta);

}  // namespace lockscope
