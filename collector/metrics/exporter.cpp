#include "metrics/exporter.h"

#include <dlfcn.h>
#include <malloc.h>
#include <openssl/evp.h>
#include <sys/mman.h>
#include <unistd.h>

#include <prometheus/collectable.h>
#include <prometheus/exposer.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>

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

namespace {

// civetweb's threads: each connection holds one until its request is served
// or request_timeout_ms passes, so a few slow clients cannot starve the rest.
constexpr int kServerThreads = 16;
constexpr const char* kRequestTimeoutMs = "10000";  // Prometheus' default scrape timeout

// Loads the soname stand-ins civetweb needs to use OpenSSL 3 (see
// tls_compat/ssl_names.c), found relative to the running program:
// <prefix>/lib/lockscope for /usr/bin/lockscope, <build>/lib/lockscope for the
// build tree's program.
void load_tls_compat()
{
    std::error_code ec;
    const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec)
        throw Error("cannot find the running program for the exporter's TLS", "/proc/self/exe", ec.value());
    const std::filesystem::path bin = exe.parent_path();
    const std::vector<std::filesystem::path> dirs = {bin.parent_path() / LOCKSCOPE_TLS_COMPAT_DIR,
                                                     bin / LOCKSCOPE_TLS_COMPAT_DIR};
    for (const std::filesystem::path& dir : dirs) {
        const std::string crypto = (dir / "liblockscope-tls-crypto.so").string();
        const std::string ssl = (dir / "liblockscope-tls-ssl.so").string();
        if (access(ssl.c_str(), R_OK) != 0 || access(crypto.c_str(), R_OK) != 0)
            continue;
        if (dlopen(crypto.c_str(), RTLD_NOW | RTLD_GLOBAL) && dlopen(ssl.c_str(), RTLD_NOW | RTLD_GLOBAL))
            return;
        throw Error("cannot load OpenSSL for the exporter's TLS", ssl, 0, dlerror());
    }
    throw Error("cannot find liblockscope-tls-ssl.so for the exporter's TLS", dirs.front().string(), ENOENT,
                "reinstall the lockscope package");
}

std::string read_file(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// civetweb wants key and certificate in one PEM file, exporter-toolkit has
// two: join them in memory (never on disk) for the server's start.
class JoinedPem {
public:
    JoinedPem(const std::string& key_file, const std::string& cert_file)
        : fd_(memfd_create("lockscope-tls", MFD_CLOEXEC))
    {
        const std::string pem = read_file(key_file) + "\n" + read_file(cert_file);
        if (fd_ < 0 || write(fd_, pem.data(), pem.size()) != ssize_t(pem.size()))
            throw Error("cannot hold the TLS key in memory", "memfd", errno);
    }
    ~JoinedPem() { close(fd_); }
    JoinedPem(const JoinedPem&) = delete;
    JoinedPem& operator=(const JoinedPem&) = delete;
    std::string path() const { return "/proc/self/fd/" + std::to_string(fd_); }

private:
    int fd_;
};

std::string protocol_version(const std::string& min_version)
{
    // civetweb's ssl_protocol_version: 2 TLS 1.0+, 3 TLS 1.1+, 4 TLS 1.2+, 5 TLS 1.3.
    if (min_version == "TLS10")
        return "2";
    if (min_version == "TLS11")
        return "3";
    if (min_version == "TLS13")
        return "5";
    return "4";
}

// bcrypt costs tens of milliseconds a check: a scraper that sent the right
// password once is let in by a digest of what it sent, as exporter-toolkit
// caches it, so scrapes do not take the recorder's CPU.
class BasicAuth {
public:
    explicit BasicAuth(std::map<std::string, std::string> users) : users_(std::move(users)) {}

    bool check(const std::string& user, const std::string& password)
    {
        const std::string key = digest(user + '\0' + password);
        {
            std::lock_guard lock(mutex_);
            if (accepted_.count(key))
                return true;
        }
        const auto it = users_.find(user);
        // An unknown user costs the same as a wrong password.
        const bool ok =
            bcrypt_matches(it == users_.end() ? users_.begin()->second : it->second, password) && it != users_.end();
        if (ok) {
            std::lock_guard lock(mutex_);
            if (accepted_.size() >= 1024)
                accepted_.clear();
            accepted_.insert(key);
        }
        return ok;
    }

private:
    static std::string digest(const std::string& text)
    {
        unsigned char md[EVP_MAX_MD_SIZE];
        unsigned int len = 0;
        if (EVP_Digest(text.data(), text.size(), md, &len, EVP_sha256(), nullptr) != 1)
            throw Error("cannot hash a password for the login cache", "sha256");
        return std::string(reinterpret_cast<const char*>(md), len);
    }

    const std::map<std::string, std::string> users_;
    std::mutex mutex_;
    std::set<std::string> accepted_;
};

}  // namespace

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
                                       const std::map<std::string, std::string>& operator_labels, const WebConfig& web)
{
    if (top_n == 0)
        throw UsageError("--prometheus-top must be at least 1");
    const ListenAddress a = parse_listen_address(address);
    // civetweb's listening_ports syntax: "PORT" for every interface.
    // With TLS the port speaks nothing else ('s'): no plain-text answer.
    const std::string bind =
        (a.host.empty() ? std::to_string(a.port) : a.host + ":" + std::to_string(a.port)) + (web.tls ? "s" : "");
    std::vector<std::string> options{"listening_ports",    bind,
                                     "num_threads",        std::to_string(kServerThreads),
                                     "request_timeout_ms", kRequestTimeoutMs};
    std::unique_ptr<JoinedPem> pem;
    if (web.tls) {
        load_tls_compat();
        pem = std::make_unique<JoinedPem>(web.tls->key_file, web.tls->cert_file);
        options.insert(options.end(), {"ssl_certificate", pem->path(), "ssl_certificate_chain", web.tls->cert_file,
                                       "ssl_protocol_version", protocol_version(web.tls->min_version)});
        if (web.tls->client_auth_type != "NoClientCert")
            options.insert(
                options.end(),
                {"ssl_verify_peer", web.tls->client_auth_type == "RequireAndVerifyClientCert" ? "yes" : "optional",
                 "ssl_ca_file", web.tls->client_ca_file});
    }
    state_ = std::make_shared<StateCollectable>(top_n, build_info_labels(collect_host_metadata(), operator_labels),
                                                top_cgroups);
    try {
        // Each of the server's threads would otherwise get a malloc arena of its
        // own that keeps what a scrape freed: RSS then climbs with scrapes for
        // hours. Two arenas serve 16 threads that each build one response at a
        // time; MALLOC_ARENA_MAX in the environment still decides when set.
        if (!std::getenv("MALLOC_ARENA_MAX"))
            mallopt(M_ARENA_MAX, 2);
        exposer_ = std::make_unique<prometheus::Exposer>(options);
    } catch (const std::exception&) {
        if (web.tls)
            throw Error("cannot serve Prometheus metrics over TLS on " + address, "", 0,
                        "is the port in use, the address not one of this machine's, or a file of the web config "
                        "unreadable to this user?");
        throw Error("cannot serve Prometheus metrics on " + address, "", 0,
                    "is the port in use, or the address not one of this machine's?");
    }
    // Auth first: the profile is never served to an unauthenticated client,
    // not even between these two calls.
    if (!web.basic_auth_users.empty()) {
        auto auth = std::make_shared<BasicAuth>(web.basic_auth_users);
        exposer_->RegisterAuth(
            [auth](const std::string& user, const std::string& password) { return auth->check(user, password); },
            "lockscope");
    }
    exposer_->RegisterCollectable(state_);
    const std::vector<int> ports = exposer_->GetListeningPorts();
    const std::string host = a.host.empty() ? "0.0.0.0" : a.host;
    url_ = std::string(web.tls ? "https://" : "http://") + host + ":" +
           std::to_string(ports.empty() ? int(a.port) : ports.front()) + "/metrics";
}

PrometheusExporter::~PrometheusExporter() = default;

void PrometheusExporter::add_interval(const IntervalBatch& batch, const std::vector<LockInfo>& locks)
{
    state_->add(batch, locks);
}

}  // namespace lockscope::metrics
