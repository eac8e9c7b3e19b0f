#include "pipeline/session_files.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>

#include "core/error.h"

namespace lockscope::pipeline {
namespace {

// Under sudo the session belongs to the user who asked for it, not to root.
void give_to_invoking_user(const std::string& path)
{
    const char* uid = getenv("SUDO_UID");
    const char* gid = getenv("SUDO_GID");
    if (geteuid() != 0 || !uid || !gid)
        return;
    // lchown: a symlink swapped in after the file was created is not followed.
    if (lchown(path.c_str(), uid_t(std::strtoul(uid, nullptr, 10)), gid_t(std::strtoul(gid, nullptr, 10))) != 0)
        std::fprintf(stderr, "lockscope: cannot give %s to the sudo user: %s\n", path.c_str(), std::strerror(errno));
}

std::string next_series_path(const RotationPolicy& policy)
{
    timespec now{};
    clock_gettime(CLOCK_REALTIME, &now);
    return (std::filesystem::path(policy.dir) / rotated_session_name(now)).string();
}

}  // namespace

SessionFiles::SessionFiles(std::string output, bool overwrite, std::optional<RotationPolicy> rotation,
                           std::function<Meta()> fresh_meta)
    : rotation_(std::move(rotation)), fresh_meta_(std::move(fresh_meta))
{
    if (rotation_) {
        std::error_code ec;
        std::filesystem::create_directories(rotation_->dir, ec);
        if (ec)
            throw Error("cannot create the session directory", rotation_->dir, ec.value());
        open(next_series_path(*rotation_), false);
        prune();  // what earlier recordings left
    } else if (!output.empty()) {
        open(output, overwrite);
    }
}

const std::string& SessionFiles::path() const
{
    return path_;
}

void SessionFiles::open(const std::string& path, bool overwrite)
{
    writer_.emplace(SessionWriter::create(path, overwrite));
    path_ = path;
    give_to_invoking_user(path);
    Meta meta = fresh_meta_();
    for (const auto& [key, value] : said_)
        meta[key] = value;
    writer_->set_meta(meta);
    intervals_ = 0;
}

void SessionFiles::set_meta(const Meta& meta)
{
    for (const auto& [key, value] : meta)
        said_[key] = value;
    if (writer_)
        writer_->set_meta(meta);
}

int64_t SessionFiles::begin_run(const std::string& label, uint64_t start_ns)
{
    run_start_ns_ = start_ns;
    return writer_ ? writer_->begin_run(label, start_ns) : 0;
}

void SessionFiles::write_interval(const IntervalBatch& batch, const std::vector<LockInfo>& catalog)
{
    if (!writer_)
        return;
    // A failed write (a full disk) ends the recording; what the file already
    // holds stays readable, and the user learns how much that is.
    try {
        if (needs_catalog_ && !catalog.empty()) {
            IntervalBatch whole = batch;
            whole.new_locks.insert(whole.new_locks.begin(), catalog.begin(), catalog.end());
            writer_->write_interval(whole);
        } else {
            writer_->write_interval(batch);
        }
    } catch (const Error& e) {
        if (!e.remedy().empty())
            throw;
        throw Error(e.operation(), e.object(), e.err(),
                    "it keeps the " + std::to_string(intervals_) + " interval" + (intervals_ == 1 ? "" : "s") +
                        " written before");
    }
    needs_catalog_ = false;
    intervals_++;
    // The file being written grows too: the series stays under its size
    // after every interval, not only when a new file starts.
    if (rotation_ && rotation_->max_bytes)
        prune();
}

void SessionFiles::end_run(const RunInfo& run)
{
    if (writer_)
        writer_->end_run(run);
}

void SessionFiles::close()
{
    if (writer_)
        writer_->close();
}

bool SessionFiles::rotation_due(uint64_t now_ns) const
{
    if (!rotation_ || !writer_)
        return false;
    if (now_ns - run_start_ns_ >= uint64_t(rotation_->every_s * 1e9))
        return true;
    return rotation_->file_bytes() && session_bytes(path_) >= rotation_->file_bytes();
}

int64_t SessionFiles::rotate(const RunInfo& run, const std::string& label, uint64_t start_ns)
{
    writer_->end_run(run);
    writer_->close();
    const std::string done = path_;
    writer_.reset();
    open(next_series_path(*rotation_), false);
    needs_catalog_ = true;
    std::fprintf(stderr, "lockscope: session %s complete, now writing %s\n", done.c_str(), path_.c_str());
    prune();
    return begin_run(label, start_ns);
}

void SessionFiles::prune()
{
    for (const std::string& removed : prune_sessions(*rotation_, path_))
        std::fprintf(stderr, "lockscope: removed the old session %s\n", removed.c_str());
}

}  // namespace lockscope::pipeline
