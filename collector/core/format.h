// Human-readable numbers for reports and the GUI: durations in ns/µs/ms/s,
// counts with thousands separators or SI suffixes, rates and percentages.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace lockscope {

// "850 ns", "4.20 µs", "12.3 ms", "1.05 s", "1234 s". Three significant
// digits. `compact` drops the space ("12.3ms") for table cells.
std::string format_duration(double ns, bool compact = false);

// "90" or "90s", "15m", "1h", "1d", "1w" as seconds (the number may have a
// fraction); nullopt for anything else, or for no time at all.
std::optional<double> parse_duration_s(const std::string& text);

// "12,345,678".
std::string format_count(uint64_t n);

// "950", "12.3k", "4.56M", "7.89G" for table cells.
std::string format_count_short(double n);

// "205.8/s", "12.3k/s"; with a unit, "12.3k ops/s".
std::string format_rate(double per_second, const std::string& unit = {});

// 0.421 -> "42.1%"; `decimals` digits after the point. A value that is not
// zero never prints as zero: below what `decimals` show, two significant
// digits ("0.47%", "0.0019%").
std::string format_percent(double fraction, int decimals = 1);

// The same in at most 5 columns, for table cells: "42%", "4.2%", "0.47%",
// "<.01%", "0%" only for zero.
std::string format_percent_cell(double fraction);

// Six significant digits in plain decimal, for CSV: "0.0000177414", not
// "1.77414e-05"; "1234568", not "1.23457e+06"; no trailing zeros.
std::string format_decimal(double v);

// Orders text as people read the numbers in it: runs of digits compare as
// numbers of any length, so "6.1.0-9" < "6.1.0-10" < "6.1.0-47".
bool natural_less(const std::string& a, const std::string& b);

// The local time now in strftime's `format` ("%H:%M:%S" -> "14:03:59"); at
// most 63 characters.
std::string format_local_now(const char* format);

// Whole percentages of the parts of a whole that add up to exactly 100 (all
// 0 when the parts are): each is its share rounded down, and the points left
// go to the largest remainders.
std::vector<int> whole_percents(const std::vector<uint64_t>& parts);

// Display width in terminal columns of UTF-8 text (one per code point;
// enough for the "µ" and "…" this project prints).
size_t display_width(const std::string& s);

// Truncates to `width` columns with a trailing "…" when it does not fit.
std::string truncate_display(const std::string& s, size_t width);

// Cuts to `width` columns by replacing the middle with "…", keeping the last
// `tail` columns (as many as fit): "pipe_inode_info…wait_lock".
std::string truncate_middle(const std::string& s, size_t width, size_t tail);

// Names cut to `width` columns so that names which differ still print
// differently: a cut keeps the end (the member, the "#N" of an instance),
// from a word boundary where one fits, as that is where names of one class
// differ. Nothing when no cut at this width keeps them apart.
std::optional<std::vector<std::string>> cut_apart(const std::vector<std::string>& names, size_t width);

// Wraps prose at word boundaries to `width` columns, `first` before the first
// line, `indent` spaces before the others; ends with a newline.
std::string wrap_text(const std::string& text, const std::string& first, size_t indent, size_t width);

// A CSV field as written with `separator`: quoted where it holds the
// separator, a quote or a line break, its quotes doubled.
std::string csv_field(const std::string& text, const std::string& separator = ",");

// "func" of a frame "func+0x1a/0x40".
std::string function_of(const std::string& frame);

}  // namespace lockscope
