#include "core/analysis/user_code.h"

#include <algorithm>
#include <numeric>
#include <string_view>

namespace lockscope {

std::vector<uint64_t> apportion(uint64_t total, const std::vector<uint64_t>& shares)
{
    std::vector<uint64_t> parts(shares.size(), 0);
    const long double sum = std::accumulate(shares.begin(), shares.end(), 0.0L);
    if (shares.empty())
        return parts;
    if (sum <= 0) {
        parts[0] = total;
        return parts;
    }
    std::vector<std::pair<long double, size_t>> remainders;
    uint64_t given = 0;
    for (size_t i = 0; i < shares.size(); ++i) {
        const long double exact = (long double)total * (long double)shares[i] / sum;
        parts[i] = uint64_t(exact);
        given += parts[i];
        remainders.push_back({exact - (long double)parts[i], i});
    }
    std::stable_sort(remainders.begin(), remainders.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    for (size_t k = 0; given < total; k = (k + 1) % remainders.size(), ++given)
        parts[remainders[k].second]++;
    return parts;
}

std::string short_user_frame(std::string frame)
{
    constexpr std::string_view kAnonymous = "(anonymous namespace)::";
    for (size_t at; (at = frame.find(kAnonymous)) != std::string::npos;)
        frame.erase(at, kAnonymous.size());
    if (frame.ends_with(" const"))
        frame.resize(frame.size() - 6);
    if (!frame.ends_with(')') || frame.front() == '[')
        return frame;
    int depth = 0;
    for (size_t i = frame.size(); i-- > 0;) {
        depth += frame[i] == ')' ? 1 : frame[i] == '(' ? -1 : 0;
        if (depth == 0)
            return i > 0 ? frame.substr(0, i) : frame;
    }
    return frame;
}

UserCodeIndex::UserCodeIndex(const Session& session)
{
    for (const KernelUserStack& u : session.kernel_user_stacks)
        above_[{u.run, u.lock_id, u.kernel_frames}].push_back(&u);
}

std::vector<UserCodePart> UserCodeIndex::parts(const StackSample& waiter) const
{
    const auto found = above_.find({waiter.run, waiter.lock_id, waiter.frames});
    if (found == above_.end())
        return {{nullptr, waiter.samples, waiter.wait_ns}};
    std::vector<uint64_t> by_samples, by_wait;
    for (const KernelUserStack* u : found->second) {
        by_samples.push_back(u->samples);
        by_wait.push_back(u->wait_ns);
    }
    const std::vector<uint64_t> samples = apportion(waiter.samples, by_samples);
    const std::vector<uint64_t> waits = apportion(waiter.wait_ns, by_wait);
    std::vector<UserCodePart> out;
    for (size_t i = 0; i < found->second.size(); ++i)
        out.push_back({&found->second[i]->frames, samples[i], waits[i]});
    return out;
}

}  // namespace lockscope
