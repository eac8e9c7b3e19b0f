#include "fleet/fleet_query.h"

#include <cmath>
#include <cstdio>
#include <string_view>

#include "core/error.h"

namespace lockscope::fleet {
namespace {

constexpr const char* kInfo = "lockscope_build_info";
// Every host-level join goes through these two labels: Prometheus sets
// them on every scraped series, the per-lock series and the info alike.
constexpr const char* kHost = "instance, job";

}  // namespace

std::string promql_range(double window_s)
{
    return std::to_string(std::llround(window_s)) + "s";
}

std::string build_info_selector(const std::string& selector)
{
    std::string inner = selector;
    if (!inner.empty() && inner.front() == '{') {
        if (inner.back() != '}')
            throw UsageError("unbalanced braces in selector '" + selector + "'");
        inner = inner.substr(1, inner.size() - 2);
    }
    if (inner.find_first_not_of(" \t") == std::string::npos)
        throw UsageError("a group's selector needs at least one label matcher, e.g. kernel=\"6.1.0-47-amd64\"");
    if (inner.find_first_of("{}") != std::string::npos)
        throw UsageError("a selector is label matchers on " + std::string(kInfo) + ", not '" + selector + "'");
    return "{" + inner + "}";
}

std::string label_matcher(const std::string& label, const std::string& value)
{
    std::string quoted;
    for (char c : value) {
        if (c == '"' || c == '\\')
            quoted += '\\';
        quoted += c == '\n' ? std::string("\\n") : std::string(1, c);
    }
    return label + "=\"" + quoted + "\"";
}

std::string hosts_expr(const std::string& selector, const std::string& range)
{
    // Samples that matched == all samples: the host matched throughout.
    return std::string("group by (") + kHost + ") (sum by (" + kHost + ") (count_over_time(" + kInfo + selector + "[" +
           range + "])) == sum by (" + kHost + ") (count_over_time(" + kInfo + "[" + range + "])))";
}

std::string host_info_query(const std::string& selector, const std::string& range)
{
    return std::string("group by (") + kHost + ", kernel, kernel_version, cpus, cpu_model) (last_over_time(" + kInfo +
           selector + "[" + range + "])) * on (" + kHost + ") group_left () " + hosts_expr(selector, range);
}

std::string left_out_query(const std::string& selector, const std::string& range)
{
    return std::string("count(group by (") + kHost + ") (last_over_time(" + kInfo + selector + "[" + range +
           "])) unless on (" + kHost + ") " + hosts_expr(selector, range) + ")";
}

std::string group_sizes_query(const std::string& label, const std::string& range)
{
    return "count by (" + label + ") (group by (" + kHost + ", " + label + ") (last_over_time(" + kInfo + "{" + label +
           "!=\"\"}[" + range + "])))";
}

std::string top_locks_query(const std::string& both, const std::string& range, size_t top)
{
    return "topk(" + std::to_string(top) + ", sum by (lock, kind) (increase(lockscope_wait_seconds_total[" + range +
           "]) * on (" + kHost + ") group_left () " + both + "))";
}

std::string names_regex(const std::vector<std::string>& names)
{
    std::string regex;
    for (const std::string& name : names) {
        regex += regex.empty() ? "" : "|";
        for (char c : name) {
            if (std::string_view("\\.+*?()|[]{}^$").find(c) != std::string_view::npos)
                regex += '\\';
            regex += c;
        }
    }
    return regex;
}

std::string lock_counter_query(const std::string& counter, const std::string& both, const std::string& lock_regex,
                               const std::string& range)
{
    // The top locks by name only: the index finds their series without
    // reading the others. Another kind of a top lock's name is in "(all)".
    const std::string metric = "lockscope_" + counter;
    return std::string("(sum by (") + kHost + ", lock, kind) (increase(" + metric + "{" +
           label_matcher("lock", lock_regex).replace(4, 1, "=~") + "}[" + range + "])) or label_replace(sum by (" +
           kHost + ") (increase(" + metric + "[" + range + "])), \"lock\", \"" + kAllLocks + "\", \"\", \"\")) * on (" +
           kHost + ") group_left () " + both;
}

std::string host_counter_query(const std::string& both, const std::string& range)
{
    std::string parts;
    for (const char* c : {"cpu_idle_seconds", "cpu_seconds", "lost"}) {
        parts += std::string(parts.empty() ? "" : " or ") + "label_replace(sum by (" + kHost +
                 ") (increase(lockscope_" + c + "_total[" + range + "])), \"counter\", \"" + c + "\", \"\", \"\")";
    }
    return "(" + parts + ") * on (" + kHost + ") group_left () " + both;
}

}  // namespace lockscope::fleet
