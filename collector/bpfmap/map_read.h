// Batched reads of BPF maps into user space.
#pragma once

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace lockscope::probe {

// Calls visit(key, values) for each entry of a hash map, where values points
// at per_key values: one per possible CPU for a per-CPU map, else one. In
// batches: with thousands of keys that is one system call per 256 keys
// instead of two per key; kernels without batch lookups (or a batch that
// fails midway) fall back to walking the keys.
template <typename Key, typename Value, typename Visit>
void for_each_entry(bpf_map* map, uint32_t per_key, Visit visit)
{
    constexpr uint32_t kBatch = 256;
    std::vector<Key> keys(kBatch);
    std::vector<Value> values(size_t(kBatch) * per_key);
    std::vector<Key> all_keys;      // visited only once the whole map is read, so a
    std::vector<Value> all_values;  // failure midway can fall back without duplicates
    uint32_t token = 0;
    bool first = true, batch_ok = true;
    for (;;) {
        uint32_t count = kBatch;
        LIBBPF_OPTS(bpf_map_batch_opts, opts);
        const int err = bpf_map_lookup_batch(bpf_map__fd(map), first ? nullptr : &token, &token, keys.data(),
                                             values.data(), &count, &opts);
        const int e = err ? errno : 0;
        if (err && e != ENOENT) {
            batch_ok = false;  // EINVAL/EOPNOTSUPP: no batch support; ENOSPC: a bucket outgrew the batch
            break;
        }
        first = false;
        all_keys.insert(all_keys.end(), keys.begin(), keys.begin() + count);
        all_values.insert(all_values.end(), values.begin(), values.begin() + ptrdiff_t(size_t(count) * per_key));
        if (e == ENOENT)
            break;
    }
    if (batch_ok) {
        for (size_t i = 0; i < all_keys.size(); i++)
            visit(all_keys[i], &all_values[i * per_key]);
        return;
    }
    std::vector<Value> value(per_key);
    Key key{}, next{};
    const Key* prev = nullptr;
    while (bpf_map__get_next_key(map, prev, &next, sizeof next) == 0) {
        key = next;
        prev = &key;
        if (bpf_map__lookup_elem(map, &key, sizeof key, value.data(), value.size() * sizeof(Value), 0) == 0)
            visit(key, value.data());
    }
}

// Rows [0, rows) of a per-CPU array, each as cpus values, in batches of 256
// rows (one row at a time where batch lookups are missing).
template <typename Value>
std::vector<Value> read_percpu_rows(bpf_map* map, uint32_t rows, uint32_t cpus)
{
    constexpr uint32_t kBatch = 256;
    std::vector<Value> out(size_t(rows) * cpus);
    std::vector<uint32_t> keys(kBatch);
    uint32_t done = 0, token = 0;
    while (done < rows) {
        uint32_t count = std::min(kBatch, rows - done);
        LIBBPF_OPTS(bpf_map_batch_opts, opts);
        const int err = bpf_map_lookup_batch(bpf_map__fd(map), done ? &token : nullptr, &token, keys.data(),
                                             &out[size_t(done) * cpus], &count, &opts);
        if (err && errno != ENOENT)
            break;
        done += count;
        if (err || count == 0)
            break;
    }
    for (uint32_t row = done; row < rows; row++)
        bpf_map__lookup_elem(map, &row, sizeof row, &out[size_t(row) * cpus], size_t(cpus) * sizeof(Value), 0);
    return out;
}

}  // namespace lockscope::probe
