// A real Prometheus server over generated fleet data with a known truth,
// for `lockscope diff --prometheus` and the dashboard's fleet comparison:
// independent fleets (label seed="N" on their build info), each of 40
// hosts, half on one kernel release and half on the next, 30 locks. On the
// new release lock_03 waits and contends 30% more, lock_07 30% less; every
// other lock, and every spin-failure rate and CPU idle, is the same on both
// with host-to-host noise. Some hosts restart their exporter (a counter
// reset) inside the window. promtool backfills the TSDB from OpenMetrics.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "prometheus_server.h"
#include "temp_dir.h"

namespace lockscope::test {

inline constexpr int kHosts = 40, kLocks = 30, kSamples = 6, kStep = 60;
inline constexpr int kWorse = 3, kBetter = 7;
inline constexpr const char* kOld = "6.1.0-47-amd64";
inline constexpr const char* kNew = "6.1.0-57-amd64";
// One more fleet, seed kMixed, on two other releases, where nothing changes
// but the new release's hosts have twice the CPUs and twice the contention
// per host.
inline constexpr int kMixed = 21;
inline constexpr const char* kMixedOld = "6.2.0-1-amd64";
inline constexpr const char* kMixedNew = "6.2.0-2-amd64";

std::string lock_name(int j);  // "lock_03"

// One OpenMetrics file with fleets 1..seeds (seeds < kMixed) and the mixed
// fleet, samples every kStep seconds from t0.
void write_fleet_openmetrics(const std::filesystem::path& file, double t0, int seeds);

// The TSDB of write_fleet_openmetrics, served by a Prometheus server.
class FleetPrometheus {
public:
    // Throws std::runtime_error when promtool or the server fails.
    explicit FleetPrometheus(int seeds);

    const PrometheusServer& server() const { return *server_; }
    std::string url() const { return server_->url(); }
    double end() const { return end_; }  // the last sample's time: where windows end

private:
    lockscope::testing::TempDir dir_;
    std::unique_ptr<PrometheusServer> server_;
    double end_ = 0;
};

}  // namespace lockscope::test
