// Name source `slab`: the slab object a lock lies in (bpf_get_kmem_cache,
// 6.13+) and, through BTF, the member it is of the types that cache holds.
#include <algorithm>
#include <cstring>
#include <set>

#include "identity/kernel_data.h"
#include "identity/ladder.h"

namespace lockscope::identity {
namespace {

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

// Where the object that holds `address` starts: slabs are 2^order pages,
// aligned to their size; the fallback order is tried after the usual one.
std::vector<uint64_t> object_offsets(const KernelData::Sources& sources, uint64_t address, const RawIdentity& id)
{
    std::vector<uint64_t> out;
    if (id.slab_size == 0)
        return out;
    for (uint16_t order : {id.order, id.min_order}) {
        if (order > 10)
            continue;
        const uint64_t bytes = sources.page_size << order;
        const uint64_t rel = address & (bytes - 1);
        if (rel < id.red_left_pad)
            continue;
        const uint64_t off = (rel - id.red_left_pad) % id.slab_size;
        if (off < id.object_size && std::find(out.begin(), out.end(), off) == out.end())
            out.push_back(off);
    }
    return out;
}

// A dedicated cache is checked below: declared before it.
bool from_generic_cache(const KernelData& data, const std::vector<uint64_t>& offsets, LockFamily family,
                        const std::string& kind, const RawIdentity& id, const std::string& caller,
                        const std::string& caller_class, LockIdentity& r);

bool from_slab(const KernelData& data, uint64_t address, LockFamily family, const std::string& kind,
               const RawIdentity& id, const std::string& caller, const std::string& caller_class, LockIdentity& r)
{
    const KernelData::Sources& sources = data.sources();
    const std::vector<uint64_t> offsets = object_offsets(sources, address, id);
    if (offsets.empty())
        return false;
    std::string where = id.cache_name + " +" + hex(offsets[0]);
    if (is_generic_cache(id.cache_name))
        return from_generic_cache(data, offsets, family, kind, id, caller, caller_class, r);
    // Every cache merged into this one may own the object.
    struct Match {
        std::string cls, root, path;
        uint64_t offset;
    };
    std::vector<Match> matches;
    std::set<std::string> tried;
    const std::vector<std::string> names = sources.slabs.merged_with(id.cache_name);
    // A cache is made for sizeof(type), or a word more when merged. Some
    // objects carry a tail of their own past the struct (task_struct the FPU
    // state, mm_struct its cpumasks): only when no candidate has the exact
    // size, in a cache nothing was merged into and named after the type
    // itself, a smaller type fits.
    std::vector<std::pair<std::string, uint32_t>> exact, smaller;
    for (const std::string& cache : names) {
        for (const std::string& type_name : candidate_types(cache)) {
            const auto type = sources.types->named_type(type_name);
            if (!type || !tried.insert(type_name).second)
                continue;
            const uint64_t size = sources.types->size_of(*type);
            if (size == id.object_size || (names.size() > 1 && size < id.object_size && id.object_size - size <= 8))
                exact.emplace_back(type_name, *type);
            else if (names.size() == 1 && type_name == cache && size > 0 && size < id.object_size)
                smaller.emplace_back(type_name, *type);
        }
    }
    // The usual slab order first; the fallback order only if that finds nothing.
    for (uint64_t off : offsets) {
        for (const auto& [type_name, type] : exact.empty() ? smaller : exact)
            if (auto p = sources.types->lock_at(type, off, family))
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
bool from_generic_cache(const KernelData& data, const std::vector<uint64_t>& offsets, LockFamily family,
                        const std::string& kind, const RawIdentity& id, const std::string& caller,
                        const std::string& caller_class, LockIdentity& r)
{
    const KernelData::Sources& sources = data.sources();
    const auto [below, size] = generic_size_range(id.cache_name);
    const std::string range = std::to_string(below + 1) + "-" + std::to_string(size) + " bytes";
    const std::string where = id.cache_name + " +" + hex(offsets[0]);
    const uint64_t offset = offsets[0];  // kmalloc slabs hold one object size: both orders agree
    const std::vector<MemberPath>& candidates = data.generic_candidates(id.cache_name, below, size, offset, family);
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
        const auto root = sources.types->named_type(p.root);
        const uint64_t root_size = root ? sources.types->size_of(*root) : 0;
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
        const std::vector<KernelTypes::Reached>& reached = sources.types->types_reached_from(caller);
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
        const auto type = sources.types->named_type(caller_class.substr(0, dot));
        const uint64_t tsize = type ? sources.types->size_of(*type) : 0;
        const auto member = type ? sources.types->member_offset(*type, caller_class.substr(dot + 1)) : std::nullopt;
        const bool fits = tsize > below && tsize <= size && member &&
                          std::find(offsets.begin(), offsets.end(), *member) != offsets.end();
        r.detail += fits ? "; consistent with " + caller_class + " (" + std::to_string(tsize) + " bytes)"
                         : "; does not fit " + caller_class;
    }
    return false;
}

}  // namespace

bool source_slab(const LockEvidence& e, LockIdentity& out)
{
    if (!e.data || !e.family || !e.data->sources().types || !e.raw.cache)
        return false;
    return from_slab(*e.data, e.address, *e.family, e.kind.kind, e.raw, e.caller, e.caller_class, out);
}

}  // namespace lockscope::identity
