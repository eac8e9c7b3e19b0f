#include "core/storage/session_tables.h"

#include "core/storage/session_format.h"

#include <sstream>
#include <utility>

namespace lockscope::detail {

namespace {

// Each declaration is checked where it is made: an id column that names a
// lock must hold an id, and rows are ordered by a plain column.
template <typename Row, size_t N>
constexpr bool well_formed(const SessionTable<Row, N>& t)
{
    if (N == 0 || std::holds_alternative<LockCounters Row::*>(t.columns[0].member))
        return false;
    for (const Column<Row>& c : t.columns)
        if (c.refers == Refers::lock && !std::holds_alternative<int64_t Row::*>(c.member))
            return false;
    return true;
}
static_assert(std::apply([](const auto&... table) { return (well_formed(table) && ...); }, kRunTables));

}  // namespace

std::string schema_sql()
{
    std::string out = kFixedTablesSql;
    for_each_run_table([&](const auto& table) { out += table_sql(table, kSchemaVersion).create; });
    return out;
}

namespace table_detail {

std::string join_lines(const std::vector<std::string>& lines)
{
    std::string out;
    for (const std::string& line : lines) {
        if (!out.empty())
            out += '\n';
        out += line;
    }
    return out;
}

std::vector<std::string> split_lines(const std::string& text)
{
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        out.push_back(std::move(line));
    return out;
}

}  // namespace table_detail

}  // namespace lockscope::detail
