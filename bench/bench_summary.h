// The spread of figures over a benchmark's rounds, and their JSON, shared
// by the cost benchmarks written in C++.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace lockscope::bench {

struct Spread {
    double median = 0;
    double min = 0;
    double max = 0;
    std::size_t n = 0;
};

Spread spread(std::vector<double> values);

// Named figures of each round, per kind.
using Figures = std::map<std::string, double>;
using Runs = std::map<std::string, std::vector<Figures>>;

// Each figure's spread over the rounds that have it.
std::map<std::string, Spread> summarize(const std::vector<Figures>& runs);

// A number with `decimals` digits after the point, in a string as long as it needs.
std::string fixed(double value, int decimals);

// "median (min-max)", or "-" where the summary has no such figure.
std::string cell(const std::map<std::string, Spread>& summary, const std::string& key, int decimals);

// Writes {<head>, "runs": {...}, "summary": {...}} to path; head is the
// object's first members, already in JSON. Throws lockscope::Error.
void write_json(const std::string& path, const std::string& head, const Runs& runs,
                const std::map<std::string, std::map<std::string, Spread>>& summary);

}  // namespace lockscope::bench
