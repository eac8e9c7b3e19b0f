#include "core/storage/session_schema.h"

#include "core/storage/session_format.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <iterator>
#include <string_view>
#include <stdexcept>

namespace lockscope::detail {

std::vector<std::string> lost_column_names()
{
    std::vector<std::string> out;
    for (const LostField& f : kLostFields)
        out.push_back(f.column);
    return out;
}

std::string lost_columns(const std::vector<std::string>& missing)
{
    std::string out;
    for (const std::string& c : lost_column_names()) {
        if (!out.empty())
            out += ", ";
        out += std::find(missing.begin(), missing.end(), c) == missing.end() ? c : "0";
    }
    return out;
}

std::string counter_columns(int version)
{
    if (version >= 7)
        return kCounterColumns;
    // What older files lack, read as the value that means "as then recorded".
    std::string out;
    for (const CounterField& f : kCounterFields) {
        const std::string_view name = f.name;
        if (name == "timed")
            out += version >= 4 ? "timed" : "contentions";
        else if (name == "wait_var_us2")
            out += version >= 4 ? "wait_var_us2" : "0";
        else if (name == "spin_offcpu_ns" || name == "spin_yields")
            out += version >= 5 ? f.name : "0";  // version 5; wait_parts_split() says the parts are unknown
        else if (name.starts_with("holder_"))
            out += "0";  // version 7; holder_split_kept() says the split is unknown
        else
            out += f.name;
        out += ", ";
    }
    return out + "owner, hist";
}

std::string encode_sparse(const uint64_t* values, size_t n)
{
    std::string out;
    for (size_t i = 0; i < n; ++i) {
        if (values[i] == 0)
            continue;
        if (!out.empty())
            out += ' ';
        out += std::to_string(i);
        out += ':';
        out += std::to_string(values[i]);
    }
    return out;
}

bool decode_sparse(const char* text, uint64_t* values, size_t n)
{
    std::fill(values, values + n, uint64_t(0));
    const char* p = text;
    const char* end = text + std::strlen(text);
    uint64_t seen = 0;  // bitmask of indices, n <= 64
    if (n > 64)
        return false;
    while (p < end) {
        size_t index = 0;
        uint64_t count = 0;
        auto r1 = std::from_chars(p, end, index);
        if (r1.ec != std::errc() || r1.ptr == end || *r1.ptr != ':' || index >= n)
            return false;
        auto r2 = std::from_chars(r1.ptr + 1, end, count);
        if (r2.ec != std::errc() || count > uint64_t(INT64_MAX) || (seen >> index) & 1)
            return false;
        seen |= uint64_t(1) << index;
        values[index] = count;
        p = r2.ptr;
        if (p < end) {
            if (*p != ' ' || p + 1 == end)
                return false;
            ++p;
        }
    }
    return true;
}

void bind_text(sqlite3_stmt* st, int col, const std::string& text)
{
    sqlite3_bind_text(st, col, text.data(), int(text.size()), SQLITE_TRANSIENT);
}

void bind_opt(sqlite3_stmt* st, int col, const std::optional<double>& v)
{
    if (v)
        sqlite3_bind_double(st, col, *v);
    else
        sqlite3_bind_null(st, col);
}

void bind_counters(sqlite3_stmt* st, int first, const LockCounters& c)
{
    int col = first;
    for (const CounterField& f : kCounterFields)
        sqlite3_bind_int64(st, col++, to_db(c.*f.member));
    sqlite3_bind_text(st, col++, encode_sparse(c.owner.data(), c.owner.size()).c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, col++, encode_sparse(c.hist.data(), c.hist.size()).c_str(), -1, SQLITE_TRANSIENT);
}

uint64_t RowReader::u64(int col, const char* name)
{
    if (sqlite3_column_type(st_, col) != SQLITE_INTEGER) {
        fail(std::string(name) + " is not an integer");
        return 0;
    }
    int64_t v = sqlite3_column_int64(st_, col);
    if (v < 0) {
        fail(std::string(name) + " is negative");
        return 0;
    }
    return uint64_t(v);
}

uint32_t RowReader::u32(int col, const char* name)
{
    const uint64_t v = u64(col, name);
    if (v > UINT32_MAX) {
        fail(std::string(name) + " out of range");
        return 0;
    }
    return uint32_t(v);
}

int64_t RowReader::i64(int col, const char* name)
{
    if (sqlite3_column_type(st_, col) != SQLITE_INTEGER) {
        fail(std::string(name) + " is not an integer");
        return 0;
    }
    return sqlite3_column_int64(st_, col);
}

std::string RowReader::text(int col, const char* name)
{
    if (sqlite3_column_type(st_, col) != SQLITE_TEXT) {
        fail(std::string(name) + " is not text");
        return {};
    }
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(st_, col));
    return std::string(p, size_t(sqlite3_column_bytes(st_, col)));
}

std::optional<double> RowReader::opt_real(int col, const char* name)
{
    int type = sqlite3_column_type(st_, col);
    if (type == SQLITE_NULL)
        return std::nullopt;
    if (type != SQLITE_FLOAT && type != SQLITE_INTEGER) {
        fail(std::string(name) + " is not a number");
        return std::nullopt;
    }
    double v = sqlite3_column_double(st_, col);
    if (!std::isfinite(v) || v < 0) {
        fail(std::string(name) + " is not a finite non-negative number");
        return std::nullopt;
    }
    return v;
}

void RowReader::counters(int first, LockCounters& c)
{
    int col = first;
    for (const CounterField& f : kCounterFields)
        c.*f.member = u64(col++, f.name);
    // The sparse columns are decoded in place (sqlite's text is
    // NUL-terminated): no copy per row.
    const char* owner = sparse_text(col++, "owner");
    const char* hist = sparse_text(col++, "hist");
    if (!ok_)
        return;
    if (!decode_sparse(owner, c.owner.data(), c.owner.size()))
        fail("malformed owner-state counters '" + std::string(owner).substr(0, 40) + "'");
    else if (!decode_sparse(hist, c.hist.data(), c.hist.size()))
        fail("malformed histogram '" + std::string(hist).substr(0, 40) + "'");
}

void RowReader::histogram(int col, const char* name, std::array<uint64_t, kHistBuckets>& h)
{
    const char* text = sparse_text(col, name);
    if (ok_ && !decode_sparse(text, h.data(), h.size()))
        fail(std::string("malformed ") + name + " '" + std::string(text).substr(0, 40) + "'");
}

const char* RowReader::sparse_text(int col, const char* name)
{
    if (sqlite3_column_type(st_, col) != SQLITE_TEXT) {
        fail(std::string(name) + " is not text");
        return "";
    }
    // Like text(): decoding stops at an embedded NUL.
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(st_, col));
    return p ? p : "";
}

Stmt::Stmt(sqlite3* db, const char* sql)
{
    if (sqlite3_prepare_v2(db, sql, -1, &st_, nullptr) != SQLITE_OK) {
        std::string msg = sqlite3_errmsg(db);
        sqlite3_finalize(st_);
        st_ = nullptr;
        throw std::runtime_error(msg);
    }
}

}  // namespace lockscope::detail
