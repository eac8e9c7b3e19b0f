#include "prometheus_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <thread>

namespace lockscope::test {

unsigned free_port()
{
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0)
        throw std::runtime_error("cannot find a free port");
    close(fd);
    return ntohs(a.sin_port);
}

std::string http_get(unsigned port, const std::string& target)
{
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(uint16_t(port));
    std::string response;
    if (fd >= 0 && connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
        const std::string request = "GET " + target + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
        if (write(fd, request.data(), request.size()) == ssize_t(request.size())) {
            char buf[65536];
            ssize_t n;
            while ((n = read(fd, buf, sizeof buf)) > 0)
                response.append(buf, size_t(n));
        }
    }
    if (fd >= 0)
        close(fd);
    const size_t body = response.find("\r\n\r\n");
    if (response.compare(0, 12, "HTTP/1.0 200") != 0 && response.compare(0, 12, "HTTP/1.1 200") != 0)
        return {};
    return body == std::string::npos ? std::string() : response.substr(body + 4);
}

std::string url_encode(const std::string& s)
{
    std::string out;
    for (unsigned char c : s) {
        if (isalnum(c) || c == '_' || c == '.' || c == '-' || c == '~') {
            out += char(c);
        } else {
            char hex[4];
            std::snprintf(hex, sizeof hex, "%%%02X", c);
            out += hex;
        }
    }
    return out;
}

bool wait_until(const std::function<bool()>& ready, double timeout_s)
{
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    while (!ready()) {
        if (std::chrono::steady_clock::now() > deadline)
            return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return true;
}

std::filesystem::path scrape_every_second(const std::filesystem::path& dir, const std::vector<unsigned>& ports)
{
    const std::filesystem::path config = dir / "prometheus.yml";
    std::ofstream out(config);
    out << "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
           "scrape_configs:\n  - job_name: lockscope\n    static_configs:\n      - targets: [";
    for (size_t i = 0; i < ports.size(); ++i)
        out << (i ? ", " : "") << "'127.0.0.1:" << ports[i] << "'";
    out << "]\n";
    return config;
}

PrometheusServer::PrometheusServer(const std::filesystem::path& config, const std::filesystem::path& data)
    : port_(free_port()),
      process_(Process::start({"/usr/bin/prometheus", "--config.file=" + config.string(),
                               "--storage.tsdb.path=" + data.string(), "--storage.tsdb.retention.time=10y",
                               "--web.listen-address=127.0.0.1:" + std::to_string(port_), "--log.level=warn"}))
{
    if (!wait_until([&] { return !http_get(port_, "/-/ready").empty(); }, 60))
        throw std::runtime_error("Prometheus did not become ready: " + process_.stderr_so_far());
}

nlohmann::json PrometheusServer::query(const std::string& promql, const std::string& time) const
{
    const std::string body = http_get(
        port_, "/api/v1/query?query=" + url_encode(promql) + (time.empty() ? "" : "&time=" + url_encode(time)));
    return body.empty() ? nlohmann::json() : nlohmann::json::parse(body);
}

}  // namespace lockscope::test
