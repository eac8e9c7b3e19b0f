// The web-config file of `record --web-config`: what exporter-toolkit's
// format allows and lockscope honours is read; anything else is refused
// at start with one sentence that names the file and the field.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "core/error.h"
#include "metrics/web_config.h"
#include "temp_dir.h"

namespace lockscope::metrics {
namespace {

using lockscope::testing::TempDir;

// htpasswd -nbBC 4 scraper 'correct horse'
constexpr const char* kHash = "$2y$04$bwBu1BM4gMZC967f9zePg.Cg3JbYFopZaVTdHbw/E5IRC22vyxMRK";

class WebConfigTest : public ::testing::Test {
protected:
    void SetUp() override
    {
        // A real certificate and key, from the openssl command a user would run.
        const std::string cmd = "cd '" + dir_.path().string() +
                                "' && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
                                "-keyout key.pem -out cert.pem -days 2 -subj /CN=localhost >/dev/null 2>&1 && "
                                "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
                                "-keyout other-key.pem -out other.pem -days 2 -subj /CN=other >/dev/null 2>&1";
        ASSERT_EQ(std::system(cmd.c_str()), 0) << "openssl could not make a test certificate";
    }

    std::string write(const std::string& yaml)
    {
        const std::string path = (dir_.path() / "web.yml").string();
        std::ofstream(path) << yaml;
        return path;
    }

    // The sentence a user would read, or "" when the file is accepted.
    std::string refusal(const std::string& yaml)
    {
        try {
            load_web_config(write(yaml));
        } catch (const Error& e) {
            return e.what();
        }
        return "";
    }

    TempDir dir_;
};

TEST_F(WebConfigTest, ReadsTlsAndUsersWithPathsRelativeToTheFile)
{
    const WebConfig c = load_web_config(write(std::string("tls_server_config:\n"
                                                          "  cert_file: cert.pem\n"
                                                          "  key_file: key.pem\n"
                                                          "  client_auth_type: RequireAndVerifyClientCert\n"
                                                          "  client_ca_file: other.pem\n"
                                                          "  min_version: TLS13\n"
                                                          "basic_auth_users:\n"
                                                          "  scraper: ") +
                                              kHash + "\n"));
    ASSERT_TRUE(c.tls);
    EXPECT_EQ(c.tls->cert_file, (dir_.path() / "cert.pem").string());
    EXPECT_EQ(c.tls->key_file, (dir_.path() / "key.pem").string());
    EXPECT_EQ(c.tls->client_ca_file, (dir_.path() / "other.pem").string());
    EXPECT_EQ(c.tls->client_auth_type, "RequireAndVerifyClientCert");
    EXPECT_EQ(c.tls->min_version, "TLS13");
    ASSERT_EQ(c.basic_auth_users.size(), 1u);
    EXPECT_EQ(c.basic_auth_users.at("scraper"), kHash);
}

TEST_F(WebConfigTest, TlsDefaultsToTls12AndNoClientCertificate)
{
    const WebConfig c = load_web_config(write("tls_server_config:\n  cert_file: cert.pem\n  key_file: key.pem\n"));
    ASSERT_TRUE(c.tls);
    EXPECT_EQ(c.tls->min_version, "TLS12");
    EXPECT_EQ(c.tls->client_auth_type, "NoClientCert");
    EXPECT_TRUE(c.basic_auth_users.empty());
}

TEST_F(WebConfigTest, AnEmptyFileMeansPlainHttpAsInExporterToolkit)
{
    const WebConfig c = load_web_config(write(""));
    EXPECT_FALSE(c.tls);
    EXPECT_TRUE(c.basic_auth_users.empty());
}

TEST_F(WebConfigTest, BadFilesAreRefusedWithASentenceNamingTheField)
{
    const std::string tls = "tls_server_config:\n  cert_file: cert.pem\n  key_file: key.pem\n";
    const struct {
        std::string yaml;
        std::string says;
    } cases[] = {
        {"tls_server_config: [unclosed\n", "not valid YAML at line"},
        {"tls_server_confg:\n  cert_file: cert.pem\n", "unknown field (top level).tls_server_confg"},
        {"tls_server_config:\n  cert_file: cert.pem\n", "needs both cert_file and key_file"},
        {"tls_server_config:\n  cert_file: missing.pem\n  key_file: key.pem\n", "cannot read cert_file"},
        {"tls_server_config:\n  cert_file: key.pem\n  key_file: key.pem\n", "holds no PEM certificate"},
        {"tls_server_config:\n  cert_file: cert.pem\n  key_file: other-key.pem\n", "is not the key of cert_file"},
        {tls + "  cipher_suites: [TLS_AES_128_GCM_SHA256]\n", "cipher_suites is not supported"},
        {tls + "  client_allowed_sans: [a]\n", "client_allowed_sans is not supported"},
        {tls + "  client_auth_type: RequireAnyClientCert\n", "RequireAnyClientCert"},
        {tls + "  client_auth_type: Sometimes\n", "'Sometimes' is not one of exporter-toolkit's"},
        {tls + "  client_auth_type: RequireAndVerifyClientCert\n", "needs client_ca_file"},
        {tls + "  client_ca_file: other.pem\n", "client_auth_type is NoClientCert"},
        {tls + "  min_version: SSL3\n", "min_version 'SSL3'"},
        {tls + "  max_version: TLS12\n", "max_version 'TLS12' is not supported"},
        {"http_server_config:\n  headers:\n    X-Frame-Options: deny\n", "http_server_config.headers is not supported"},
        {"http_server_config:\n  http2: true\n", "http2: true is not supported"},
        {"basic_auth_users:\n  scraper: secret\n", "basic_auth_users.scraper is not a bcrypt hash"},
        {"basic_auth_users: [scraper]\n", "basic_auth_users must map user names"},
    };
    for (const auto& c : cases) {
        const std::string said = refusal(c.yaml);
        EXPECT_NE(said.find(c.says), std::string::npos) << "file:\n" << c.yaml << "said: " << said;
        EXPECT_NE(said.find("web.yml"), std::string::npos) << said;
        EXPECT_EQ(said.find('\n'), std::string::npos) << "not one sentence: " << said;
    }
}

TEST_F(WebConfigTest, AMissingFileIsRefused)
{
    const std::string missing = (dir_.path() / "nothing.yml").string();
    try {
        load_web_config(missing);
        FAIL() << "a missing file was accepted";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("nothing.yml: cannot read it"), std::string::npos) << e.what();
    }
}

TEST(Bcrypt, TheRightPasswordMatchesItsHashAndNothingElseDoes)
{
    EXPECT_TRUE(bcrypt_matches(kHash, "correct horse"));
    EXPECT_FALSE(bcrypt_matches(kHash, "correct horse "));
    EXPECT_FALSE(bcrypt_matches(kHash, ""));
    EXPECT_FALSE(bcrypt_matches("not a hash", "correct horse"));
    // $2b$, the same password and salt: libcrypt treats the variants alike.
    std::string as_2b = kHash;
    as_2b[2] = 'b';
    EXPECT_TRUE(bcrypt_matches(as_2b, "correct horse"));
}

}  // namespace
}  // namespace lockscope::metrics
