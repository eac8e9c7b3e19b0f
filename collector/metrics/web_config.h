// `record --web-config FILE`: TLS and basic auth for the exporter, in the
// YAML format of Prometheus' exporter-toolkit (--web.config.file of
// node_exporter and the rest), so one file serves every exporter on a host.
// Only what the HTTP server can honour is accepted; any other field is
// refused by name rather than ignored.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace lockscope::metrics {

struct WebConfig {
    struct Tls {
        std::string cert_file;
        std::string key_file;
        // NoClientCert, VerifyClientCertIfGiven or RequireAndVerifyClientCert.
        std::string client_auth_type = "NoClientCert";
        std::string client_ca_file;
        std::string min_version = "TLS12";  // TLS10, TLS11, TLS12 or TLS13
    };
    std::optional<Tls> tls;
    std::map<std::string, std::string> basic_auth_users;  // user -> bcrypt hash
};

// Reads and checks FILE (paths in it are taken relative to its directory, as
// exporter-toolkit does). Throws Error with one sentence naming the file and
// the field when the file cannot be read, is not YAML, or asks for
// something not supported.
WebConfig load_web_config(const std::string& path);

// True when PASSWORD matches HASH ($2a$, $2b$ or $2y$ bcrypt), via libcrypt.
bool bcrypt_matches(const std::string& hash, const std::string& password);

}  // namespace lockscope::metrics
