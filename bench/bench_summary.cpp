#include "bench_summary.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <iomanip>
#include <sstream>

#include "core/error.h"

namespace lockscope::bench {

Spread spread(std::vector<double> values)
{
    std::sort(values.begin(), values.end());
    const std::size_t n = values.size();
    const double median = n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
    return {median, values.front(), values.back(), n};
}

std::map<std::string, Spread> summarize(const std::vector<Figures>& runs)
{
    std::map<std::string, std::vector<double>> values;
    for (const auto& run : runs) {
        for (const auto& [key, value] : run) {
            values[key].push_back(value);
        }
    }
    std::map<std::string, Spread> out;
    for (const auto& [key, v] : values) {
        out[key] = spread(v);
    }
    return out;
}

std::string fixed(double value, int decimals)
{
    std::ostringstream out;
    out << std::fixed << std::setprecision(decimals) << value;
    return out.str();
}

std::string cell(const std::map<std::string, Spread>& summary, const std::string& key, int decimals)
{
    const auto found = summary.find(key);
    if (found == summary.end()) {
        return "-";
    }
    const Spread& s = found->second;
    return fixed(s.median, decimals) + " (" + fixed(s.min, decimals) + "-" + fixed(s.max, decimals) + ")";
}

namespace {

void write_figures(FILE* f, const Figures& figures)
{
    const char* sep = "";
    std::fprintf(f, "{");
    for (const auto& [key, value] : figures) {
        std::fprintf(f, "%s\"%s\": %.6g", sep, key.c_str(), value);
        sep = ", ";
    }
    std::fprintf(f, "}");
}

}  // namespace

void write_json(const std::string& path, const std::string& head, const Runs& runs,
                const std::map<std::string, std::map<std::string, Spread>>& summary)
{
    FILE* f = std::fopen(path.c_str(), "w");
    if (f == nullptr) {
        throw Error("write", path, errno);
    }
    std::fprintf(f, "{%s,\n \"runs\": {", head.c_str());
    const char* sep = "";
    for (const auto& [kind, list] : runs) {
        std::fprintf(f, "%s\n  \"%s\": [", sep, kind.c_str());
        const char* inner = "";
        for (const auto& figures : list) {
            std::fprintf(f, "%s\n   ", inner);
            write_figures(f, figures);
            inner = ",";
        }
        std::fprintf(f, "]");
        sep = ",";
    }
    std::fprintf(f, "},\n \"summary\": {");
    sep = "";
    for (const auto& [kind, keys] : summary) {
        std::fprintf(f, "%s\n  \"%s\": {", sep, kind.c_str());
        const char* inner = "";
        for (const auto& [key, s] : keys) {
            std::fprintf(f, "%s\n   \"%s\": {\"median\": %.6g, \"min\": %.6g, \"max\": %.6g, \"n\": %zu}", inner,
                         key.c_str(), s.median, s.min, s.max, s.n);
            inner = ",";
        }
        std::fprintf(f, "}");
        sep = ",";
    }
    std::fprintf(f, "}}\n");
    if (std::fclose(f) != 0) {
        throw Error("write", path, errno);
    }
}

}  // namespace lockscope::bench
