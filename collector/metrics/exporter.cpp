#include "metrics/exporter.h"

#include <prometheus/collectable.h>
#include <prometheus/exposer.h>

#include <cstdlib>
#include <mutex>

#include "core/error.h"
#include "core/host/metadata.h"
#include "metrics/exposition.h"

namespace lockscope::metrics {

// Shares MetricsState between the recorder (writer) and the HTTP threads.
class StateCollectable : public prometheus::Collectable {
public:
    StateCollectable(size_t top_n, std::map<std::string, std::string> build_labels, size_t top_cgroups)
        : state_(top_n, std::move(build_labels), top_cgroups)
    {
    }
    void add(const IntervalBatch& batch, const std::vector<LockInfo>& locks)
    {
        std::lock_guard lock(mutex_);
        state_.add_interval(batch, locks);
    }
    std::vector<prometheus::MetricFamily> Collect() const override
    {
        std::lock_guard lock(mutex_);
        return state_.families();
    }

private:
    mutable std::mutex mutex_;
    MetricsState state_;
};

ListenAddress parse_listen_address(const std::string& text)
{
    const size_t colon = text.rfind(':');
    const std::string bad = "invalid --prometheus address '" + text + "': use ADDR:PORT, e.g. 127.0.0.1:9464";
    if (colon == std::string::npos || colon + 1 == text.size())
        throw UsageError(bad);
    ListenAddress a;
    a.host = text.substr(0, colon);
    const std::string port = text.substr(colon + 1);
    if (port.find_first_not_of("0123456789") != std::string::npos || port.size() > 5)
        throw UsageError(bad);
    a.port = unsigned(std::strtoul(port.c_str(), nullptr, 10));
    if (a.port > 65535)
        throw UsageError(bad);
    if (a.host.find_first_of(" ,/") != std::string::npos)
        throw UsageError(bad);
    return a;
}

PrometheusExporter::PrometheusExporter(const std::string& address, size_t top_n, size_t top_cgroups,
                                       const std::map<std::string, std::string>& operator_labels)
{
    if (top_n == 0)
        throw UsageError("--prometheus-top must be at least 1");
    const ListenAddress a = parse_listen_address(address);
    // civetweb's listening_ports syntax: "PORT" for every interface.
    const std::string bind = a.host.empty() ? std::to_string(a.port) : a.host + ":" + std::to_string(a.port);
    state_ = std::make_shared<StateCollectable>(top_n, build_info_labels(collect_host_metadata(), operator_labels),
                                                top_cgroups);
    try {
        exposer_ = std::make_unique<prometheus::Exposer>(bind, 2);
    } catch (const std::exception&) {
        throw Error("cannot serve Prometheus metrics on " + address, "", 0,
                    "is the port in use, or the address not one of this machine's?");
    }
    exposer_->RegisterCollectable(state_);
    const std::vector<int> ports = exposer_->GetListeningPorts();
    const std::string host = a.host.empty() ? "0.0.0.0" : a.host;
    url_ = "http://" + host + ":" + std::to_string(ports.empty() ? int(a.port) : ports.front()) + "/metrics";
}

PrometheusExporter::~PrometheusExporter() = default;

void PrometheusExporter::add_interval(const IntervalBatch& batch, const std::vector<LockInfo>& locks)
{
    state_->add(batch, locks);
}

}  // namespace lockscope::metrics
