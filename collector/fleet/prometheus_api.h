// The one part of Prometheus' HTTP API that `diff --prometheus` needs:
// instant queries (GET /api/v1/query), over libcurl. Anything that serves
// that API answers too: Thanos Query, Mimir and Cortex (under their
// Prometheus prefix, e.g. http://mimir:8080/prometheus), VictoriaMetrics.
#pragma once

#include <atomic>
#include <map>
#include <string>
#include <vector>

namespace lockscope::fleet {

// One element of an instant vector: its labels and value.
struct Sample {
    std::map<std::string, std::string> labels;
    double value = 0;

    std::string label(const std::string& name) const;  // "" when absent
};

class PrometheusApi {
public:
    // base_url: what comes before /api/v1/query, e.g. http://prometheus:9090.
    // `cancelled`, when set, abandons the query under way (Error "cancelled").
    explicit PrometheusApi(std::string base_url, double timeout_s = 120, const std::atomic<bool>* cancelled = nullptr);

    // The instant vector `promql` evaluates to at `time` (Unix seconds).
    // Throws lockscope::Error with the server's own message on a bad query,
    // and with a remedy when nothing answers.
    std::vector<Sample> query(const std::string& promql, double time) const;

    const std::string& base_url() const { return base_url_; }

private:
    std::string base_url_;
    double timeout_s_;
    const std::atomic<bool>* cancelled_;
};

}  // namespace lockscope::fleet
