#include "core/host/metadata.h"

#include <sqlite3.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <zlib.h>

#include <array>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "core/format.h"
#include "lockscope_version.h"

namespace lockscope {
namespace {

constexpr std::array kLockConfigs = {
    "CONFIG_MUTEX_SPIN_ON_OWNER",
    "CONFIG_RWSEM_SPIN_ON_OWNER",
    "CONFIG_LOCK_SPIN_ON_OWNER",
    "CONFIG_PREEMPT_NONE",
    "CONFIG_PREEMPT_VOLUNTARY",
    "CONFIG_PREEMPT",
    "CONFIG_PREEMPT_RT",
    "CONFIG_PREEMPT_DYNAMIC",
    "CONFIG_PREEMPT_LAZY",
    "CONFIG_PARAVIRT_SPINLOCKS",
    "CONFIG_LOCK_EVENT_COUNTS",
    "CONFIG_LOCKDEP",
    "CONFIG_DEBUG_MUTEXES",
    "CONFIG_NR_CPUS",
    "CONFIG_HZ",
};

std::string read_gzip(const std::string& path)
{
    gzFile f = gzopen(path.c_str(), "rb");
    if (!f)
        return {};
    std::string out;
    char buf[16384];
    int n;
    while ((n = gzread(f, buf, sizeof buf)) > 0)
        out.append(buf, size_t(n));
    gzclose(f);
    return out;
}

std::string read_file(const std::string& path)
{
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

std::string cpu_model()
{
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("model name", 0) == 0) {
            auto colon = line.find(':');
            if (colon != std::string::npos)
                return line.substr(line.find_first_not_of(' ', colon + 1));
        }
    }
    return "unknown";
}

bool hypervisor_present()
{
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("flags", 0) == 0)
            return line.find(" hypervisor") != std::string::npos;
    return false;
}

}  // namespace

std::string read_kernel_config()
{
    std::string text = read_gzip("/proc/config.gz");
    if (!text.empty())
        return text;
    utsname u{};
    uname(&u);
    return read_file(std::string("/boot/config-") + u.release);
}

std::map<std::string, std::string> lock_config_lines(const std::string& config_text)
{
    std::map<std::string, std::string> out;
    for (const char* name : kLockConfigs)
        out[std::string("config.") + name] = "n";
    std::istringstream in(config_text);
    std::string line;
    while (std::getline(in, line)) {
        for (const char* name : kLockConfigs) {
            const std::string prefix = std::string(name) + "=";
            if (line.rfind(prefix, 0) == 0)
                out[std::string("config.") + name] = line.substr(prefix.size());
        }
    }
    return out;
}

std::string iso8601_now()
{
    return format_local_now("%Y-%m-%dT%H:%M:%S%z");
}

std::string read_loadavg()
{
    std::ifstream in("/proc/loadavg");
    std::string one, five, fifteen;
    if (!(in >> one >> five >> fifteen))
        return {};
    return one + " " + five + " " + fifteen;
}

void annotate_session(const std::string& path, const std::map<std::string, std::string>& meta)
{
    sqlite3* db = nullptr;
    if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
        const std::string why = db ? sqlite3_errmsg(db) : "out of memory";
        sqlite3_close(db);
        throw Error("cannot open session to annotate", path, 0, why);
    }
    sqlite3_stmt* stmt = nullptr;
    int rc = sqlite3_prepare_v2(db,
                                "INSERT INTO meta(key, value) VALUES(?, ?) "
                                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                                -1, &stmt, nullptr);
    for (auto it = meta.begin(); rc == SQLITE_OK && it != meta.end(); ++it) {
        sqlite3_bind_text(stmt, 1, it->first.c_str(), -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(stmt, 2, it->second.c_str(), -1, SQLITE_TRANSIENT);
        rc = sqlite3_step(stmt) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
        sqlite3_reset(stmt);
    }
    const std::string why = rc == SQLITE_OK ? "" : sqlite3_errmsg(db);
    sqlite3_finalize(stmt);
    sqlite3_close(db);
    if (rc != SQLITE_OK)
        throw Error("cannot annotate session", path, 0, why);
}

std::map<std::string, std::string> collect_host_metadata()
{
    std::map<std::string, std::string> m;
    utsname u{};
    uname(&u);
    m["host"] = u.nodename;
    m["kernel_release"] = u.release;
    m["kernel_version"] = u.version;
    m["machine"] = u.machine;
    m["cpu_model"] = cpu_model();
    m["online_cpus"] = std::to_string(sysconf(_SC_NPROCESSORS_ONLN));
    m["virtualised"] = hypervisor_present() ? "yes" : "no";
    m["start_time"] = iso8601_now();
    m["tool_version"] = LOCKSCOPE_VERSION;
    const std::string config = read_kernel_config();
    if (config.empty()) {
        m["config.available"] = "no (neither /proc/config.gz nor /boot/config-<release> readable)";
    } else {
        m["config.available"] = "yes";
        m.merge(lock_config_lines(config));
    }
    return m;
}

}  // namespace lockscope
