// Where `record` stores its intervals: nowhere (live consumers only), one
// session file (-o), or a rolling series in a directory (--session-dir).
// Every file of a series is a whole session: the metadata said so far, the
// locks seen so far, and a run that starts where the previous file's ended.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/storage/session_rotation.h"
#include "core/storage/session_store.h"

namespace lockscope::pipeline {

using Meta = std::map<std::string, std::string>;

class SessionFiles {
public:
    // `fresh_meta` gives the metadata a new file starts with (its start
    // time included). Creates the file, or the series' first file.
    SessionFiles(std::string output, bool overwrite, std::optional<RotationPolicy> rotation,
                 std::function<Meta()> fresh_meta);

    bool active() const { return writer_.has_value(); }
    const std::string& path() const;
    // Stored now and in every later file of a series.
    void set_meta(const Meta& meta);

    int64_t begin_run(const std::string& label, uint64_t start_ns);
    // `catalog`: every lock seen before this interval (a new file needs them all).
    void write_interval(const IntervalBatch& batch, const std::vector<LockInfo>& catalog);
    void end_run(const RunInfo& run);
    void close();

    // A series' file is older than --rotate-every or bigger than its share of --max-mib.
    bool rotation_due(uint64_t now_ns) const;
    // Ends `run` in the current file, starts the next with a run from
    // `start_ns` and removes the oldest files. Returns the new run's id.
    int64_t rotate(const RunInfo& run, const std::string& label, uint64_t start_ns);

private:
    void open(const std::string& path, bool overwrite);
    void prune();

    std::optional<RotationPolicy> rotation_;
    std::function<Meta()> fresh_meta_;
    std::optional<SessionWriter> writer_;
    std::string path_;
    Meta said_;  // set_meta() so far
    uint64_t run_start_ns_ = 0;
    size_t intervals_ = 0;  // in the current file
    bool needs_catalog_ = false;
};

}  // namespace lockscope::pipeline
