// Parsing of the export options; the writers are in export_*.cpp.
#include "core/render/export.h"

#include "core/enum_names.h"
#include "core/error.h"

namespace lockscope {
namespace {

// The command line's spellings, in each enum's order.
constexpr std::array<const char*, 4> kFormats{"chrome-trace", "folded", "csv", "pprof"};
constexpr std::array<const char*, 2> kWeights{"wait", "contentions"};
constexpr std::array<const char*, 3> kTables{"locks", "intervals", "user-locks"};

// The value `text` names, or a UsageError that says what `what` may be.
template <auto Last, size_t N>
decltype(Last) parse_name(const std::array<const char*, N>& names, const char* what, const std::string& text)
{
    if (const auto value = enum_value<Last>(names, text))
        return *value;
    throw UsageError("unknown " + std::string(what) + " '" + text + "': use " + names_text(names));
}

}  // namespace

ExportFormat parse_export_format(const std::string& text)
{
    return parse_name<ExportFormat::Pprof>(kFormats, "format", text);
}

FoldedWeight parse_folded_weight(const std::string& text)
{
    return parse_name<FoldedWeight::Contentions>(kWeights, "weight", text);
}

CsvTable parse_csv_table(const std::string& text)
{
    return parse_name<CsvTable::UserLocks>(kTables, "table", text);
}

}  // namespace lockscope
