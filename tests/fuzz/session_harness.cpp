#include "session_harness.h"

#include "core/analysis/diff.h"
#include "core/analysis/report.h"
#include "core/error.h"
#include "core/render/export.h"
#include "core/storage/session_store.h"
#include "sample_session.h"

#include <sqlite3.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <sstream>
#include <vector>

namespace lockscope::fuzz {
namespace {

[[noreturn]] void bug(const char* what, const std::string& detail)
{
    std::fprintf(stderr, "lockscope fuzz: %s: %s\n", what, detail.c_str());
    std::abort();
}

// Runs `body`; a lockscope::Error or UsageError is a refusal (false), any
// other exception escapes the "one clear sentence" contract and aborts.
template <typename Fn>
bool refused_cleanly(Fn&& body)
{
    try {
        body();
        return true;
    } catch (const Error& e) {
        if (std::string(e.what()).empty())
            bug("empty error message", "");
    } catch (const UsageError&) {
    } catch (const std::exception& e) {
        bug("unexpected exception type", e.what());
    } catch (...) {
        bug("unexpected exception", "not a std::exception");
    }
    return false;
}

// Scratch files live in one directory per process, removed at exit.
const testing::TempDir& scratch()
{
    static testing::TempDir dir;
    return dir;
}

void remove_sidecars(const std::string& path)
{
    for (const char* suffix : {"", "-wal", "-shm", "-journal"})
        ::unlink((path + suffix).c_str());
}

void write_bytes(const std::string& path, const uint8_t* data, size_t size)
{
    remove_sidecars(path);
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), std::streamsize(size));
    if (!out)
        bug("cannot write scratch file", path);
}

std::vector<char> read_bytes(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A small valid session, written by the recorder's own writer.
const std::vector<char>& valid_session_bytes()
{
    static const std::vector<char> bytes = [] {
        const std::string path = scratch().file("reference.lockscope");
        testing::write_sample(path, 2, 3, 3);
        return read_bytes(path);
    }();
    return bytes;
}

const Session& reference_session()
{
    static const Session session = [] {
        valid_session_bytes();
        return load_session(scratch().file("reference.lockscope"));
    }();
    return session;
}

void format_report(const Session& s, ReportOptions options)
{
    const Report r = build_report(s, options);
    format_text(r);
    format_json(r);
    format_csv(r);
}

void format_diff(const Session& a, const Session& b)
{
    refused_cleanly([&] {
        const DiffResult d = diff_sessions(a, b, DiffOptions{});
        format_diff_text(d);
        format_diff_json(d);
    });
}

// The GUI's first paint and `report` read per-lock totals without the
// per-interval rows; they are documented to give the full load's report.
void check_totals_match(const Session& totals_only, const Session& full)
{
    if (totals_only.warnings != full.warnings)
        bug("totals-only load warns differently from the full load", "");
    ReportOptions all;
    all.top = 0;
    const std::string a = format_json(build_report(totals_only, all));
    const std::string b = format_json(build_report(full, all));
    if (a != b)
        bug("totals-only report differs from the full report", a + "\n---\n" + b);
}

// Every `lockscope export` format; chrome-trace also streams the episodes.
void exercise_export(const std::string& path, const Session& s)
{
    std::ostringstream out;
    refused_cleanly([&] { export_chrome_trace(path, s, out); });
    for (FoldedWeight weight : {FoldedWeight::WaitNs, FoldedWeight::Contentions})
        refused_cleanly([&] { export_folded(s, weight, out); });
    for (CsvTable table : {CsvTable::Locks, CsvTable::Intervals})
        refused_cleanly([&] { export_csv(s, table, out); });
}

}  // namespace

Outcome exercise_session_file(const std::string& path)
{
    refused_cleanly([&] { peek_session(path); });

    std::optional<Session> first_paint, totals_only, full;
    refused_cleanly([&] {
        LoadOptions options;
        options.lock_intervals = false;
        options.lock_totals = false;
        first_paint = load_session(path, options);
        format_report(*first_paint, {});
    });
    refused_cleanly([&] {
        LoadOptions options;
        options.lock_intervals = false;
        totals_only = load_session(path, options);
    });
    if (!refused_cleanly([&] { full = load_session(path); }))
        return Outcome::Refused;
    if (totals_only)
        check_totals_match(*totals_only, *full);

    for (GroupBy by : {GroupBy::Lock, GroupBy::Caller, GroupBy::Task, GroupBy::Kind}) {
        ReportOptions options;
        options.by = by;
        options.top = by == GroupBy::Lock ? 0 : 3;
        refused_cleanly([&] { format_report(*full, options); });
    }
    // `report --run N` for the first few runs, and one that does not exist.
    for (size_t i = 0; i < full->runs.size() && i < 3; ++i) {
        ReportOptions options;
        options.run = full->runs[i].id;
        refused_cleanly([&] { format_report(*full, options); });
    }
    ReportOptions missing_run;
    missing_run.run = INT64_MIN;
    refused_cleanly([&] { format_report(*full, missing_run); });

    format_diff(*full, *full);
    format_diff(reference_session(), *full);
    format_diff(*full, reference_session());
    exercise_export(path, *full);
    return Outcome::Loaded;
}

Outcome exercise_session_bytes(const uint8_t* data, size_t size)
{
    const std::string path = scratch().file("input.lockscope");
    write_bytes(path, data, size);
    Outcome outcome = exercise_session_file(path);
    remove_sidecars(path);
    return outcome;
}

namespace {

// Bounds what one input may cost: statements stop after this many VM steps.
int stop_after_budget(void* steps)
{
    return ++*static_cast<int*>(steps) > 2000;  // called every 1000 steps
}

struct DbCloser {
    void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};

}  // namespace

Outcome exercise_sql_on_valid_session(const uint8_t* data, size_t size)
{
    const std::vector<char>& seed = valid_session_bytes();
    const std::string path = scratch().file("mutated.lockscope");
    write_bytes(path, reinterpret_cast<const uint8_t*>(seed.data()), seed.size());
    {
        sqlite3* raw = nullptr;
        if (sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK)
            bug("cannot open the seed session", sqlite3_errmsg(raw));
        std::unique_ptr<sqlite3, DbCloser> db(raw);
        // No second database: ATTACH and VACUUM INTO could write any file.
        sqlite3_limit(raw, SQLITE_LIMIT_ATTACHED, 0);
        sqlite3_limit(raw, SQLITE_LIMIT_LENGTH, 1 << 20);
        // A scratch copy: no fsync per statement (it would set the pace).
        sqlite3_exec(raw, "PRAGMA synchronous=OFF", nullptr, nullptr, nullptr);
        int steps = 0;
        sqlite3_progress_handler(raw, 1000, stop_after_budget, &steps);
        const std::string sql(reinterpret_cast<const char*>(data), size);
        // Statement by statement, so one that fails does not stop the rest.
        const char* tail = sql.c_str();
        while (tail && *tail) {
            sqlite3_stmt* st = nullptr;
            const char* next = nullptr;
            int rc = sqlite3_prepare_v2(raw, tail, -1, &st, &next);
            if (rc == SQLITE_OK && st)
                while (sqlite3_step(st) == SQLITE_ROW) {
                }
            sqlite3_finalize(st);
            if (!next || next <= tail)
                break;  // cannot find where a bad statement ends
            tail = next;
        }
    }
    Outcome outcome = exercise_session_file(path);
    remove_sidecars(path);
    return outcome;
}

}  // namespace lockscope::fuzz
