// `record --prometheus ADDR:PORT`: serves MetricsState over HTTP with
// prometheus-cpp (text exposition format at /metrics); with a web config,
// over TLS only and/or behind basic auth.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>

#include "core/model.h"
#include "metrics/web_config.h"

namespace prometheus {
class Exposer;
}

namespace lockscope::metrics {

class StateCollectable;

struct ListenAddress {
    std::string host;   // "" for every interface
    unsigned port = 0;  // 0: any free port
};

// "127.0.0.1:9464", "[::1]:9464", ":9464". Throws UsageError otherwise.
ListenAddress parse_listen_address(const std::string& text);

class PrometheusExporter {
public:
    // Starts listening; throws Error when the address cannot be bound.
    // top_cgroups > 0 adds per-cgroup series (at most that many cgroups);
    // operator_labels go on lockscope_build_info (record --prometheus-label);
    // web is record --web-config's TLS and basic auth (empty: plain HTTP).
    PrometheusExporter(const std::string& address, size_t top_n, size_t top_cgroups = 0,
                       const std::map<std::string, std::string>& operator_labels = {}, const WebConfig& web = {});
    ~PrometheusExporter();
    PrometheusExporter(const PrometheusExporter&) = delete;
    PrometheusExporter& operator=(const PrometheusExporter&) = delete;

    // From the recording thread; scrapes read concurrently.
    void add_interval(const IntervalBatch& batch, const std::vector<LockInfo>& locks);

    // "http://127.0.0.1:9464/metrics" (https with TLS), with the port actually bound.
    const std::string& url() const { return url_; }

private:
    std::shared_ptr<StateCollectable> state_;
    std::unique_ptr<prometheus::Exposer> exposer_;
    std::string url_;
};

}  // namespace lockscope::metrics
