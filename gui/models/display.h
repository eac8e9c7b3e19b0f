// Text and colour for numbers the models show: thin Qt wrappers around
// core/format.h so the GUI prints exactly what `lockscope report` prints.
#pragma once

#include "core/analysis/diff.h"
#include "core/analysis/report_parts.h"
#include "core/model.h"

#include <QColor>
#include <QString>

#include <array>
#include <cstdint>

namespace lockscope::gui::display {

QString duration(double ns);                                     // "4.20 µs"
QString count(uint64_t n);                                       // "12,345"
QString rate(double per_s, const QString& unit = {});            // "12.3k/s"
QString percent(double fraction, int decimals = 1);              // "42.1%"
QString kind(const std::string& kind, const std::string& mode);  // "rwsem/write"

// The wait's four parts (core/analysis/report_parts.h), in the order
// `lockscope report` prints them. Each nanosecond of a wait is in one.
enum WaitPart { Spinning, QueuedOnCpu, Asleep, Runnable, WaitPartCount };
QString wait_part_name(int part);  // "spinning", "queued on CPU", ...
uint64_t wait_part_ns(const LockCounters& c, int part);
// Whole percentages of the parts that add up to exactly 100, as the report
// prints them (all 0 when there was no wait). Only meaningful where the
// session's format splits the wait (Report::wait_parts_split).
std::array<int, WaitPartCount> wait_part_percents(const LockCounters& c);

// The holder split's four parts (core/analysis/holder_parts.h): the same
// wait by what the lock's holder was doing. Only meaningful where the
// session keeps the split (Report::holder_split.kept).
enum HolderPart { HolderRunning, HolderRunnable, HolderAsleep, HolderUnknown, HolderPartCount };
QString holder_part_name(int part);  // "running", "runnable", "asleep", "unknown"
uint64_t holder_part_ns(const LockCounters& c, int part);
std::array<int, HolderPartCount> holder_part_percents(const LockCounters& c);  // add up to 100

// Diff values, in the units the engine reports them.
QString metric_label(const MetricDiff& m);  // "wait per op"
QString metric_value(const MetricDiff& m, double v);
QString metric_change(const MetricDiff& m);    // "+12.3%"
QString metric_interval(const MetricDiff& m);  // "[+4.0%, +21.0%]"
QString metric_p(const MetricDiff& m);

// Verdicts carry text and colour; colour alone must never be the message.
QString verdict_text(Verdict v);
QColor verdict_colour(Verdict v);  // red for worse, green for better, ...

}  // namespace lockscope::gui::display
