#include "identity/data_namer.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <set>

#include "lockscope_abi.h"

namespace lockscope::identity {
namespace {

std::string hex(uint64_t v)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)v);
    return buf;
}

// The kernel's dev_t: 12 bits of major above 20 bits of minor.
std::string device(uint32_t dev)
{
    return std::to_string(dev >> 20) + ":" + std::to_string(dev & 0xfffff);
}

// "unix_sock" -> "unix", "signal_struct" -> "signal": the part of a type's
// name a function working on it is likely to carry.
std::string type_stem(const std::string& type)
{
    for (const char* suffix : {"_sock", "_struct", "_info", "_inode", "_alloc"}) {
        const size_t n = std::strlen(suffix);
        if (type.size() > n + 2 && type.compare(type.size() - n, n, suffix) == 0)
            return type.substr(0, type.size() - n);
    }
    return type;
}

std::string instance_of(const std::string& cls, const RawIdentity& id)
{
    if (cls == "inode.i_rwsem" && (id.sources & LS_IDENT_INODE_READ) && id.inode_ino) {
        std::string s = "inode " + std::to_string(id.inode_ino);
        if (!id.fs_type.empty())
            s += " on " + id.fs_type + " (" + device(id.inode_dev) + ")";
        if (!id.dentry_name.empty())
            s += " '" + id.dentry_name + "'";
        return s;
    }
    if (id.task_member == LS_TASK_PIPE && id.inode_ino)
        return "pipe:[" + std::to_string(id.inode_ino) + "]";
    if (id.task_member == LS_TASK_FUTEX_HASH && id.tgid)
        return "futex hash of process " + std::to_string(id.tgid);
    if (cls == "mm_struct.mmap_lock" && id.task_member == LS_TASK_MMAP_LOCK && id.tgid)
        return "mm of process " + std::to_string(id.tgid);
    return {};
}

}  // namespace

std::shared_ptr<KernelDataNamer> KernelDataNamer::for_running_kernel(const KernelSymbols& syms,
                                                                     const std::vector<uint64_t>& runqueues,
                                                                     bool slab_lookup,
                                                                     std::vector<std::string>& warnings)
{
    Sources s;
    std::string why;
    s.types = KernelTypes::load_vmlinux(&why);
    if (!s.types)
        warnings.push_back("lock names from slab objects and per-CPU data are unavailable: " + why);
    s.slabs = SlabCaches::load();
    s.image = KernelImage::load(syms, warnings);
    s.slab_lookup = slab_lookup && s.types;
    s.page_size = uint64_t(sysconf(_SC_PAGESIZE));
    const KernelTypes::PercpuVar* rq = s.types ? s.types->percpu_var("runqueues") : nullptr;
    for (uint64_t a : runqueues)
        s.percpu_bases.push_back(rq && a ? a - rq->offset : 0);
    s.global_status = syms.has_data_symbols() ? "kallsyms data symbols"
                      : s.image.has_symbols()
                          ? s.image.system_map_status()
                          : "unavailable (no data symbols in kallsyms, " + s.image.system_map_status() + ")";
    return std::make_shared<KernelDataNamer>(std::move(s));
}

std::string KernelDataNamer::summary() const
{
    std::string out;
    out += std::string("slab: ") + (s_.slab_lookup ? "bpf_get_kmem_cache + BTF" : "unavailable (needs 6.13+ and BTF)");
    if (s_.slab_lookup && !s_.slabs.available())
        out += " (no /sys/kernel/slab: merged caches unknown)";
    out += "; global: " + s_.global_status;
    out += "; percpu: ";
    size_t cpus = std::count_if(s_.percpu_bases.begin(), s_.percpu_bases.end(), [](uint64_t b) { return b != 0; });
    out += s_.types && cpus ? "BTF .data..percpu, " + std::to_string(cpus) + " CPUs" : "unavailable";
    out += "; task: current task's members; kernel-data: ";
    out += s_.image.has_ranges() ? "/proc/iomem" : "unknown";
    return out;
}

// Where the object that holds `address` starts: slabs are 2^order pages,
// aligned to their size; the fallback order is tried after the usual one.
std::vector<uint64_t> KernelDataNamer::object_offsets(uint64_t address, const RawIdentity& id) const
{
    std::vector<uint64_t> out;
    if (id.slab_size == 0)
        return out;
    for (uint16_t order : {id.order, id.min_order}) {
        if (order > 10)
            continue;
        const uint64_t bytes = s_.page_size << order;
        const uint64_t rel = address & (bytes - 1);
        if (rel < id.red_left_pad)
            continue;
        const uint64_t off = (rel - id.red_left_pad) % id.slab_size;
        if (off < id.object_size && std::find(out.begin(), out.end(), off) == out.end())
            out.push_back(off);
    }
    return out;
}

bool KernelDataNamer::from_slab(uint64_t address, LockFamily family, const std::string& kind, const RawIdentity& id,
                                const std::string& caller, const std::string& caller_class, Result& r) const
{
    const std::vector<uint64_t> offsets = object_offsets(address, id);
    if (offsets.empty())
        return false;
    std::string where = id.cache_name + " +" + hex(offsets[0]);
    if (is_generic_cache(id.cache_name))
        return from_generic_cache(offsets, family, kind, id, caller, caller_class, r);
    // Every cache merged into this one may own the object.
    struct Match {
        std::string cls, root, path;
        uint64_t offset;
    };
    std::vector<Match> matches;
    std::set<std::string> tried;
    const std::vector<std::string> names = s_.slabs.merged_with(id.cache_name);
    // A cache is made for sizeof(type), or a word more when merged. Some
    // objects carry a tail of their own past the struct (task_struct the FPU
    // state, mm_struct its cpumasks): only when no candidate has the exact
    // size, in a cache nothing was merged into and named after the type
    // itself, a smaller type fits.
    std::vector<std::pair<std::string, uint32_t>> exact, smaller;
    for (const std::string& cache : names) {
        for (const std::string& type_name : candidate_types(cache)) {
            const auto type = s_.types->named_type(type_name);
            if (!type || !tried.insert(type_name).second)
                continue;
            const uint64_t size = s_.types->size_of(*type);
            if (size == id.object_size || (names.size() > 1 && size < id.object_size && id.object_size - size <= 8))
                exact.emplace_back(type_name, *type);
            else if (names.size() == 1 && type_name == cache && size > 0 && size < id.object_size)
                smaller.emplace_back(type_name, *type);
        }
    }
    // The usual slab order first; the fallback order only if that finds nothing.
    for (uint64_t off : offsets) {
        for (const auto& [type_name, type] : exact.empty() ? smaller : exact)
            if (auto p = s_.types->lock_at(type, off, family))
                matches.push_back({p->class_name, p->root, p->path, off});
        if (!matches.empty())
            break;
    }
    std::set<std::string> classes;
    for (const Match& m : matches)
        classes.insert(m.cls);
    const std::string merged =
        names.size() > 1 ? " (merged with " + std::to_string(names.size() - 1) + " other caches)" : "";
    // Caches merged into one hold several types; when more than one has such
    // a lock there, the waiting function may name one of them
    // (unix_stream_read_generic: struct unix_sock), and only then it decides.
    std::string picked_by;
    if (classes.size() > 1 && !caller.empty()) {
        std::vector<const Match*> named;
        for (const Match& m : matches)
            if (caller.find(type_stem(m.root)) != std::string::npos)
                named.push_back(&m);
        if (!named.empty() &&
            std::all_of(named.begin(), named.end(), [&](const Match* m) { return m->cls == named.front()->cls; })) {
            picked_by = "; of " + std::to_string(classes.size()) + " types with such a lock there, the caller " +
                        caller + " names this one";
            const Match chosen = *named.front();
            matches = {chosen};
            classes = {chosen.cls};
        }
    }
    if (classes.size() != 1) {
        r.detail = where + merged +
                   (classes.empty() ? ": no " + kind + " member there in the types this cache holds"
                                    : ": ambiguous between " + std::to_string(classes.size()) + " types");
        return false;
    }
    const Match& m = matches.front();
    r.name = m.cls;
    r.source = NameSource::Slab;
    r.detail = id.cache_name + merged + ": struct " + m.root + " +" + hex(m.offset) + " (" + m.path + ")" + picked_by;
    r.instance = instance_of(m.cls, id);
    return true;
}

// A generic cache (kmalloc-*) holds objects of any type of its size range.
// The type is inferred only when exactly one type in BTF of that size has a
// lock of this kind at this offset; otherwise the offset and size stay as
// evidence, checked against the caller table's class when there is one.
bool KernelDataNamer::from_generic_cache(const std::vector<uint64_t>& offsets, LockFamily family,
                                         const std::string& kind, const RawIdentity& id, const std::string& caller,
                                         const std::string& caller_class, Result& r) const
{
    const auto [below, size] = generic_size_range(id.cache_name);
    const std::string range = std::to_string(below + 1) + "-" + std::to_string(size) + " bytes";
    const std::string where = id.cache_name + " +" + hex(offsets[0]);
    const uint64_t offset = offsets[0];  // kmalloc slabs hold one object size: both orders agree
    const auto key = std::make_tuple(id.cache_name, offset, int(family));
    auto cached = generic_cache_.find(key);
    if (cached == generic_cache_.end())
        cached = generic_cache_.emplace(key, s_.types->types_with_lock_at(below, size, offset, family)).first;
    const std::vector<MemberPath>& candidates = cached->second;
    std::set<std::string> classes;
    for (const MemberPath& p : candidates)
        classes.insert(p.class_name);
    // The caller table's class is only a check when it is a class of its own
    // ("pipe_inode_info.mutex"), not a kind@caller stand-in.
    const bool caller_is_class = caller_class.find('@') == std::string::npos && !caller_class.empty();
    if (classes.size() == 1 && (!caller_is_class || *classes.begin() == caller_class)) {
        const MemberPath& p = candidates.front();
        r.name = p.class_name;
        r.source = NameSource::Slab;
        const auto root = s_.types->named_type(p.root);
        const uint64_t root_size = root ? s_.types->size_of(*root) : 0;
        const std::string shape =
            root_size <= below ? " (a header of " + std::to_string(root_size) + " bytes and a flexible array)" : "";
        r.detail = where + ": inferred, struct " + p.root + shape + " (" + p.path + ") is the only type of " + range +
                   " with a " + kind + " there (a generic cache holds objects of any type)";
        r.instance = instance_of(p.class_name, id);
        return true;
    }
    // Several types fit. The waiting function's prototype may name one of
    // them: its parameters point to it, or to a struct that points to it
    // (evict(struct inode *) reaches the super_block through inode->i_sb).
    // The nearest depth that reaches exactly one candidate decides.
    if (classes.size() > 1 && !caller.empty()) {
        const std::vector<KernelTypes::Reached> reached = s_.types->types_reached_from(caller);
        for (int depth = 0; depth <= 1; depth++) {
            std::set<std::string> hit;
            const MemberPath* chosen = nullptr;
            std::string via;
            for (const MemberPath& p : candidates)
                for (const KernelTypes::Reached& t : reached)
                    if (t.depth == depth && t.type == p.root && hit.insert(p.class_name).second) {
                        chosen = &p;
                        via = t.via;
                    }
            if (hit.size() > 1)
                break;
            if (hit.size() == 1 && (!caller_is_class || chosen->class_name == caller_class)) {
                r.name = chosen->class_name;
                r.source = NameSource::Slab;
                r.detail = where + ": inferred, struct " + chosen->root + " (" + chosen->path + "): of the " +
                           std::to_string(classes.size()) + " types of " + range + " with a " + kind +
                           " there, the only one the waiting function " + caller + " reaches (" + via + ")";
                r.instance = instance_of(chosen->class_name, id);
                return true;
            }
        }
    }
    r.detail = where + " (a generic cache: objects of " + range + ", type unknown; " +
               std::to_string(candidates.size()) + " types of that size have a " + kind + " there)";
    const size_t dot = caller_class.find('.');
    if (caller_is_class && dot != std::string::npos) {
        const auto type = s_.types->named_type(caller_class.substr(0, dot));
        const uint64_t tsize = type ? s_.types->size_of(*type) : 0;
        const auto member = type ? s_.types->member_offset(*type, caller_class.substr(dot + 1)) : std::nullopt;
        const bool fits = tsize > below && tsize <= size && member &&
                          std::find(offsets.begin(), offsets.end(), *member) != offsets.end();
        r.detail += fits ? "; consistent with " + caller_class + " (" + std::to_string(tsize) + " bytes)"
                         : "; does not fit " + caller_class;
    }
    return false;
}

// An object the waiting task reached in BPF, whose type the reach says: a
// pipe in its fd table, its process's private futex hash. BTF says which
// member the lock is.
bool KernelDataNamer::from_task_object(uint64_t address, LockFamily family, const RawIdentity& id, Result& r) const
{
    const char* type_name = id.task_member == LS_TASK_PIPE         ? "pipe_inode_info"
                            : id.task_member == LS_TASK_FUTEX_HASH ? "futex_private_hash"
                                                                   : nullptr;
    const auto type = type_name ? s_.types->named_type(type_name) : std::nullopt;
    if (!type || !id.object || address < id.object)
        return false;
    const uint64_t off = address - id.object;
    auto p = s_.types->lock_at(*type, off, family);
    if (!p)
        return false;
    r.name = p->class_name;
    r.source = NameSource::Task;
    r.detail = std::string(id.task_member == LS_TASK_PIPE ? "a pipe the waiter has open (its fd table)"
                                                          : "its process's private futex hash (mm->futex_phash)") +
               ": struct " + type_name + " +" + hex(off) + (p->path.empty() ? "" : " (" + p->path + ")") +
               (id.cache_name.empty() ? "" : ", in " + id.cache_name);
    r.instance = instance_of(r.name, id);
    if (id.task_member == LS_TASK_FUTEX_HASH)
        r.instance += ", " + p->path.substr(0, p->path.find('.'));  // its bucket: "queues[14]"
    return true;
}

bool KernelDataNamer::from_percpu(uint64_t address, LockFamily family, Result& r) const
{
    const uint64_t size = s_.types->percpu_size();
    for (size_t cpu = 0; cpu < s_.percpu_bases.size(); cpu++) {
        const uint64_t base = s_.percpu_bases[cpu];
        if (!base || address < base || address - base >= size)
            continue;
        const uint64_t off = address - base;
        const KernelTypes::PercpuVar* var = s_.types->percpu_var_at(off);
        if (!var)
            return false;
        auto p = s_.types->lock_at(var->type_id, off - var->offset, family);
        if (!p)
            return false;
        // A struct names the class ("rq.__lock"); a lock variable itself, or
        // an array of them, by the variable's name.
        r.name = p->class_name.empty() || p->class_name[0] == '[' ? var->name + p->class_name : p->class_name;
        r.source = NameSource::Percpu;
        r.detail =
            "per-CPU " + var->name + " +" + hex(off - var->offset) + (p->path.empty() ? "" : " (" + p->path + ")");
        r.instance = "CPU " + std::to_string(cpu);
        return true;
    }
    return false;
}

DataNamer::Result KernelDataNamer::name(uint64_t address, uint32_t flags, const RawIdentity& identity,
                                        const std::string& caller, const std::string& caller_class) const
{
    Result r;
    const LockKindInfo kind = lock_kind(flags);
    const auto family = lock_family(kind.kind);
    if (!family)
        return r;
    if (s_.types && identity.object && from_task_object(address, *family, identity, r))
        return r;
    if (s_.types && identity.cache && from_slab(address, *family, kind.kind, identity, caller, caller_class, r))
        return r;
    if (auto sym = s_.image.symbol(address)) {
        r.name = *sym;
        r.source = NameSource::Global;
        r.detail = "System.map";
        return r;
    }
    if (s_.types && from_percpu(address, *family, r))
        return r;
    r.kernel_image = s_.image.in_data(address);
    return r;
}

}  // namespace lockscope::identity
