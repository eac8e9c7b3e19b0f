#include "core/format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>
#include <sstream>
#include <string_view>

namespace lockscope {
namespace {

// Three significant digits: 1.23, 12.3, 123.
std::string three_digits(double v)
{
    char buf[32];
    if (v < 9.995)
        std::snprintf(buf, sizeof buf, "%.2f", v);
    else if (v < 99.95)
        std::snprintf(buf, sizeof buf, "%.1f", v);
    else
        std::snprintf(buf, sizeof buf, "%.0f", v);
    return buf;
}

}  // namespace

std::string format_duration(double ns, bool compact)
{
    if (!std::isfinite(ns) || ns < 0)
        return "-";
    const char* sep = compact ? "" : " ";
    if (ns > 0 && ns < 9.995) {  // sub-10 ns values (a wait per op) keep 3 digits, never "0ns"
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.3g%sns", ns, sep);
        return buf;
    }
    if (ns < 999.5)
        return std::to_string(int64_t(std::llround(ns))) + sep + "ns";
    if (ns < 999.5e3)
        return three_digits(ns / 1e3) + sep + "µs";
    if (ns < 999.5e6)
        return three_digits(ns / 1e6) + sep + "ms";
    if (ns < 999.5e9)
        return three_digits(ns / 1e9) + sep + "s";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f%ss", ns / 1e9, sep);
    return buf;
}

std::string format_count(uint64_t n)
{
    std::string digits = std::to_string(n), out;
    for (size_t i = 0; i < digits.size(); ++i) {
        if (i && (digits.size() - i) % 3 == 0)
            out += ',';
        out += digits[i];
    }
    return out;
}

std::string format_count_short(double n)
{
    if (!std::isfinite(n) || n < 0)
        return "-";
    if (n < 999.5)
        return std::to_string(int64_t(std::llround(n)));
    static const char* const suffixes[] = {"k", "M", "G", "T", "P", "E"};
    int i = 0;
    n /= 1e3;
    while (n >= 999.5 && i < 5) {
        n /= 1e3;
        ++i;
    }
    return three_digits(n) + suffixes[i];
}

std::string format_rate(double per_second, const std::string& unit)
{
    if (!std::isfinite(per_second) || per_second < 0)
        return "-";
    std::string suffix = unit.empty() ? "/s" : " " + unit + "/s";
    if (per_second < 999.5) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.1f", per_second);
        return buf + suffix;
    }
    return format_count_short(per_second) + suffix;
}

std::string format_percent(double fraction, int decimals)
{
    if (!std::isfinite(fraction))
        return "-";
    char buf[32];
    const double percent = fraction * 100.0;
    // A value that is not zero never prints as zero: below what `decimals`
    // can show, two significant digits ("0.47%" where "0%" would hide 69
    // failures in 14,694 attempts).
    if (percent != 0 && std::fabs(percent) < 0.5 * std::pow(10.0, -decimals)) {
        if (std::fabs(percent) < 1e-4)
            return percent < 0 ? "-0.0001%" : "<0.0001%";
        std::snprintf(buf, sizeof buf, "%.2g%%", percent);
        return buf;
    }
    std::snprintf(buf, sizeof buf, "%.*f%%", decimals, percent);
    return buf;
}

std::string format_percent_cell(double fraction)
{
    if (!std::isfinite(fraction))
        return "-";
    const double p = fraction * 100.0;
    char buf[16];
    if (p == 0)
        return "0%";
    if (p < 0.005)
        return "<.01%";
    std::snprintf(buf, sizeof buf, p < 0.995 ? "%.2f%%" : p < 9.95 ? "%.1f%%" : "%.0f%%", p);
    return buf;
}

bool natural_less(const std::string& a, const std::string& b)
{
    const auto digit = [](char c) { return c >= '0' && c <= '9'; };
    size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        if (!digit(a[i]) || !digit(b[j])) {
            if (a[i] != b[j])
                return a[i] < b[j];
            ++i;
            ++j;
            continue;
        }
        // Two numbers: without leading zeros, the shorter is the smaller,
        // and of equal lengths the first digit that differs decides.
        while (i + 1 < a.size() && a[i] == '0' && digit(a[i + 1]))
            ++i;
        while (j + 1 < b.size() && b[j] == '0' && digit(b[j + 1]))
            ++j;
        size_t ie = i, je = j;
        while (ie < a.size() && digit(a[ie]))
            ++ie;
        while (je < b.size() && digit(b[je]))
            ++je;
        const std::string_view na(a.data() + i, ie - i), nb(b.data() + j, je - j);
        if (na.size() != nb.size())
            return na.size() < nb.size();
        if (na != nb)
            return na < nb;
        i = ie;
        j = je;
    }
    return a.size() - i < b.size() - j;
}

std::string format_local_now(const char* format)
{
    const time_t now = time(nullptr);
    tm local{};
    localtime_r(&now, &local);
    char buf[64];
    return std::string(buf, strftime(buf, sizeof buf, format, &local));
}

std::string format_decimal(double v)
{
    if (!std::isfinite(v))
        return v != v ? "nan" : v < 0 ? "-inf" : "inf";
    if (v == 0)
        return "0";
    constexpr int kSignificant = 6;
    const int decimals = std::clamp(kSignificant - 1 - int(std::floor(std::log10(std::fabs(v)))), 0, 30);
    char buf[400];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    std::string out = buf;
    if (out.find('.') != std::string::npos) {
        out.erase(out.find_last_not_of('0') + 1);
        if (out.back() == '.')
            out.pop_back();
    }
    return out == "-0" ? "0" : out;
}

std::vector<int> whole_percents(const std::vector<uint64_t>& parts)
{
    std::vector<int> out(parts.size(), 0);
    long double total = 0;
    for (uint64_t p : parts)
        total += (long double)p;
    if (total <= 0)
        return out;
    std::vector<std::pair<long double, size_t>> remainders;
    int given = 0;
    for (size_t i = 0; i < parts.size(); ++i) {
        const long double exact = (long double)parts[i] * 100 / total;
        out[i] = int(exact);
        given += out[i];
        remainders.push_back({exact - out[i], i});
    }
    std::stable_sort(remainders.begin(), remainders.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    for (size_t k = 0; given < 100 && k < remainders.size(); ++k, ++given)
        ++out[remainders[k].second];
    return out;
}

size_t display_width(const std::string& s)
{
    size_t w = 0;
    for (unsigned char c : s)
        if ((c & 0xC0) != 0x80)
            ++w;
    return w;
}

std::string truncate_display(const std::string& s, size_t width)
{
    if (display_width(s) <= width)
        return s;
    if (width == 0)
        return {};
    std::string out;
    size_t w = 0;
    for (size_t i = 0; i < s.size(); ++i) {
        unsigned char c = static_cast<unsigned char>(s[i]);
        if ((c & 0xC0) != 0x80 && ++w > width - 1)
            break;
        out += s[i];
    }
    return out + "…";
}

namespace {

// Byte offsets where each code point of UTF-8 text starts, and the end.
std::vector<size_t> code_point_starts(const std::string& s)
{
    std::vector<size_t> starts;
    for (size_t i = 0; i < s.size(); ++i)
        if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80)
            starts.push_back(i);
    starts.push_back(s.size());
    return starts;
}

// The longest end of `s` that starts at a word boundary and is at most
// `limit` columns; 0 when none is.
size_t boundary_tail(const std::string& s, size_t limit)
{
    const std::vector<size_t> starts = code_point_starts(s);
    const size_t columns = starts.size() - 1;
    for (size_t tail = std::min(limit, columns); tail > 0; --tail)
        if (std::string_view(". _-#>:/[(").find(s[starts[columns - tail]]) != std::string_view::npos)
            return tail;
    return 0;
}

// Whether names that differ print differently.
bool kept_apart(const std::vector<std::string>& names, const std::vector<std::string>& printed)
{
    std::map<std::string, const std::string*> seen;
    for (size_t i = 0; i < names.size(); ++i) {
        auto [it, inserted] = seen.emplace(printed[i], &names[i]);
        if (!inserted && *it->second != names[i])
            return false;
    }
    return true;
}

}  // namespace

std::string truncate_middle(const std::string& s, size_t width, size_t tail)
{
    if (display_width(s) <= width)
        return s;
    if (width == 0)
        return {};
    const std::vector<size_t> starts = code_point_starts(s);
    const size_t columns = starts.size() - 1;
    tail = std::min(tail, width - 1);
    const size_t head = width - 1 - tail;
    return s.substr(0, starts[head]) + "…" + s.substr(starts[columns - tail]);
}

std::optional<std::vector<std::string>> cut_apart(const std::vector<std::string>& names, size_t width)
{
    // A cut leaves at least this much of the head, where it can.
    constexpr size_t kMinHead = 3;
    std::vector<std::string> printed;
    for (const std::string& name : names) {
        const size_t room = width > kMinHead + 1 ? width - 1 - kMinHead : width / 2;
        const size_t tail = boundary_tail(name, room);
        printed.push_back(truncate_middle(name, width, tail ? tail : width / 2));
    }
    if (kept_apart(names, printed))
        return printed;
    // Names that differ only where the cut fell: the same cut for all, with
    // ever less of the end, until one keeps them apart.
    for (size_t tail = width > 1 ? width - 2 : 0;; --tail) {
        for (size_t i = 0; i < names.size(); ++i)
            printed[i] = truncate_middle(names[i], width, tail);
        if (kept_apart(names, printed))
            return printed;
        if (tail == 0)
            return std::nullopt;
    }
}

std::string wrap_text(const std::string& text, const std::string& first, size_t indent, size_t width)
{
    std::string out = first, word;
    size_t column = display_width(first);
    std::istringstream words(text);
    bool line_start = true;
    while (words >> word) {
        const size_t w = display_width(word);
        if (!line_start && column + 1 + w > width) {
            out += '\n' + std::string(indent, ' ');
            column = indent;
            line_start = true;
        }
        if (!line_start) {
            out += ' ';
            ++column;
        }
        out += word;
        column += w;
        line_start = false;
    }
    return out + '\n';
}

std::optional<double> parse_duration_s(const std::string& text)
{
    size_t used = 0;
    double value = -1;
    try {
        value = std::stod(text, &used);
    } catch (const std::exception&) {
        return std::nullopt;
    }
    static const std::map<std::string, double> scale{{"", 1},     {"s", 1},     {"m", 60},
                                                     {"h", 3600}, {"d", 86400}, {"w", 604800}};
    auto unit = scale.find(text.substr(used));
    if (unit == scale.end() || !(value > 0) || !std::isfinite(value))
        return std::nullopt;
    return value * unit->second;
}

std::string csv_field(const std::string& text, const std::string& separator)
{
    if (text.find(separator) == std::string::npos && text.find_first_of("\"\r\n") == std::string::npos)
        return text;
    std::string out = "\"";
    for (char ch : text)
        out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    return out + '"';
}

std::string function_of(const std::string& frame)
{
    return frame.substr(0, frame.find('+'));
}

}  // namespace lockscope
