#include "probe/libbpf_log.h"

#include <bpf/libbpf.h>

#include <cstdarg>
#include <cstdio>
#include <mutex>

namespace lockscope::probe {
namespace {

std::mutex g_mutex;
std::string g_last_warning;

int keep_warning(enum libbpf_print_level level, const char* fmt, va_list args)
{
    if (level == LIBBPF_DEBUG)
        return 0;
    char buf[1024];
    vsnprintf(buf, sizeof buf, fmt, args);
    std::lock_guard lock(g_mutex);
    g_last_warning = buf;
    while (!g_last_warning.empty() && g_last_warning.back() == '\n')
        g_last_warning.pop_back();
    return 0;
}

}  // namespace

void keep_libbpf_warnings()
{
    libbpf_set_print(keep_warning);
    std::lock_guard lock(g_mutex);
    g_last_warning.clear();
}

std::string last_libbpf_warning()
{
    std::lock_guard lock(g_mutex);
    return g_last_warning;
}

}  // namespace lockscope::probe
