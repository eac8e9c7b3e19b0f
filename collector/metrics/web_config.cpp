#include "metrics/web_config.h"

#include <crypt.h>
#include <openssl/crypto.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <set>

#include "core/error.h"

namespace lockscope::metrics {

namespace {

namespace fs = std::filesystem;

[[noreturn]] void refuse(const std::string& path, const std::string& what)
{
    throw Error("web config " + path + ": " + what, "");
}

// Every key of MAP must be in KNOWN; SUPPORTED ones are accepted, the rest
// of KNOWN are exporter-toolkit fields this server cannot honour.
void check_keys(const std::string& path, const YAML::Node& map, const std::string& where,
                const std::set<std::string>& supported, const std::set<std::string>& known_unsupported)
{
    if (!map.IsMap())
        refuse(path, where + " must be a mapping of fields");
    for (const auto& kv : map) {
        const std::string key = kv.first.as<std::string>();
        if (supported.count(key))
            continue;
        if (known_unsupported.count(key))
            refuse(path, where + "." + key + " is not supported by lockscope's exporter; remove it");
        refuse(path, "unknown field " + where + "." + key);
    }
}

std::string scalar(const std::string& path, const YAML::Node& node, const std::string& where)
{
    if (!node.IsScalar())
        refuse(path, where + " must be a string");
    return node.as<std::string>();
}

// exporter-toolkit resolves relative paths against the file's directory.
std::string resolve(const std::string& config_path, const std::string& file)
{
    if (file.empty() || fs::path(file).is_absolute())
        return file;
    return (fs::path(config_path).parent_path() / file).lexically_normal().string();
}

struct FileCloser {
    void operator()(FILE* f) const { std::fclose(f); }
};

std::unique_ptr<FILE, FileCloser> open_pem(const std::string& path, const std::string& field, const std::string& file)
{
    std::unique_ptr<FILE, FileCloser> f(std::fopen(file.c_str(), "re"));
    if (!f)
        refuse(path, "cannot read " + field + " " + file + ": " + std::strerror(errno));
    return f;
}

// The server would say only "cannot start": find the culprit here, with
// OpenSSL's own PEM readers.
void check_certificate_and_key(const std::string& path, const WebConfig::Tls& tls)
{
    auto cert_file = open_pem(path, "cert_file", tls.cert_file);
    std::unique_ptr<X509, decltype(&X509_free)> cert(PEM_read_X509(cert_file.get(), nullptr, nullptr, nullptr),
                                                     X509_free);
    if (!cert)
        refuse(path, "cert_file " + tls.cert_file + " holds no PEM certificate");
    auto key_file = open_pem(path, "key_file", tls.key_file);
    std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(
        PEM_read_PrivateKey(key_file.get(), nullptr, nullptr, nullptr), EVP_PKEY_free);
    if (!key)
        refuse(path, "key_file " + tls.key_file + " holds no unencrypted PEM private key");
    if (X509_check_private_key(cert.get(), key.get()) != 1)
        refuse(path, "key_file " + tls.key_file + " is not the key of cert_file " + tls.cert_file);
    if (!tls.client_ca_file.empty()) {
        auto ca_file = open_pem(path, "client_ca_file", tls.client_ca_file);
        std::unique_ptr<X509, decltype(&X509_free)> ca(PEM_read_X509(ca_file.get(), nullptr, nullptr, nullptr),
                                                       X509_free);
        if (!ca)
            refuse(path, "client_ca_file " + tls.client_ca_file + " holds no PEM certificate");
    }
}

WebConfig::Tls parse_tls(const std::string& path, const YAML::Node& node)
{
    check_keys(path, node, "tls_server_config",
               {"cert_file", "key_file", "client_auth_type", "client_ca_file", "min_version", "max_version"},
               {"cert", "key", "client_ca", "client_allowed_sans", "cipher_suites", "curve_preferences",
                "prefer_server_cipher_suites"});
    WebConfig::Tls tls;
    if (node["cert_file"])
        tls.cert_file = resolve(path, scalar(path, node["cert_file"], "tls_server_config.cert_file"));
    if (node["key_file"])
        tls.key_file = resolve(path, scalar(path, node["key_file"], "tls_server_config.key_file"));
    if (tls.cert_file.empty() || tls.key_file.empty())
        refuse(path, "tls_server_config needs both cert_file and key_file");
    if (node["client_ca_file"])
        tls.client_ca_file = resolve(path, scalar(path, node["client_ca_file"], "tls_server_config.client_ca_file"));
    if (node["client_auth_type"]) {
        const std::string t = scalar(path, node["client_auth_type"], "tls_server_config.client_auth_type");
        if (t == "RequestClientCert" || t == "RequireAnyClientCert" || t == "RequireClientCert")
            refuse(path, "client_auth_type " + t +
                             " (a client certificate taken without verifying it) is not supported; use "
                             "RequireAndVerifyClientCert or VerifyClientCertIfGiven with client_ca_file");
        if (!t.empty() && t != "NoClientCert" && t != "VerifyClientCertIfGiven" && t != "RequireAndVerifyClientCert")
            refuse(path, "client_auth_type '" + t + "' is not one of exporter-toolkit's");
        if (!t.empty())
            tls.client_auth_type = t;
    }
    const bool verifies = tls.client_auth_type != "NoClientCert";
    if (verifies && tls.client_ca_file.empty())
        refuse(path, "client_auth_type " + tls.client_auth_type + " needs client_ca_file");
    if (!verifies && !tls.client_ca_file.empty())
        refuse(path, "client_ca_file is set but client_auth_type is NoClientCert");
    static const std::set<std::string> versions{"TLS10", "TLS11", "TLS12", "TLS13"};
    if (node["min_version"]) {
        tls.min_version = scalar(path, node["min_version"], "tls_server_config.min_version");
        if (!versions.count(tls.min_version))
            refuse(path, "min_version '" + tls.min_version + "' is not one of TLS10, TLS11, TLS12, TLS13");
    }
    // The server cannot cap the version below the newest one OpenSSL has.
    if (node["max_version"]) {
        const std::string max = scalar(path, node["max_version"], "tls_server_config.max_version");
        if (max != "TLS13")
            refuse(path, "max_version '" + max + "' is not supported (only TLS13, the newest, which is the default)");
    }
    check_certificate_and_key(path, tls);
    return tls;
}

}  // namespace

WebConfig load_web_config(const std::string& path)
{
    YAML::Node root;
    try {
        root = YAML::LoadFile(path);
    } catch (const YAML::BadFile&) {
        refuse(path, std::string("cannot read it: ") + std::strerror(errno ? errno : ENOENT));
    } catch (const YAML::Exception& e) {
        refuse(path, "not valid YAML at line " + std::to_string(e.mark.line + 1) + ": " + e.msg);
    }
    WebConfig config;
    if (root.IsNull())
        return config;  // an empty file, as exporter-toolkit: plain HTTP, no auth
    try {
        check_keys(path, root, "(top level)", {"tls_server_config", "basic_auth_users", "http_server_config"}, {});
        if (root["tls_server_config"] && !root["tls_server_config"].IsNull())
            config.tls = parse_tls(path, root["tls_server_config"]);
        if (const YAML::Node http = root["http_server_config"]; http && !http.IsNull()) {
            check_keys(path, http, "http_server_config", {"http2"}, {"headers"});
            if (http["http2"] && http["http2"].as<bool>())
                refuse(path, "http_server_config.http2: true is not supported (the server speaks HTTP/1.1)");
        }
        if (const YAML::Node users = root["basic_auth_users"]; users && !users.IsNull()) {
            if (!users.IsMap())
                refuse(path, "basic_auth_users must map user names to bcrypt hashes");
            for (const auto& kv : users) {
                const std::string user = kv.first.as<std::string>();
                const std::string hash = scalar(path, kv.second, "basic_auth_users." + user);
                if (hash.size() != 60 || hash[0] != '$' || hash[1] != '2' ||
                    std::string("aby").find(hash[2]) == std::string::npos || hash[3] != '$')
                    refuse(path,
                           "basic_auth_users." + user + " is not a bcrypt hash ($2a$, $2b$ or $2y$, 60 characters)");
                if (user.find(':') != std::string::npos)
                    refuse(path, "basic_auth_users: a user name cannot contain ':'");
                config.basic_auth_users[user] = hash;
            }
        }
    } catch (const YAML::Exception& e) {
        refuse(path, "unexpected value at line " + std::to_string(e.mark.line + 1) + ": " + e.msg);
    }
    return config;
}

bool bcrypt_matches(const std::string& hash, const std::string& password)
{
    crypt_data data{};
    const char* out = crypt_r(password.c_str(), hash.c_str(), &data);
    // libxcrypt returns a string starting with '*' on error, never a match.
    return out && out[0] != '*' && std::strlen(out) == hash.size() && CRYPTO_memcmp(out, hash.data(), hash.size()) == 0;
}

}  // namespace lockscope::metrics
