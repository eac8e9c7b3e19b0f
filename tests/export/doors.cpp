#include "doors.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <prometheus/text_serializer.h>
#include <zlib.h>

#include <cmath>
#include <set>
#include <sstream>

#include "core/analysis/report_parts.h"
#include "core/format.h"
#include "metrics/exposition.h"
#include "profile.pb.h"

namespace lockscope::doors {
namespace {

using Parts = std::array<uint64_t, 4>;

// RFC 4180 records, as lockscope writes them.
std::vector<std::vector<std::string>> parse_csv(const std::string& text)
{
    std::vector<std::vector<std::string>> rows;
    std::vector<std::string> row;
    std::string field;
    bool quoted = false;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (quoted) {
            if (c == '"' && i + 1 < text.size() && text[i + 1] == '"')
                field += text[++i];
            else if (c == '"')
                quoted = false;
            else
                field += c;
        } else if (c == '"') {
            quoted = true;
        } else if (c == ',' || c == '\n') {
            row.push_back(std::move(field));
            field.clear();
            if (c == '\n')
                rows.push_back(std::exchange(row, {}));
        } else {
            field += c;
        }
    }
    return rows;
}

std::optional<uint64_t> number(const std::string& cell)
{
    if (cell.empty())
        return std::nullopt;
    return std::stoull(cell);
}

std::optional<uint64_t> number(const nlohmann::json& j)
{
    if (j.is_null())
        return std::nullopt;
    return j.get<uint64_t>();
}

// Parts from four optional values: all known, or none.
std::optional<Parts> parts_of(const std::array<std::optional<uint64_t>, 4>& v)
{
    Parts p{};
    for (size_t i = 0; i < 4; ++i) {
        if (!v[i])
            return std::nullopt;
        p[i] = *v[i];
    }
    return p;
}

void add(LockView& into, const LockView& more)
{
    into.contentions += more.contentions;
    if (more.wait_ns)
        into.wait_ns = into.wait_ns.value_or(0) + *more.wait_ns;
    if (more.parts) {
        Parts sum = into.parts.value_or(Parts{});
        for (size_t i = 0; i < 4; ++i)
            sum[i] += (*more.parts)[i];
        into.parts = sum;
    }
}

std::string gunzip(const std::string& gz)
{
    z_stream z{};
    EXPECT_EQ(inflateInit2(&z, 15 + 16), Z_OK);
    std::string out;
    char buf[1 << 16];
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data()));
    z.avail_in = uInt(gz.size());
    int rc;
    do {
        z.next_out = reinterpret_cast<Bytef*>(buf);
        z.avail_out = sizeof buf;
        rc = inflate(&z, Z_NO_FLUSH);
        out.append(buf, sizeof buf - z.avail_out);
    } while (rc == Z_OK);
    EXPECT_EQ(rc, Z_STREAM_END);
    inflateEnd(&z);
    return out;
}

// Seconds as the exposition prints them back to whole nanoseconds.
uint64_t nanoseconds(double seconds)
{
    return uint64_t(std::llround(seconds * 1e9));
}

}  // namespace

std::vector<std::map<std::string, std::string>> csv_records(const std::string& text)
{
    const auto rows = parse_csv(text);
    std::vector<std::map<std::string, std::string>> out;
    for (size_t r = 1; r < rows.size(); ++r) {
        std::map<std::string, std::string>& record = out.emplace_back();
        for (size_t c = 0; c < rows[0].size() && c < rows[r].size(); ++c)
            record[rows[0][c]] = rows[r][c];
    }
    return out;
}

std::string lock_key(const std::string& name, const std::string& kind, const std::string& mode)
{
    return name + " [" + kind + (mode.empty() ? "" : "/" + mode) + "]";
}

std::string user_lock_key(const std::string& name, const std::string& kind)
{
    return name + " [user " + kind + "]";
}

View from_json(const std::string& text)
{
    const nlohmann::json j = nlohmann::json::parse(text);
    View out;
    for (const auto& l : j.at("locks")) {
        LockView v;
        v.contentions = l.at("contentions").get<uint64_t>();
        v.wait_ns = number(l.at("wait_ns"));
        std::array<std::optional<uint64_t>, 4> parts;
        for (size_t i = 0; i < 4; ++i)
            parts[i] = number(l.at(kWaitParts[i].key));
        v.parts = parts_of(parts);
        add(out[lock_key(l.at("name"), l.at("kind"), l.at("mode"))], v);
    }
    if (j.contains("user_locks"))
        for (const auto& l : j["user_locks"].at("rows")) {
            LockView v;
            v.contentions = l.at("waits").get<uint64_t>();
            v.wait_ns = l.at("wait_ns").get<uint64_t>();
            v.parts = parts_of(
                {uint64_t(0), number(l.at("oncpu_ns")), number(l.at("asleep_ns")), number(l.at("runnable_ns"))});
            add(out[user_lock_key(l.at("name"), l.at("kind"))], v);
        }
    return out;
}

namespace {

// A CSV table's rows by lock: `contentions` and the three or four part
// columns name the table's own (a user lock has no spin phases).
View from_csv_rows(const std::string& csv, const char* contentions, const std::vector<const char*>& part_columns,
                   std::string (*key)(const std::map<std::string, std::string>&))
{
    View out;
    for (auto& r : csv_records(csv)) {
        LockView v;
        v.contentions = std::stoull(r.at(contentions));
        v.wait_ns = number(r.at("wait_ns"));
        std::array<std::optional<uint64_t>, 4> parts{uint64_t(0), uint64_t(0), uint64_t(0), uint64_t(0)};
        for (size_t i = 0; i < part_columns.size(); ++i)
            parts[4 - part_columns.size() + i] = number(r.at(part_columns[i]));
        v.parts = parts_of(parts);
        add(out[key(r)], v);
    }
    return out;
}

}  // namespace

View from_csv(const std::string& csv)
{
    std::vector<const char*> parts;
    for (const WaitPart& part : kWaitParts)
        parts.push_back(part.key);
    return from_csv_rows(csv, "contentions", parts,
                         [](const auto& r) { return lock_key(r.at("name"), r.at("kind"), r.at("mode")); });
}

View from_user_locks_csv(const std::string& csv)
{
    return from_csv_rows(csv, "waits", {"oncpu_ns", "asleep_ns", "runnable_ns"},
                         [](const auto& r) { return user_lock_key(r.at("name"), r.at("kind")); });
}

View from_folded(const std::string& wait_lines, const std::string& contention_lines)
{
    View out;
    auto each = [](const std::string& text, auto&& fn) {
        std::istringstream in(text);
        for (std::string line; std::getline(in, line);) {
            const size_t space = line.rfind(' ');
            fn(line.substr(0, line.find(';')), std::stoull(line.substr(space + 1)));
        }
    };
    each(wait_lines,
         [&](const std::string& root, uint64_t w) { out[root].wait_ns = out[root].wait_ns.value_or(0) + w; });
    each(contention_lines, [&](const std::string& root, uint64_t n) { out[root].contentions += n; });
    return out;
}

View from_pprof(const std::string& gzipped)
{
    perftools::profiles::Profile p;
    EXPECT_TRUE(p.ParseFromString(gunzip(gzipped)));
    auto str = [&](int64_t i) { return p.string_table(int(i)); };
    // contentions, delay, then the four parts (export.h)
    EXPECT_EQ(p.sample_type_size(), 6);
    for (int i = 0; i < 4 && p.sample_type_size() == 6; ++i)
        EXPECT_EQ(str(p.sample_type(2 + i).type()), kWaitParts[size_t(i)].name);
    std::map<uint64_t, std::string> function_name;
    for (const auto& f : p.function())
        function_name[f.id()] = str(f.name());
    std::map<uint64_t, uint64_t> function_of_location;
    for (const auto& l : p.location())
        function_of_location[l.id()] = l.line(0).function_id();
    View out;
    for (const auto& s : p.sample()) {
        if (s.value_size() != 6 || s.location_id_size() == 0) {
            ADD_FAILURE() << "a pprof sample without its six values or its root";
            continue;
        }
        EXPECT_EQ(s.value(2) + s.value(3) + s.value(4) + s.value(5), s.value(1))
            << "a pprof sample's parts do not add up to its delay";
        const std::string root = function_name[function_of_location[s.location_id(s.location_id_size() - 1)]];
        add(out[root], {uint64_t(s.value(0)), uint64_t(s.value(1)),
                        Parts{uint64_t(s.value(2)), uint64_t(s.value(3)), uint64_t(s.value(4)), uint64_t(s.value(5))}});
    }
    return out;
}

View from_prometheus(const std::string& exposition)
{
    View out;
    std::istringstream in(exposition);
    for (std::string line; std::getline(in, line);) {
        if (line.empty() || line[0] == '#')
            continue;
        const size_t brace = line.find('{'), close = line.rfind('}');
        if (brace == std::string::npos || close == std::string::npos)
            continue;
        const std::string name = line.substr(0, brace);
        std::map<std::string, std::string> labels;
        for (size_t at = brace + 1; at < close;) {
            const size_t eq = line.find("=\"", at), end = line.find('"', eq + 2);
            labels[line.substr(at, eq - at)] = line.substr(eq + 2, end - eq - 2);
            at = line.find_first_not_of(',', end + 1);
        }
        const double value = std::stod(line.substr(close + 1));
        if (!labels.count("lock") || labels["lock"] == metrics::kOtherLock)
            continue;
        const bool user = name.starts_with("lockscope_user_lock_");
        const std::string key =
            user ? user_lock_key(labels["lock"], labels["kind"]) : labels["lock"] + " [" + labels["kind"] + "]";
        LockView& v = out[key];
        if (name == "lockscope_contentions_total" || name == "lockscope_user_lock_waits_total")
            v.contentions = uint64_t(std::llround(value));
        else if (name == "lockscope_wait_seconds_total" || name == "lockscope_user_lock_wait_seconds_total")
            v.wait_ns = nanoseconds(value);
        else if (name == "lockscope_wait_part_seconds_total" || name == "lockscope_user_lock_wait_part_seconds_total") {
            Parts p = v.parts.value_or(Parts{});
            const std::string part = labels["part"] == "oncpu" ? "queued_on_cpu" : labels["part"];
            for (size_t i = 0; i < 4; ++i)
                if (part == kWaitParts[i].name)
                    p[i] = nanoseconds(value);
            v.parts = p;
        }
    }
    return out;
}

std::string prometheus_of(const Session& session)
{
    metrics::MetricsState state(100000, {{"version", "test"}});
    for (size_t i = 0; i < session.intervals.size(); ++i) {
        const IntervalTotals& in = session.intervals[i];
        IntervalBatch batch;
        batch.totals = in;
        for (const LockInterval& li : session.lock_intervals)
            if (li.run == in.run && li.index == in.index)
                batch.locks.push_back(li);
        const bool last_of_run = i + 1 == session.intervals.size() || session.intervals[i + 1].run != in.run;
        if (last_of_run)
            for (const UserLockRow& row : session.user_locks)
                if (row.run == in.run)
                    batch.user_locks.push_back(row);
        state.add_interval(batch, session.locks);
    }
    return prometheus::TextSerializer().Serialize(state.families());
}

namespace {

// A line as display columns (the text table aligns "µs" as one column).
std::u32string columns_of(const std::string& utf8)
{
    std::u32string out;
    for (size_t i = 0; i < utf8.size();) {
        const unsigned char c = static_cast<unsigned char>(utf8[i]);
        const size_t n = c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
        char32_t cp = n == 1 ? c : c & (0x3f >> (n - 1));
        for (size_t k = 1; k < n && i + k < utf8.size(); ++k)
            cp = (cp << 6) | (static_cast<unsigned char>(utf8[i + k]) & 0x3f);
        out.push_back(cp);
        i += n;
    }
    return out;
}

std::string utf8_of(const std::u32string& s)
{
    std::string out;
    for (char32_t cp : s) {
        if (cp < 0x80) {
            out += char(cp);
        } else if (cp < 0x800) {
            out += char(0xc0 | (cp >> 6));
            out += char(0x80 | (cp & 0x3f));
        } else if (cp < 0x10000) {
            out += char(0xe0 | (cp >> 12));
            out += char(0x80 | ((cp >> 6) & 0x3f));
            out += char(0x80 | (cp & 0x3f));
        } else {
            out += char(0xf0 | (cp >> 18));
            out += char(0x80 | ((cp >> 12) & 0x3f));
            out += char(0x80 | ((cp >> 6) & 0x3f));
            out += char(0x80 | (cp & 0x3f));
        }
    }
    return out;
}

std::string trimmed(std::string s)
{
    s.erase(0, s.find_first_not_of(' '));
    s.erase(s.find_last_not_of(' ') + 1);
    return s;
}

}  // namespace

std::vector<TextRow> text_table(const std::string& text, const std::string& first_header, const std::string& marker)
{
    struct Column {
        std::string header;
        size_t start, end;
    };
    // Text columns are left-aligned at their headers; number columns are
    // right-aligned under them, as wide as the report makes them with names
    // in full (report_format.cpp; the user-lock section has the same columns).
    static const std::set<std::string> text_headers = {"name", "kind", "caller", "object", "task", "cgroup"};
    static const std::map<std::string, size_t> lock_widths = {{"contend", 7}, {"fail%", 5}, {"wait", 7}, {"mean", 7},
                                                              {"max", 7},     {"spin%", 5}, {"que%", 4}, {"slp%", 4},
                                                              {"run%", 4},    {"sleeps", 6}};
    const auto& widths = lock_widths;
    std::vector<TextRow> rows;
    std::istringstream in(text);
    std::vector<Column> columns;
    for (std::string raw; std::getline(in, raw);) {
        const std::u32string line = columns_of(raw);
        if (columns.empty()) {
            if (!raw.starts_with(first_header + " ") || raw.find(" " + marker + " ") == std::string::npos)
                continue;
            std::istringstream words(raw);
            size_t from = 0;
            for (std::string word; words >> word;) {
                const size_t at = line.find(columns_of(word), from);
                columns.push_back({word, at, at + columns_of(word).size()});
                from = at + columns_of(word).size();
            }
            continue;
        }
        if (raw.empty() || raw.find("fail% =") == 0 || raw.find("(top ") == 0 || raw.find("woken by") == 0 ||
            raw.find("left out") == 0 || raw.find("names:") == 0)
            break;
        // Each cell's span: a number's ends at its header's end, as wide as
        // its column; a text cell runs up to the next cell's span.
        std::vector<std::pair<size_t, size_t>> spans(columns.size());
        for (size_t c = columns.size(); c-- > 0;) {
            const Column& col = columns[c];
            if (text_headers.count(col.header)) {
                spans[c] = {col.start, c + 1 < columns.size() ? spans[c + 1].first : line.size()};
                continue;
            }
            const auto width = widths.find(col.header);
            spans[c] = {col.end - std::max(width == widths.end() ? 0 : width->second, col.header.size()), col.end};
        }
        TextRow row;
        for (size_t c = 0; c < columns.size(); ++c) {
            const auto [start, end] = spans[c];
            if (start < line.size())
                row[columns[c].header] = trimmed(utf8_of(line.substr(start, std::min(end, line.size()) - start)));
        }
        rows.push_back(std::move(row));
    }
    return rows;
}

View kernel_only(const View& v)
{
    View out;
    for (const auto& [key, lock] : v)
        if (key.find("[user ") == std::string::npos)
            out.emplace(key, lock);
    return out;
}

bool expect_same(const View& a, const char* a_name, const View& b, const char* b_name)
{
    bool same = true;
    auto fail = [&](const std::string& what) {
        ADD_FAILURE() << a_name << " and " << b_name << ": " << what;
        same = false;
    };
    for (const auto& [key, va] : a) {
        const auto found = b.find(key);
        if (found == b.end()) {
            fail(key + " only in " + a_name);
            continue;
        }
        const LockView& vb = found->second;
        if (va.contentions != vb.contentions)
            fail(key + ": contentions " + std::to_string(va.contentions) + " vs " + std::to_string(vb.contentions));
        if (va.wait_ns && vb.wait_ns && *va.wait_ns != *vb.wait_ns)
            fail(key + ": wait " + std::to_string(*va.wait_ns) + " vs " + std::to_string(*vb.wait_ns));
        if (va.parts && vb.parts)
            for (size_t i = 0; i < 4; ++i)
                if ((*va.parts)[i] != (*vb.parts)[i])
                    fail(key + ": " + kWaitParts[i].name + " " + std::to_string((*va.parts)[i]) + " vs " +
                         std::to_string((*vb.parts)[i]));
    }
    for (const auto& [key, vb] : b)
        if (!a.count(key))
            fail(key + " only in " + b_name);
    return same;
}

void expect_text_matches(const std::string& text, const View& json)
{
    // The kernel's table, then the user-space locks' section: the same
    // columns, its rows keyed as user locks.
    const size_t section = text.find("\nuser-space locks");
    size_t kernel_rows = 0, user_rows = 0;
    for (const bool user : {false, true}) {
        const std::string part =
            user ? (section == std::string::npos ? "" : text.substr(section)) : text.substr(0, section);
        for (const TextRow& row : text_table(part, "name", "contend")) {
            ++(user ? user_rows : kernel_rows);
            const std::string key =
                user ? user_lock_key(row.at("name"), row.at("kind")) : row.at("name") + " [" + row.at("kind") + "]";
            const auto found = json.find(key);
            if (found == json.end()) {
                ADD_FAILURE() << "the text's " << key << " is not in the JSON";
                continue;
            }
            const LockView& lock = found->second;
            const uint64_t n = lock.contentions;
            EXPECT_EQ(row.at("contend"), n < 1'000'000 ? format_count(n) : format_count_short(double(n))) << key;
            if (lock.wait_ns) {
                EXPECT_EQ(row.at("wait"), format_duration(double(*lock.wait_ns))) << key;
            }
            if (lock.parts && lock.wait_ns && *lock.wait_ns) {
                // A user lock's wait has no spin phase: "-", the rest its three parts.
                const std::vector<int> percents = whole_percents({lock.parts->begin(), lock.parts->end()});
                const char* const headers[] = {"spin%", "que%", "slp%", "run%"};
                for (size_t i = 0; i < 4; ++i)
                    EXPECT_EQ(row.at(headers[i]), user && i == 0 ? "-" : std::to_string(percents[i]) + "%") << key;
            }
        }
    }
    size_t kernel = 0;
    for (const auto& [key, v] : json)
        kernel += key.find("[user ") == std::string::npos ? 1 : 0;
    EXPECT_EQ(kernel_rows, kernel) << "the text's lock table has a row per lock";
    EXPECT_EQ(user_rows, json.size() - kernel) << "the text's user-lock section has a row per user lock";
}

}  // namespace lockscope::doors
