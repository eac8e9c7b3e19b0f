#include "fleet/prometheus_api.h"

#include <curl/curl.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <memory>
#include <mutex>

#include "core/error.h"

namespace lockscope::fleet {
namespace {

size_t append_body(char* data, size_t size, size_t count, void* body)
{
    static_cast<std::string*>(body)->append(data, size * count);
    return size * count;
}

std::string escaped(CURL* curl, const std::string& text)
{
    std::unique_ptr<char, decltype(&curl_free)> e(curl_easy_escape(curl, text.c_str(), int(text.size())), curl_free);
    if (!e)
        throw Error("cannot encode a Prometheus query", text);
    return e.get();
}

// libcurl calls this about once a second, and more often while data flows.
int abort_when_cancelled(void* cancelled, curl_off_t, curl_off_t, curl_off_t, curl_off_t)
{
    return cancelled && static_cast<const std::atomic<bool>*>(cancelled)->load() ? 1 : 0;
}

double sample_value(const nlohmann::json& pair)
{
    // Values come as strings: "1.5", "NaN", "+Inf".
    const std::string text = pair.at(1).get<std::string>();
    return std::strtod(text.c_str(), nullptr);
}

}  // namespace

std::string Sample::label(const std::string& name) const
{
    auto it = labels.find(name);
    return it == labels.end() ? std::string() : it->second;
}

PrometheusApi::PrometheusApi(std::string base_url, double timeout_s, const std::atomic<bool>* cancelled)
    : base_url_(std::move(base_url)), timeout_s_(timeout_s), cancelled_(cancelled)
{
    while (!base_url_.empty() && base_url_.back() == '/')
        base_url_.pop_back();
    if (base_url_.rfind("http://", 0) != 0 && base_url_.rfind("https://", 0) != 0)
        throw UsageError("--prometheus takes the server's URL, e.g. http://prometheus:9090, not '" + base_url_ + "'");
    static std::once_flag once;
    std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

std::vector<Sample> PrometheusApi::query(const std::string& promql, double time) const
{
    std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> curl(curl_easy_init(), curl_easy_cleanup);
    if (!curl)
        throw Error("cannot start an HTTP client (libcurl)", base_url_);
    char when[64];
    std::snprintf(when, sizeof when, "%.3f", time);
    const std::string url =
        base_url_ + "/api/v1/query?query=" + escaped(curl.get(), promql) + "&time=" + std::string(when);
    std::string body;
    char curl_error[CURL_ERROR_SIZE] = "";
    curl_easy_setopt(curl.get(), CURLOPT_URL, url.c_str());
    curl_easy_setopt(curl.get(), CURLOPT_WRITEFUNCTION, append_body);
    curl_easy_setopt(curl.get(), CURLOPT_WRITEDATA, &body);
    curl_easy_setopt(curl.get(), CURLOPT_ERRORBUFFER, curl_error);
    curl_easy_setopt(curl.get(), CURLOPT_TIMEOUT_MS, long(timeout_s_ * 1000));
    curl_easy_setopt(curl.get(), CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(curl.get(), CURLOPT_ACCEPT_ENCODING, "");  // gzip: series lists compress well
    curl_easy_setopt(curl.get(), CURLOPT_NOSIGNAL, 1L);
    if (cancelled_) {
        curl_easy_setopt(curl.get(), CURLOPT_XFERINFOFUNCTION, abort_when_cancelled);
        curl_easy_setopt(curl.get(), CURLOPT_XFERINFODATA, const_cast<std::atomic<bool>*>(cancelled_));
        curl_easy_setopt(curl.get(), CURLOPT_NOPROGRESS, 0L);
    }
    const CURLcode rc = curl_easy_perform(curl.get());
    if (rc == CURLE_ABORTED_BY_CALLBACK || (cancelled_ && cancelled_->load()))
        throw Error("cancelled", base_url_);
    if (rc != CURLE_OK)
        throw Error("cannot query Prometheus at " + base_url_, curl_error[0] ? curl_error : curl_easy_strerror(rc), 0,
                    "is the server up, and is --prometheus its URL (http://HOST:9090, or the query front end's "
                    "Prometheus prefix for Thanos or Mimir)?");
    long status = 0;
    curl_easy_getinfo(curl.get(), CURLINFO_RESPONSE_CODE, &status);
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(body);
    } catch (const std::exception&) {
        throw Error("Prometheus at " + base_url_ + " answered HTTP " + std::to_string(status) + " without JSON",
                    body.substr(0, 200), 0, "is --prometheus the URL of a Prometheus query API?");
    }
    if (j.value("status", "") != "success")
        throw Error("Prometheus refused the query " + promql, j.value("error", "HTTP " + std::to_string(status)));
    const nlohmann::json& data = j.at("data");
    std::vector<Sample> out;
    if (data.value("resultType", "") == "scalar") {
        out.push_back({{}, sample_value(data.at("result"))});
        return out;
    }
    for (const nlohmann::json& r : data.at("result")) {
        Sample s;
        for (const auto& [name, value] : r.at("metric").items())
            s.labels[name] = value.get<std::string>();
        s.value = sample_value(r.at("value"));
        out.push_back(std::move(s));
    }
    return out;
}

}  // namespace lockscope::fleet
