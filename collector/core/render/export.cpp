// Parsing of the export options; the writers are in export_*.cpp.
#include "core/render/export.h"

#include "core/error.h"

namespace lockscope {

ExportFormat parse_export_format(const std::string& text)
{
    if (text == "chrome-trace")
        return ExportFormat::ChromeTrace;
    if (text == "folded")
        return ExportFormat::Folded;
    if (text == "csv")
        return ExportFormat::Csv;
    if (text == "pprof")
        return ExportFormat::Pprof;
    throw UsageError("unknown format '" + text + "': use chrome-trace, folded, csv or pprof");
}

FoldedWeight parse_folded_weight(const std::string& text)
{
    if (text == "wait")
        return FoldedWeight::WaitNs;
    if (text == "contentions")
        return FoldedWeight::Contentions;
    throw UsageError("unknown weight '" + text + "': use wait or contentions");
}

CsvTable parse_csv_table(const std::string& text)
{
    if (text == "locks")
        return CsvTable::Locks;
    if (text == "intervals")
        return CsvTable::Intervals;
    if (text == "user-locks")
        return CsvTable::UserLocks;
    throw UsageError("unknown table '" + text + "': use locks, intervals or user-locks");
}

}  // namespace lockscope
