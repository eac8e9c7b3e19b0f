#include "fleet_data.h"

#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <map>
#include <random>
#include <stdexcept>
#include <vector>

#include "subprocess.h"

namespace lockscope::test {

namespace fs = std::filesystem;

namespace {

int cpus(int seed, int host)
{
    return seed == kMixed && host >= kHosts / 2 ? 4 : 2;
}

const char* kernel(int seed, int host)
{
    if (seed == kMixed)
        return host < kHosts / 2 ? kMixedOld : kMixedNew;
    return host < kHosts / 2 ? kOld : kNew;
}

// Per-host rates of one fleet (seed): [host][lock] → contentions/s etc.
struct HostRates {
    std::vector<double> contentions, wait_s, attempts, failures;
    double idle_fraction = 0;
};

std::vector<HostRates> fleet_rates(int seed)
{
    std::mt19937_64 rng(uint64_t(seed) * 7919);
    std::normal_distribution<double> z(0, 1);
    std::vector<HostRates> hosts(kHosts);
    for (int i = 0; i < kHosts; ++i) {
        const bool new_kernel = i >= kHosts / 2 && seed != kMixed;
        const double host_factor = (1 + 0.05 * z(rng)) * cpus(seed, i) / 2;
        HostRates& h = hosts[size_t(i)];
        for (int j = 0; j < kLocks; ++j) {
            // Locks 3 and 7 share a base (and are the heaviest), so the
            // totals do not change: every total is null.
            const double base = j == kWorse || j == kBetter ? 2000 : 500 + 100 * (j % 4);
            const double effect = !new_kernel ? 1.0 : j == kWorse ? 1.3 : j == kBetter ? 0.7 : 1.0;
            const double c = base * effect * host_factor * (1 + 0.1 * z(rng));
            h.contentions.push_back(c);
            h.wait_s.push_back(2e-6 * base * effect * host_factor * (1 + 0.1 * z(rng)));
            h.attempts.push_back(0.9 * c * (1 + 0.05 * z(rng)));
            h.failures.push_back(0.2 * h.attempts.back() * (1 + 0.1 * z(rng)));
        }
        h.idle_fraction = 0.3 * (1 + 0.1 * z(rng));
    }
    return hosts;
}

std::string instance(int seed, int host)
{
    return "s" + std::to_string(seed) + "-h" + std::to_string(host) + ":9464";
}

// The counter's value at sample k for a steady rate: hosts with i % 9 == 4
// restarted their exporter right after sample 2, so their counters start
// again from 0 (rate() adds the count from before the reset back).
double cumulative(double rate, int host, int k)
{
    const double offset = 1000 * rate;  // the exporter ran before the window
    if (host % 9 == 4 && k > 2)
        return rate * kStep * (k - 2);
    return offset + rate * kStep * k;
}

}  // namespace

std::string lock_name(int j)
{
    std::string name = std::to_string(j);
    return "lock_" + (name.size() < 2 ? "0" + name : name);
}

void write_fleet_openmetrics(const fs::path& file, double t0, int seeds)
{
    std::ofstream out(file);
    char line[512];
    auto series = [&](const std::string& name_labels, auto value_at) {
        for (int k = 0; k < kSamples; ++k) {
            std::snprintf(line, sizeof line, "%s %.6f %.0f\n", name_labels.c_str(), value_at(k), t0 + kStep * k);
            out << line;
        }
    };
    std::vector<int> fleet_seeds;
    for (int s = 1; s <= seeds; ++s)
        fleet_seeds.push_back(s);
    fleet_seeds.push_back(kMixed);
    std::map<int, std::vector<HostRates>> fleets;
    for (int s : fleet_seeds)
        fleets[s] = fleet_rates(s);
    auto host_labels = [](int s, int i) { return "instance=\"" + instance(s, i) + "\",job=\"lockscope\""; };
    out << "# TYPE lockscope_build_info gauge\n";
    for (int s : fleet_seeds)
        for (int i = 0; i < kHosts; ++i)
            series("lockscope_build_info{" + host_labels(s, i) + ",version=\"test\",kernel=\"" + kernel(s, i) +
                       "\",cpus=\"" + std::to_string(cpus(s, i)) + "\",cpu_model=\"Test CPU\",rack=\"" +
                       (i % 2 ? "odd" : "even") + "\",seed=\"" + std::to_string(s) + "\"}",
                   [](int) { return 1.0; });
    const std::pair<const char*, std::vector<double> HostRates::*> counters[] = {
        {"contentions", &HostRates::contentions},
        {"wait_seconds", &HostRates::wait_s},
        {"spin_attempts", &HostRates::attempts},
        {"spin_failures", &HostRates::failures}};
    for (const auto& [name, member] : counters) {
        out << "# TYPE lockscope_" << name << " counter\n";
        for (int s : fleet_seeds)
            for (int i = 0; i < kHosts; ++i)
                for (int j = 0; j < kLocks; ++j) {
                    const double rate = (fleets[s][size_t(i)].*member)[size_t(j)];
                    series("lockscope_" + std::string(name) + "_total{" + host_labels(s, i) + ",lock=\"" +
                               lock_name(j) + "\",kind=\"" + (j % 3 == 2 ? "rwsem/write" : "mutex") + "\"}",
                           [&](int k) { return cumulative(rate, i, k); });
                }
    }
    for (const char* name : {"cpu_idle_seconds", "cpu_seconds"}) {
        out << "# TYPE lockscope_" << name << " counter\n";
        for (int s : fleet_seeds)
            for (int i = 0; i < kHosts; ++i) {
                const double idle = fleets[s][size_t(i)].idle_fraction;
                const double rate = cpus(s, i) * (std::string(name) == "cpu_seconds" ? 1.0 : idle);
                series("lockscope_" + std::string(name) + "_total{" + host_labels(s, i) + "}",
                       [&](int k) { return cumulative(rate, i, k); });
            }
    }
    out << "# EOF\n";
}

FleetPrometheus::FleetPrometheus(int seeds)
{
    // Recent enough to be inside the server's retention, old enough to be
    // in blocks of their own.
    const double t0 = std::floor((double(time(nullptr)) - 3 * 3600) / 60) * 60;
    end_ = t0 + kStep * (kSamples - 1);
    const fs::path file = dir_.path() / "fleet.om", data = dir_.path() / "data";
    write_fleet_openmetrics(file, t0, seeds);
    const Finished blocks =
        run({"/usr/bin/promtool", "tsdb", "create-blocks-from", "openmetrics", file.string(), data.string()}, 600);
    if (blocks.exit_code != 0)
        throw std::runtime_error("promtool could not build the TSDB: " + blocks.err + blocks.out);
    fs::remove(file);
    std::ofstream(dir_.path() / "prometheus.yml") << "global:\n  scrape_interval: 1m\n";
    server_ = std::make_unique<PrometheusServer>(dir_.path() / "prometheus.yml", data);
}

}  // namespace lockscope::test
