// Every door of a session, read back the way a user's tools read it, so that
// tests can check that all of them tell the same numbers: the report's
// text, JSON and CSV, the exports (csv, folded with both weights, pprof),
// the Prometheus exposition (fed the session's intervals as the recorder
// feeds it) and the dashboard's models. Shared by the property test on
// generated sessions and the root test on recorded ones.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/model.h"

namespace lockscope::doors {

// What one door says of one lock, keyed by its root frame as the stack
// exports write it: "pipe_inode_info.mutex [mutex]", "g_lock [user pthread_mutex]".
struct LockView {
    uint64_t contentions = 0;                      // a user lock's futex waits
    std::optional<uint64_t> wait_ns;               // where the door shows the wait
    std::optional<std::array<uint64_t, 4>> parts;  // the wait's parts (ns), where the door shows them
};
using View = std::map<std::string, LockView>;

std::string lock_key(const std::string& name, const std::string& kind, const std::string& mode);
std::string user_lock_key(const std::string& name, const std::string& kind);

// `report --format json` (every row, kernel and user locks).
View from_json(const std::string& json);
// `report --format csv` and `export --format csv` (kernel locks), and the
// user-locks table (`--table user-locks`).
View from_csv(const std::string& csv);
View from_user_locks_csv(const std::string& csv);
// Folded lines: the weight under `contentions` or `wait_ns` per root.
View from_folded(const std::string& wait_lines, const std::string& contention_lines);
// A gzipped pprof profile: contentions, delay and the four parts per root;
// fails the calling test where a sample's parts do not add up to its delay.
View from_pprof(const std::string& gzipped);
// The Prometheus text exposition: per (lock, kind) series, kernel and user.
View from_prometheus(const std::string& exposition);

// The exposition of a MetricsState fed every interval of `session` as the
// recorder feeds it (the interval's lock rows; a run's user-lock rows with
// its last interval), with room for every lock.
std::string prometheus_of(const Session& session);

// CSV records (RFC 4180) as maps from the header's names to the cells.
std::vector<std::map<std::string, std::string>> csv_records(const std::string& csv);

// One text table row: its cells by column header ("contend", "wait",
// "spin%", ...), for the table whose headers start with `first_header` and
// include `marker` ("contend": locks, tasks, and the user-lock section's locks).
using TextRow = std::map<std::string, std::string>;
std::vector<TextRow> text_table(const std::string& text, const std::string& first_header,
                                const std::string& marker = "contend");

// The kernel's locks of a view (the report's lock table, its CSV).
View kernel_only(const View& v);

// Two views agree: the same locks, the same contentions, and wherever both
// show them the same wait and parts. Adds a test failure per difference,
// naming the doors; returns false on any.
bool expect_same(const View& a, const char* a_name, const View& b, const char* b_name);

// The text's lock and user-lock tables tell what JSON tells, as text can:
// the exact contentions (waits), the wait as formatted, the parts' whole
// percentages.
void expect_text_matches(const std::string& text, const View& json);

}  // namespace lockscope::doors
