// What this machine supports for lockscope, checked without loading the
// recorder: used by `lockscope info` and before `record` attaches, so a
// missing piece is reported as one sentence naming what is needed.
#pragma once

#include <string>
#include <vector>

namespace lockscope::probe {

struct Feature {
    std::string name;    // "btf", "lock tracepoints", ...
    bool available = false;
    bool required = false;  // record cannot work without it
    std::string detail;  // what was found, or what is needed
};

std::vector<Feature> detect_features();

// Throws lockscope::Error for the first missing required feature.
void require_recording_features();

}  // namespace lockscope::probe
