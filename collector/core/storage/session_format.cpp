#include "core/storage/session_format.h"

#include <charconv>
#include <cstdint>

namespace lockscope {

std::string encode_phases(const Episode& e)
{
    std::string out;
    for (const EpisodePhase& p : e.phases) {
        if (!out.empty())
            out += ' ';
        out += p.spin ? 's' : 'q';
        out += std::to_string(p.start_ns - e.begin_ns);
        if (p.owner >= 0) {
            out += ':';
            out += std::to_string(p.owner);
        }
    }
    return out;
}

bool decode_phases(const std::string& text, Episode& e)
{
    e.phases.clear();
    const char* p = text.data();
    const char* end = p + text.size();
    uint64_t last = 0;
    while (p < end) {
        EpisodePhase ph;
        if (*p != 's' && *p != 'q')
            return false;
        ph.spin = *p++ == 's';
        uint64_t offset = 0;
        auto r = std::from_chars(p, end, offset);
        if (r.ec != std::errc() || offset < last || offset > e.end_ns - e.begin_ns)
            return false;
        p = r.ptr;
        if (p < end && *p == ':') {
            int owner = 0;
            auto ro = std::from_chars(p + 1, end, owner);
            if (ro.ec != std::errc() || owner < 0 || owner >= kOwnerStates)
                return false;
            ph.owner = owner;
            p = ro.ptr;
        }
        if (p < end) {
            if (*p != ' ' || p + 1 == end)
                return false;
            ++p;
        }
        last = offset;
        ph.start_ns = e.begin_ns + offset;
        e.phases.push_back(ph);
    }
    return true;
}

}  // namespace lockscope
