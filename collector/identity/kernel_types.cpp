#include "identity/kernel_types.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <iterator>

#include "bpfmap/vmlinux_btf.h"
#include "core/enum_names.h"

namespace lockscope::identity {
namespace {

using Names = std::initializer_list<std::string_view>;
constexpr std::string_view kSpin[] = {"spinlock_t",   "spinlock",        "raw_spinlock_t",
                                      "raw_spinlock", "arch_spinlock_t", "qspinlock"};
constexpr std::string_view kWrappers[] = {"lockref",
                                          "wait_queue_head",
                                          "swait_queue_head",
                                          "completion",
                                          "xarray",
                                          "idr",
                                          "percpu_counter",
                                          "ratelimit_state",
                                          "seqcount_spinlock",
                                          "seqcount_raw_spinlock",
                                          "rcuwait",
                                          "kref",
                                          "list_lru_one",
                                          "rwlock_t",
                                          "seqlock_t",
                                          "spinlock_t",
                                          "raw_spinlock_t",
                                          "local_lock_t"};

// Type names (struct, union or typedef) a family's lock can be.
bool family_has(LockFamily f, std::string_view name)
{
    auto in = [&](Names names) { return std::find(names.begin(), names.end(), name) != names.end(); };
    switch (f) {
        case LockFamily::Mutex:
            return in({"mutex"});
        case LockFamily::RtMutex:
            return in({"mutex", "rt_mutex", "rt_mutex_base", "spinlock_t", "spinlock"});
        case LockFamily::Rwsem:
            return in({"rw_semaphore"});
        case LockFamily::RtRwlock:
            return in({"rw_semaphore", "rwlock_t", "rwbase_rt"});
        case LockFamily::PercpuRwsem:
            return in({"percpu_rw_semaphore"});
        case LockFamily::Semaphore:
            return in({"semaphore"});
        case LockFamily::Spinlock:
            return std::find(std::begin(kSpin), std::end(kSpin), name) != std::end(kSpin);
        case LockFamily::Rwlock:
            return in({"rwlock_t", "qrwlock", "arch_rwlock_t"});
    }
    return false;
}

constexpr std::array kFamilies = {LockFamily::Mutex,    LockFamily::RtMutex,     LockFamily::Rwsem,
                                  LockFamily::RtRwlock, LockFamily::PercpuRwsem, LockFamily::Semaphore,
                                  LockFamily::Spinlock, LockFamily::Rwlock};

// Structs that wrap a lock for a purpose of their own: a class is named after
// the object that holds them ("dentry.d_lockref.lock", not "lockref.lock").
bool is_lock_wrapper(std::string_view name)
{
    if (std::find(std::begin(kWrappers), std::end(kWrappers), name) != std::end(kWrappers))
        return true;
    for (LockFamily f : kFamilies)
        if (family_has(f, name))
            return true;
    return false;
}

}  // namespace

std::optional<LockFamily> lock_family(std::string_view kind)
{
    // lock_kind()'s names, in LockFamily's order.
    static constexpr std::array<const char*, 8> kKinds{"mutex",        "rtmutex",   "rwsem",    "rt-rwlock",
                                                       "percpu-rwsem", "semaphore", "spinlock", "rwlock"};
    return enum_value<LockFamily::Rwlock>(kKinds, kind);
}

std::unique_ptr<KernelTypes> KernelTypes::load_vmlinux(std::string* why)
{
    int err = 0;
    const btf* b = probe::vmlinux_btf(&err);
    if (!b) {
        if (why)
            *why = std::string("the kernel's BTF cannot be read (/sys/kernel/btf/vmlinux: ") + std::strerror(err) + ")";
        return nullptr;
    }
    return std::make_unique<KernelTypes>(b);
}

KernelTypes::KernelTypes(btf* b) : KernelTypes(static_cast<const btf*>(b))
{
    owned_ = b;
}

KernelTypes::KernelTypes(const btf* b) : btf_(b)
{
    const uint32_t n = btf__type_cnt(b);
    for (uint32_t id = 1; id < n; id++) {
        const btf_type* t = btf__type_by_id(b, id);
        if (btf_is_datasec(t) && std::strcmp(btf__name_by_offset(b, t->name_off), ".data..percpu") == 0) {
            const btf_var_secinfo* v = btf_var_secinfos(t);
            for (uint16_t i = 0; i < btf_vlen(t); i++, v++) {
                const btf_type* var = btf__type_by_id(b, v->type);
                if (!var || !btf_is_var(var))
                    continue;
                percpu_.push_back({btf__name_by_offset(b, var->name_off), var->type, v->offset, v->size});
                percpu_size_ = std::max<uint64_t>(percpu_size_, uint64_t(v->offset) + v->size);
            }
        }
    }
    std::sort(percpu_.begin(), percpu_.end(),
              [](const PercpuVar& x, const PercpuVar& y) { return x.offset < y.offset; });
}

KernelTypes::~KernelTypes()
{
    btf__free(owned_);
}

std::optional<uint32_t> KernelTypes::named_type(std::string_view name) const
{
    // Few distinct names are asked (the candidates of the slab caches seen):
    // a linear search each, remembered, costs less memory than an index of
    // every struct in the kernel.
    const std::string key(name);
    auto it = named_.find(key);
    if (it != named_.end())
        return it->second ? std::optional<uint32_t>(it->second) : std::nullopt;
    int id = btf__find_by_name_kind(btf_, key.c_str(), BTF_KIND_STRUCT);
    if (id <= 0)
        id = btf__find_by_name_kind(btf_, key.c_str(), BTF_KIND_UNION);
    named_[key] = id > 0 ? uint32_t(id) : 0;
    return id > 0 ? std::optional<uint32_t>(uint32_t(id)) : std::nullopt;
}

uint64_t KernelTypes::size_of(uint32_t type_id) const
{
    const long size = btf__resolve_size(btf_, type_id);
    return size > 0 ? uint64_t(size) : 0;
}

std::string KernelTypes::name_of(uint32_t type_id) const
{
    const btf_type* t = btf__type_by_id(btf_, type_id);
    return t && t->name_off ? btf__name_by_offset(btf_, t->name_off) : "";
}

bool KernelTypes::has_function(std::string_view name) const
{
    return btf__find_by_name_kind(btf_, std::string(name).c_str(), BTF_KIND_FUNC) > 0;
}

bool KernelTypes::flexible_array(uint32_t type_id) const
{
    const btf_type* t = btf__type_by_id(btf_, type_id);
    return t && btf_is_array(t) && btf_array(t)->nelems == 0;
}

uint32_t KernelTypes::pointee_struct(uint32_t type_id) const
{
    const btf_type* t = btf__type_by_id(btf_, btf__resolve_type(btf_, type_id));
    if (!t || !btf_is_ptr(t))
        return 0;
    const int id = btf__resolve_type(btf_, t->type);
    const btf_type* target = id > 0 ? btf__type_by_id(btf_, id) : nullptr;
    return target && btf_is_composite(target) && target->name_off ? uint32_t(id) : 0;
}

const std::vector<KernelTypes::Reached>& KernelTypes::types_reached_from(std::string_view function) const
{
    const std::string name(function.substr(0, function.find('.')));
    const auto [it, fresh] = reached_.try_emplace(name);
    std::vector<Reached>& out = it->second;
    if (!fresh)
        return out;
    const int fn = name.empty() ? -1 : btf__find_by_name_kind(btf_, name.c_str(), BTF_KIND_FUNC);
    const btf_type* proto = fn > 0 ? btf__type_by_id(btf_, btf__type_by_id(btf_, fn)->type) : nullptr;
    if (!proto || !btf_is_func_proto(proto))
        return out;
    const btf_param* p = btf_params(proto);
    for (uint16_t i = 0; i < btf_vlen(proto); i++, p++) {
        const uint32_t type = pointee_struct(p->type);
        if (!type)
            continue;
        const std::string param = p->name_off ? btf__name_by_offset(btf_, p->name_off) : "arg" + std::to_string(i);
        out.push_back({name_of(type), param, 0});
        // Its pointer members, anonymous structs and unions included.
        std::vector<uint32_t> todo{type};
        while (!todo.empty()) {
            const btf_type* t = btf__type_by_id(btf_, todo.back());
            todo.pop_back();
            const btf_member* m = btf_members(t);
            for (uint16_t k = 0; k < btf_vlen(t); k++, m++) {
                if (!m->name_off) {
                    const int inner = btf__resolve_type(btf_, m->type);
                    if (inner > 0 && btf_is_composite(btf__type_by_id(btf_, inner)))
                        todo.push_back(uint32_t(inner));
                } else if (const uint32_t to = pointee_struct(m->type)) {
                    out.push_back({name_of(to), param + "->" + btf__name_by_offset(btf_, m->name_off), 1});
                }
            }
        }
    }
    return out;
}

// Depth-first through members (anonymous ones, unions, arrays included),
// stopping at the first lock of the family that starts exactly at `offset`.
// `steps` collects (containing type, member name or "[i]").
bool KernelTypes::find(uint32_t id, uint64_t offset, LockFamily family,
                       std::vector<std::pair<uint32_t, std::string>>& steps, int depth) const
{
    if (depth > 32)
        return false;
    // A typedef's own name counts (spinlock_t, rwlock_t are typedefs).
    for (const btf_type* t = btf__type_by_id(btf_, id); t;) {
        if (btf_is_mod(t) || btf_is_typedef(t)) {
            if (btf_is_typedef(t) && offset == 0 && family_has(family, btf__name_by_offset(btf_, t->name_off)))
                return true;
            id = t->type;
            t = btf__type_by_id(btf_, id);
            continue;
        }
        break;
    }
    const btf_type* t = btf__type_by_id(btf_, id);
    if (!t)
        return false;
    if (offset == 0 && t->name_off && family_has(family, btf__name_by_offset(btf_, t->name_off)))
        return true;
    if (btf_is_composite(t)) {
        const btf_member* m = btf_members(t);
        for (uint16_t i = 0; i < btf_vlen(t); i++, m++) {
            if (btf_member_bitfield_size(t, i))
                continue;
            const uint64_t start = btf_member_bit_offset(t, i) / 8;
            const uint64_t size = size_of(m->type);
            // A flexible array at the end reaches past the struct's size.
            const bool open_end = i + 1 == btf_vlen(t) && flexible_array(m->type);
            if (offset < start || (!open_end && offset >= start + size))
                continue;
            steps.emplace_back(id, m->name_off ? btf__name_by_offset(btf_, m->name_off) : "");
            if (find(m->type, offset - start, family, steps, depth + 1))
                return true;
            steps.pop_back();
        }
        return false;
    }
    if (btf_is_array(t)) {
        const struct btf_array* a = btf_array(t);
        const uint64_t elem = size_of(a->type);
        if (elem == 0 || (a->nelems && offset / elem >= a->nelems))
            return false;
        steps.emplace_back(id, "[" + std::to_string(offset / elem) + "]");
        if (find(a->type, offset % elem, family, steps, depth + 1))
            return true;
        steps.pop_back();
    }
    return false;
}

MemberPath KernelTypes::describe(uint32_t root, const std::vector<std::pair<uint32_t, std::string>>& steps) const
{
    MemberPath p;
    p.root = name_of(root);
    for (const auto& [container, step] : steps) {
        if (step.empty())
            continue;  // an anonymous struct or union
        if (!p.path.empty() && step[0] != '[')
            p.path += '.';
        p.path += step;
    }
    // The innermost named struct or union that is neither a lock nor a
    // lock's wrapper names the class; array indices become [].
    size_t from = 0;
    std::string owner;
    for (size_t i = steps.size(); i-- > 0;) {
        const std::string name = name_of(steps[i].first);
        if (!name.empty() && !is_lock_wrapper(name)) {
            from = i;
            owner = name;
            break;
        }
    }
    std::string members;
    for (size_t i = from; i < steps.size(); i++) {
        const std::string& step = steps[i].second;
        if (step.empty())
            continue;
        if (step[0] == '[') {
            members += "[]";
            continue;
        }
        if (!members.empty())
            members += '.';
        members += step;
    }
    p.class_name = owner.empty() ? members : owner + (members.empty() ? "" : "." + members);
    return p;
}

std::optional<MemberPath> KernelTypes::lock_at(uint32_t type_id, uint64_t offset, LockFamily family) const
{
    std::vector<std::pair<uint32_t, std::string>> steps;
    if (!find(type_id, offset, family, steps, 0))
        return std::nullopt;
    return describe(type_id, steps);
}

std::vector<MemberPath> KernelTypes::types_with_lock_at(uint64_t min_size, uint64_t max_size, uint64_t offset,
                                                        LockFamily family) const
{
    std::vector<MemberPath> out;
    const uint32_t n = btf__type_cnt(btf_);
    for (uint32_t id = 1; id < n; id++) {
        const btf_type* t = btf__type_by_id(btf_, id);
        if (!btf_is_composite(t) || !t->name_off)
            continue;
        const std::string_view name = btf__name_by_offset(btf_, t->name_off);
        const uint64_t size = t->size;
        // A struct ending in a flexible array (a header and its elements)
        // is allocated larger than its size: any size up to the range fits.
        const bool open_end = btf_vlen(t) && flexible_array(btf_members(t)[btf_vlen(t) - 1].type);
        if (size > max_size || is_lock_wrapper(name) || (!open_end && (size <= min_size || offset >= size)))
            continue;
        if (auto p = lock_at(id, offset, family))
            out.push_back(std::move(*p));
    }
    std::sort(out.begin(), out.end(), [](const MemberPath& a, const MemberPath& b) { return a.root < b.root; });
    return out;
}

std::optional<uint64_t> KernelTypes::member_offset(uint32_t type_id, std::string_view path) const
{
    uint64_t offset = 0;
    uint32_t id = type_id;
    while (!path.empty()) {
        const size_t dot = path.find('.');
        const std::string_view want = path.substr(0, dot);
        path = dot == std::string_view::npos ? std::string_view() : path.substr(dot + 1);
        // Search this struct and its anonymous members for `want`.
        std::vector<std::pair<uint32_t, uint64_t>> todo{{id, 0}};
        bool found = false;
        while (!todo.empty() && !found) {
            auto [cur, base] = todo.back();
            todo.pop_back();
            const btf_type* t = btf__type_by_id(btf_, btf__resolve_type(btf_, cur));
            if (!t || !btf_is_composite(t))
                continue;
            const btf_member* m = btf_members(t);
            for (uint16_t i = 0; i < btf_vlen(t); i++, m++) {
                const uint64_t at = base + btf_member_bit_offset(t, i) / 8;
                if (!m->name_off) {
                    todo.emplace_back(m->type, at);
                } else if (btf__name_by_offset(btf_, m->name_off) == want) {
                    offset += at;
                    id = m->type;
                    found = true;
                    break;
                }
            }
        }
        if (!found)
            return std::nullopt;
    }
    return offset;
}

const KernelTypes::PercpuVar* KernelTypes::percpu_var_at(uint64_t offset) const
{
    auto it = std::upper_bound(percpu_.begin(), percpu_.end(), offset,
                               [](uint64_t o, const PercpuVar& v) { return o < v.offset; });
    if (it == percpu_.begin())
        return nullptr;
    --it;
    return offset < it->offset + it->size ? &*it : nullptr;
}

const KernelTypes::PercpuVar* KernelTypes::percpu_var(std::string_view name) const
{
    for (const PercpuVar& v : percpu_)
        if (v.name == name)
            return &v;
    return nullptr;
}

}  // namespace lockscope::identity
