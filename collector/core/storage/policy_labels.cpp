#include "core/storage/policy_labels.h"

#include <array>
#include <charconv>

namespace lockscope {
namespace {

constexpr std::string_view kRwSemPrefix = "rwsem@";

constexpr std::array<PolicyRename, 6> kRenames{{
    {"3.16", "3.16-rc2", 2},   // spinning without an owner never shipped in a release
    {"3.16-fix", "3.16", 2},   // Jason Low's fix is what v3.16 shipped
    {"5.2", "5.3-rc-tip", 2},  // the seed's "5.2-rc6 + tip" kernel; the rework shipped in v5.3
    {"5.3", "5.4", 2},         // 91d2a812dfb9 (handoff writer spins) shipped in v5.4
    {"6.x", "5.19", 2},        // 6eebd5fb2083, the newest change modelled, shipped in v5.19
    {"4.7", "4.2", 3},         // 4.2 (59aabfc7e959) was the first release with all of 4.7's rules
}};

// The rename of `old_name` a session of label version `from` goes through.
const PolicyRename* rename_of(std::string_view old_name, int from)
{
    for (const PolicyRename& r : kRenames)
        if (r.old_name == old_name && r.version > from)
            return &r;
    return nullptr;
}

int labels_version(const Session& s)
{
    auto it = s.meta.find(kPolicyLabelsKey);
    int v = 1;
    if (it != s.meta.end())
        std::from_chars(it->second.data(), it->second.data() + it->second.size(), v);
    return v;
}

bool policy_char(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '.' || c == '-' ||
           c == '_';
}

}  // namespace

std::span<const PolicyRename> policy_renames()
{
    return kRenames;
}

std::string policy_renames_text(int from)
{
    std::string out;
    for (const PolicyRename& r : kRenames)
        if (r.version > from)
            out += (out.empty() ? "" : ", ") + std::string(r.old_name) + " -> " + std::string(r.new_name);
    return out;
}

std::string rename_old_policies(std::string_view text, int from)
{
    std::string out;
    size_t pos = 0;
    for (;;) {
        const size_t at = text.find(kRwSemPrefix, pos);
        if (at == std::string_view::npos)
            break;
        const size_t start = at + kRwSemPrefix.size();
        size_t end = start;
        while (end < text.size() && policy_char(text[end]))
            end++;
        out.append(text.substr(pos, start - pos));
        const std::string_view name = text.substr(start, end - start);
        const PolicyRename* r = rename_of(name, from);
        out.append(r ? r->new_name : name);
        pos = end;
    }
    out.append(text.substr(pos));
    return out;
}

void upgrade_policy_labels(Session& s)
{
    const int from = labels_version(s);
    if (!s.meta.count("bench.locks") || policy_renames_text(from).empty())
        return;
    bool renamed = false;
    auto rename = [&](std::string& text) {
        std::string next = rename_old_policies(text, from);
        renamed |= next != text;
        text = std::move(next);
    };
    for (RunInfo& r : s.runs)
        rename(r.label);
    for (LockInfo& l : s.locks)
        rename(l.name);
    for (const char* key : {"bench.locks", "scope"})
        if (auto it = s.meta.find(key); it != s.meta.end())
            rename(it->second);
    if (renamed)
        s.meta[kPolicyLabelsRenamedKey] = policy_renames_text(from);
}

std::string current_lock_name(std::string_view lock, std::string& note)
{
    note.clear();
    if (!lock.starts_with(kRwSemPrefix))
        return std::string(lock);
    const std::string_view name = lock.substr(kRwSemPrefix.size());
    const PolicyRename* r = rename_of(name, 1);
    if (!r)
        return std::string(lock);
    // An old name that is also a current one keeps its current meaning.
    for (const PolicyRename& other : kRenames)
        if (other.new_name == name) {
            note = std::string(lock) + " names the " + std::string(name) + " release (formerly " +
                   std::string(kRwSemPrefix) + std::string(other.old_name) +
                   "); before the labels were corrected it meant what is now " + std::string(kRwSemPrefix) +
                   std::string(r->new_name);
            return std::string(lock);
        }
    note = std::string(lock) + " is an old label, now " + std::string(kRwSemPrefix) + std::string(r->new_name) +
           " (policies are named after the first release that behaved that way)";
    return std::string(kRwSemPrefix) + std::string(r->new_name);
}

}  // namespace lockscope
