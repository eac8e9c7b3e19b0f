// A real Prometheus server (Debian's /usr/bin/prometheus) on a free loopback
// port, for the tests that check what lockscope's series look like once
// scraped, joined and queried: started with a scrape configuration, or
// over a TSDB that `promtool tsdb create-blocks-from openmetrics` built.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "subprocess.h"

namespace lockscope::test {

unsigned free_port();

// Body of an HTTP/1.0 GET on loopback; "" when nothing answers or not 200.
std::string http_get(unsigned port, const std::string& target);
std::string url_encode(const std::string& s);
bool wait_until(const std::function<bool()>& ready, double timeout_s);

// Writes DIR/prometheus.yml: job "lockscope" scrapes these loopback ports
// every second. Returns its path.
std::filesystem::path scrape_every_second(const std::filesystem::path& dir, const std::vector<unsigned>& ports);

class PrometheusServer {
public:
    // Serves `data` (a TSDB directory) and scrapes what `config` lists.
    // Throws std::runtime_error when it does not become ready.
    PrometheusServer(const std::filesystem::path& config, const std::filesystem::path& data);

    unsigned port() const { return port_; }
    std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
    // GET /api/v1/query (an instant query at `time`, "" for now): the parsed answer.
    nlohmann::json query(const std::string& promql, const std::string& time = "") const;

private:
    unsigned port_;
    Process process_;
};

}  // namespace lockscope::test
