#include "identity/slab_caches.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <system_error>

namespace lockscope::identity {
namespace fs = std::filesystem;

SlabCaches SlabCaches::load(const std::string& dir)
{
    SlabCaches s;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
        const std::string name = entry.path().filename().string();
        if (name.empty() || name[0] == ':')
            continue;  // the merged caches' own directories, named by size
        std::error_code e2;
        if (entry.is_symlink(e2))
            s.target_[name] = fs::read_symlink(entry.path(), e2).filename().string();
        else
            s.target_[name] = name;
    }
    return s;
}

std::vector<std::string> SlabCaches::merged_with(const std::string& name) const
{
    std::vector<std::string> out{name};
    auto it = target_.find(name);
    if (it == target_.end())
        return out;
    for (const auto& [other, target] : target_)
        if (target == it->second && other != name)
            out.push_back(other);
    return out;
}

bool is_generic_cache(std::string_view name)
{
    return name.rfind("kmalloc-", 0) == 0 || name.rfind("dma-kmalloc-", 0) == 0;
}

std::pair<uint32_t, uint32_t> generic_size_range(std::string_view name)
{
    const size_t dash = name.rfind('-');
    if (dash == std::string_view::npos)
        return {0, 0};
    std::string_view num = name.substr(dash + 1);
    uint32_t mult = 1;
    if (!num.empty() && (num.back() == 'k' || num.back() == 'M')) {
        mult = num.back() == 'k' ? 1024 : 1024 * 1024;
        num.remove_suffix(1);
    }
    uint32_t size = 0;
    auto [p, ec] = std::from_chars(num.data(), num.data() + num.size(), size);
    if (ec != std::errc() || p != num.data() + num.size() || size == 0)
        return {0, 0};
    size *= mult;
    // The kernel's kmalloc sizes: powers of two from 8, plus 96 and 192.
    static constexpr uint32_t kSizes[] = {8, 16, 32, 64, 96, 128, 192, 256, 512, 1024, 2048, 4096, 8192};
    uint32_t below = 0;
    for (uint32_t s : kSizes)
        if (s < size)
            below = s;
    if (size > 8192)
        below = size / 2;
    return {below, size};
}

std::vector<std::string> candidate_types(std::string_view cache_name)
{
    // Caches whose name does not lead to their type.
    static const std::map<std::string_view, std::string_view> kIrregular = {
        {"filp", "file"},
        {"cred_jar", "cred"},
        {"sock_inode_cache", "socket_alloc"},
        {"mnt_cache", "mount"},
        {"skbuff_head_cache", "sk_buff"},
        {"skbuff_fclone_cache", "sk_buff_fclones"},
        {"bdev_cache", "bdev_inode"},
        {"file_lock_cache", "file_lock"},
        {"file_lock_ctx", "file_lock_context"},
        {"file_lease_cache", "file_lease"},
        {"posix_timers_cache", "k_itimer"},
        {"key_jar", "key"},
        {"numa_policy", "mempolicy"},
        {"blkdev_ioc", "io_context"},
        {"net_namespace", "net"},
        {"eventpoll_epi", "epitem"},
        {"eventpoll_pwq", "eppoll_entry"},
        {"ext4_groupinfo_4k", "ext4_group_info"},
        {"jbd2_journal_head", "journal_head"},
        {"xfs_ili", "xfs_inode_log_item"},
        {"TCP", "tcp_sock"},
        {"TCPv6", "tcp6_sock"},
        {"UDP", "udp_sock"},
        {"UDPv6", "udp6_sock"},
        {"UDP-Lite", "udp_sock"},
        {"UDPLITEv6", "udp6_sock"},
        {"UNIX", "unix_sock"},
        {"UNIX-STREAM", "unix_sock"},
        {"RAW", "raw_sock"},
        {"RAWv6", "raw6_sock"},
        {"PING", "inet_sock"},
        {"PINGv6", "raw6_sock"},
        {"MPTCP", "mptcp_sock"},
        {"NETLINK", "netlink_sock"},
        {"tw_sock_TCP", "tcp_timewait_sock"},
        {"tw_sock_TCPv6", "tcp_timewait_sock"},
        {"request_sock_TCP", "tcp_request_sock"},
        {"request_sock_TCPv6", "tcp6_request_sock"},
        {"pid", "pid"},
    };
    std::vector<std::string> out;
    auto add = [&](std::string_view n) {
        if (!n.empty() && std::find(out.begin(), out.end(), n) == out.end())
            out.emplace_back(n);
    };
    if (auto it = kIrregular.find(cache_name); it != kIrregular.end())
        add(it->second);
    std::string stem(cache_name);
    for (std::string_view suffix : {"_cachep", "_cache", "_jar", "_slab", "-cache"}) {
        if (stem.size() > suffix.size() && stem.compare(stem.size() - suffix.size(), suffix.size(), suffix) == 0) {
            stem.resize(stem.size() - suffix.size());
            break;
        }
    }
    add(cache_name);
    add(stem);
    add(stem + "_info");
    add(stem + "_struct");
    add(stem + "_alloc");
    return out;
}

}  // namespace lockscope::identity
