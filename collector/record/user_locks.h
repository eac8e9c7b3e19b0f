// The user-space locks of the processes `record` runs or follows
// (collector/userlock), recorded beside the kernel's locks into the same
// run: prepared before the target is released, polled with the recorder's
// loop, read into the run's last interval.
#pragma once

#include <sys/types.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/model.h"

namespace lockscope::userlock {
class Recorder;
}

namespace lockscope::record {

class UserLockRecording {
public:
    // Loads and attaches the user-lock recorder for these processes. Where
    // it cannot (an older kernel, no BTF), says why in one line on stderr
    // and records nothing: the kernel locks are recorded all the same.
    explicit UserLockRecording(const std::vector<pid_t>& tgids);
    ~UserLockRecording();
    UserLockRecording(const UserLockRecording&) = delete;
    UserLockRecording& operator=(const UserLockRecording&) = delete;

    bool recording() const { return recorder_ != nullptr; }

    // Drains the sampled stacks, and reads the targets' binaries again when
    // their mappings changed, so that their locks are named even if they
    // exit before finish().
    void poll();

    // Stops recording and puts the run's rows (or why there are none) into
    // the batch of its last interval.
    void finish(int64_t run, IntervalBatch& batch);

private:
    std::unique_ptr<userlock::Recorder> recorder_;
    std::vector<pid_t> tgids_;
    std::string unavailable_;                // why nothing is recorded
    std::map<pid_t, std::string> binaries_;  // per target, the binaries its names were read from
};

}  // namespace lockscope::record
