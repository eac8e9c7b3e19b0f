// Lock identity from kernel data (collector/identity): member paths in BTF,
// slab caches and their types, per-CPU variables, System.map. Small BTF
// blobs built here give exact layouts; the running kernel's BTF checks the
// classes real locks get.
#include <bpf/btf.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <memory>

#include "identity/kernel_data.h"
#include "identity/ladder.h"
#include "identity/kernel_image.h"
#include "identity/kernel_types.h"
#include "identity/slab_caches.h"
#include "lockscope_abi.h"
#include "temp_dir.h"

namespace lockscope::identity {
namespace {

// struct spinlock { int val; };                 typedef struct spinlock spinlock_t;
// struct mutex { long owner; spinlock_t wait_lock; int pad; };           16 bytes
// struct inner { int a; int b; struct mutex m; };                         24 bytes
// struct outer { long x; union { struct inner in; long y; }; spinlock_t locks[4]; };  48 bytes
// struct first { struct mutex m; int z; int w; };                         24 bytes
// struct other24 { long p; struct mutex q; };                             24 bytes
// struct plain24 { long a, b, c; };                                       24 bytes
// struct holder { struct other24 *o; long n; };                           16 bytes
// struct pipe_inode_info { struct mutex mutex; long a, b, c; };           40 bytes
// struct futex_private_hash { long n; struct first queues[]; };  8 bytes + 24 per item
// functions: other24_get(struct other24 *), through_holder(struct holder *h),
//   both(struct inner *, struct other24 *), nothing(int)
// per-CPU: VAR runqueues (struct outer) at 64, VAR lonely (spinlock_t) at 128
struct Blob {
    btf* b = btf__new_empty();
    int i32 = 0, i64 = 0, spin = 0, spin_t = 0, mutex = 0, inner = 0, outer = 0, first = 0;
    Blob()
    {
        i32 = btf__add_int(b, "int", 4, BTF_INT_SIGNED);
        i64 = btf__add_int(b, "long", 8, BTF_INT_SIGNED);
        spin = btf__add_struct(b, "spinlock", 4);
        btf__add_field(b, "val", i32, 0, 0);
        spin_t = btf__add_typedef(b, "spinlock_t", spin);
        mutex = btf__add_struct(b, "mutex", 16);
        btf__add_field(b, "owner", i64, 0, 0);
        btf__add_field(b, "wait_lock", spin_t, 64, 0);
        btf__add_field(b, "pad", i32, 96, 0);
        inner = btf__add_struct(b, "inner", 24);
        btf__add_field(b, "a", i32, 0, 0);
        btf__add_field(b, "b", i32, 32, 0);
        btf__add_field(b, "m", mutex, 64, 0);
        const int anon = btf__add_union(b, nullptr, 24);
        btf__add_field(b, "in", inner, 0, 0);
        btf__add_field(b, "y", i64, 0, 0);
        const int locks = btf__add_array(b, i32, spin_t, 4);
        outer = btf__add_struct(b, "outer", 48);
        btf__add_field(b, "x", i64, 0, 0);
        btf__add_field(b, nullptr, anon, 64, 0);
        btf__add_field(b, "locks", locks, 256, 0);
        first = btf__add_struct(b, "first", 24);
        btf__add_field(b, "m", mutex, 0, 0);
        btf__add_field(b, "z", i32, 128, 0);
        btf__add_field(b, "w", i32, 160, 0);
        const int other = btf__add_struct(b, "other24", 24);
        btf__add_field(b, "p", i64, 0, 0);
        btf__add_field(b, "q", mutex, 64, 0);
        const int plain = btf__add_struct(b, "plain24", 24);
        btf__add_field(b, "a", i64, 0, 0);
        btf__add_field(b, "b", i64, 64, 0);
        btf__add_field(b, "c", i64, 128, 0);
        (void)plain;
        const int other_ptr = btf__add_ptr(b, other);  // types first: fields follow their struct
        const int holder = btf__add_struct(b, "holder", 16);
        btf__add_field(b, "o", other_ptr, 0, 0);
        btf__add_field(b, "n", i64, 64, 0);
        const int pipe = btf__add_struct(b, "pipe_inode_info", 40);
        btf__add_field(b, "mutex", mutex, 0, 0);
        btf__add_field(b, "a", i64, 128, 0);
        btf__add_field(b, "b", i64, 192, 0);
        btf__add_field(b, "c", i64, 256, 0);
        (void)pipe;
        const int items = btf__add_array(b, i32, first, 0);
        btf__add_struct(b, "futex_private_hash", 8);
        btf__add_field(b, "n", i64, 0, 0);
        btf__add_field(b, "queues", items, 64, 0);
        auto func = [&](const char* name, std::initializer_list<std::pair<const char*, int>> params) {
            const int proto = btf__add_func_proto(b, 0);
            for (const auto& [pname, type] : params)
                btf__add_func_param(b, pname, type);
            btf__add_func(b, name, BTF_FUNC_STATIC, proto);
        };
        const int holder_ptr = btf__add_ptr(b, holder), inner_ptr = btf__add_ptr(b, inner);
        func("other24_get", {{"o", other_ptr}});
        func("through_holder", {{"h", holder_ptr}});
        func("both", {{"a", inner_ptr}, {"b", other_ptr}});
        func("nothing", {{"x", i32}});
        const int rq = btf__add_var(b, "runqueues", BTF_VAR_GLOBAL_ALLOCATED, outer);
        const int lonely = btf__add_var(b, "lonely", BTF_VAR_GLOBAL_ALLOCATED, spin_t);
        btf__add_datasec(b, ".data..percpu", 256);
        btf__add_datasec_var_info(b, rq, 64, 48);
        btf__add_datasec_var_info(b, lonely, 128, 4);
    }
};

std::shared_ptr<KernelTypes> blob_types()
{
    Blob blob;
    return std::make_shared<KernelTypes>(blob.b);
}

TEST(KernelTypes, NestedMembersThroughAnonymousUnionsNameTheInnermostStruct)
{
    auto t = blob_types();
    const auto outer = t->named_type("outer");
    ASSERT_TRUE(outer);
    EXPECT_EQ(t->size_of(*outer), 48u);
    auto p = t->lock_at(*outer, 16, LockFamily::Mutex);  // x(8) + in.m at 8
    ASSERT_TRUE(p);
    EXPECT_EQ(p->class_name, "inner.m");
    EXPECT_EQ(p->path, "in.m");
    EXPECT_EQ(p->root, "outer");
    // The mutex's own spinlock, inside the same object.
    auto w = t->lock_at(*outer, 24, LockFamily::Spinlock);
    ASSERT_TRUE(w);
    EXPECT_EQ(w->class_name, "inner.m.wait_lock");
    // No rwsem there; nothing starts at 17.
    EXPECT_FALSE(t->lock_at(*outer, 16, LockFamily::Rwsem));
    EXPECT_FALSE(t->lock_at(*outer, 17, LockFamily::Mutex));
}

TEST(KernelTypes, ArraysOfLocksAndALockAtOffsetZero)
{
    auto t = blob_types();
    auto a = t->lock_at(*t->named_type("outer"), 32 + 2 * 4, LockFamily::Spinlock);
    ASSERT_TRUE(a);
    EXPECT_EQ(a->class_name, "outer.locks[]");
    EXPECT_EQ(a->path, "locks[2]");
    auto z = t->lock_at(*t->named_type("first"), 0, LockFamily::Mutex);
    ASSERT_TRUE(z);
    EXPECT_EQ(z->class_name, "first.m");
    // PREEMPT_RT's mutex is an rtmutex kind: the same member.
    auto rt = t->lock_at(*t->named_type("first"), 0, LockFamily::RtMutex);
    ASSERT_TRUE(rt);
    EXPECT_EQ(rt->class_name, "first.m");
    EXPECT_EQ(t->member_offset(*t->named_type("outer"), "in.m"), 16u);
    EXPECT_EQ(t->member_offset(*t->named_type("outer"), "locks"), 32u);
    EXPECT_FALSE(t->member_offset(*t->named_type("outer"), "nope"));
}

TEST(KernelTypes, PerCpuVariablesAndTypesOfASize)
{
    auto t = blob_types();
    EXPECT_EQ(t->percpu_size(), 132u);
    const auto* v = t->percpu_var_at(64 + 16);
    ASSERT_NE(v, nullptr);
    EXPECT_EQ(v->name, "runqueues");
    EXPECT_EQ(t->percpu_var_at(120), nullptr);  // between variables
    ASSERT_NE(t->percpu_var("lonely"), nullptr);
    // 17..32-byte objects with a mutex at 8: inner and other24 (not first,
    // not plain24), and the first of futex_private_hash's flexible array.
    auto c = t->types_with_lock_at(16, 32, 8, LockFamily::Mutex);
    ASSERT_EQ(c.size(), 3u);
    EXPECT_EQ(c[0].root + " " + c[0].path, "futex_private_hash queues[0].m");
    EXPECT_EQ(c[1].class_name, "inner.m");
    EXPECT_EQ(c[2].class_name, "other24.q");
}

TEST(KernelTypes, RunningKernelClasses)
{
    std::string why;
    auto t = KernelTypes::load_vmlinux(&why);
    ASSERT_TRUE(t) << why;
    auto check = [&](const char* type, const char* member, LockFamily f, const char* cls) {
        const auto id = t->named_type(type);
        ASSERT_TRUE(id) << type;
        const auto off = t->member_offset(*id, member);
        ASSERT_TRUE(off) << type << "." << member;
        auto p = t->lock_at(*id, *off, f);
        ASSERT_TRUE(p) << type << "." << member;
        EXPECT_EQ(p->class_name, cls);
    };
    check("mm_struct", "mmap_lock", LockFamily::Rwsem, "mm_struct.mmap_lock");
    check("sighand_struct", "siglock", LockFamily::Spinlock, "sighand_struct.siglock");
    check("task_struct", "pi_lock", LockFamily::Spinlock, "task_struct.pi_lock");
    check("inode", "i_rwsem", LockFamily::Rwsem, "inode.i_rwsem");
    check("pipe_inode_info", "mutex", LockFamily::Mutex, "pipe_inode_info.mutex");
    // dentry's lock is inside its lockref: named after the dentry.
    check("dentry", "d_lockref", LockFamily::Spinlock, "dentry.d_lockref.lock");
    if (t->named_type("ext4_inode_info"))
        check("ext4_inode_info", "vfs_inode.i_rwsem", LockFamily::Rwsem, "inode.i_rwsem");
    // A private futex hash: a header and a flexible array of buckets, in a
    // kmalloc cache larger than the header's size.
    bool bucket = false;
    for (const MemberPath& p : t->types_with_lock_at(1024, 2048, 0x204, LockFamily::Spinlock))
        bucket |= p.class_name == "futex_hash_bucket.lock" && p.root == "futex_private_hash";
    if (t->named_type("futex_private_hash")) {
        EXPECT_TRUE(bucket);
    }
    const auto* rq = t->percpu_var("runqueues");
    ASSERT_NE(rq, nullptr) << "BTF lists per-CPU variables";
    auto p = t->lock_at(rq->type_id, *t->member_offset(rq->type_id, "__lock"), LockFamily::Spinlock);
    ASSERT_TRUE(p);
    EXPECT_EQ(p->class_name, "rq.__lock");
}

TEST(SlabCaches, CandidateTypesAndGenericSizes)
{
    auto has = [](const std::vector<std::string>& v, const char* s) {
        return std::find(v.begin(), v.end(), s) != v.end();
    };
    EXPECT_TRUE(has(candidate_types("sighand_cache"), "sighand_struct"));
    EXPECT_TRUE(has(candidate_types("ext4_inode_cache"), "ext4_inode_info"));
    EXPECT_TRUE(has(candidate_types("mm_struct"), "mm_struct"));
    EXPECT_EQ(candidate_types("filp").front(), "file");
    EXPECT_EQ(candidate_types("TCP").front(), "tcp_sock");
    EXPECT_TRUE(is_generic_cache("kmalloc-cg-192"));
    EXPECT_TRUE(is_generic_cache("dma-kmalloc-64"));
    EXPECT_FALSE(is_generic_cache("mm_struct"));
    EXPECT_EQ(generic_size_range("kmalloc-cg-192"), std::make_pair(128u, 192u));
    EXPECT_EQ(generic_size_range("kmalloc-2k"), std::make_pair(1024u, 2048u));
    EXPECT_EQ(generic_size_range("kmalloc-96"), std::make_pair(64u, 96u));
    EXPECT_EQ(generic_size_range("kmalloc-x"), std::make_pair(0u, 0u));
}

// A namer over the blob: caches, merging and per-CPU areas made up here.
KernelData::Sources blob_sources()
{
    KernelData::Sources s;
    s.types = blob_types();
    s.page_size = 4096;
    s.percpu_bases = {0xffff888100000000ull, 0xffff888100100000ull};
    return s;
}

RawIdentity in_cache(const char* name, uint32_t size, uint16_t order = 0)
{
    RawIdentity id;
    id.sources = LS_IDENTITY_SLAB_LOOKUP | LS_IDENTITY_TASK_LOOKUP;
    id.cache = 0xffff888000abc000ull;
    id.cache_name = name;
    id.object_size = size;
    id.slab_size = size;
    id.order = id.min_order = order;
    return id;
}

// What the ladder's kernel-data sources make of a lock (the caller and the
// caller table's class given): its name only when one of them named it.
LockIdentity data_name(const KernelData& data, uint64_t address, uint32_t flags, const RawIdentity& id,
                       const std::string& caller, const std::string& caller_class)
{
    static const KernelSymbols no_symbols = KernelSymbols::parse("");
    static const std::vector<uint64_t> no_frames;
    LockEvidence e{no_symbols, address, flags, id, no_frames};
    e.kind = lock_kind(flags);
    e.family = lock_family(e.kind.kind);
    e.caller = caller;
    e.by_caller = e.kind.kind + "@" + (caller.empty() ? "unknown" : caller);
    e.caller_class = caller_class;
    e.data = &data;
    LockIdentity r = identify_lock(e);
    if (!named_from_data(name_source_name(r.source)))
        r.name.clear();
    return r;
}

TEST(KernelDataSources, DedicatedCacheNamesItsTypeAndMember)
{
    KernelData namer(blob_sources());
    // Third object of an order-0 slab of 24-byte "first" objects: +48, lock at +0.
    const uint64_t slab = 0xffff888012345000ull;
    auto r = data_name(namer, slab + 48, LCB_F_MUTEX, in_cache("first_cache", 24), "", "");
    EXPECT_EQ(r.name, "first.m");
    EXPECT_EQ(r.source, NameSource::Slab);
    EXPECT_NE(r.detail.find("struct first +0x0"), std::string::npos) << r.detail;
    // Its spinlock, by kind.
    EXPECT_EQ(data_name(namer, slab + 48 + 8, LCB_F_SPIN, in_cache("first_cache", 24), "", "").name,
              "first.m.wait_lock");
}

TEST(KernelDataSources, CacheWhoseTypeCannotBeFoundKeepsItsEvidence)
{
    KernelData namer(blob_sources());
    auto r = data_name(namer, 0xffff888012345000ull + 8, LCB_F_MUTEX, in_cache("nosuchtype_cache", 24), "", "");
    EXPECT_EQ(r.name, "");
    EXPECT_NE(r.detail.find("nosuchtype_cache +0x8"), std::string::npos) << r.detail;
    // A type of the wrong size is not believed...
    EXPECT_EQ(data_name(namer, 0xffff888012345000ull, LCB_F_MUTEX, in_cache("first_cache", 40), "", "").name, "");
    // ...unless the cache is named after the type, which then carries a tail
    // of its own (as task_struct and mm_struct do).
    EXPECT_EQ(data_name(namer, 0xffff888012345000ull, LCB_F_MUTEX, in_cache("first", 40), "", "").name, "first.m");
}

TEST(KernelDataSources, MergedCachesNameOnlyWhatIsUnambiguous)
{
    auto sources = blob_sources();
    sources.slabs.add("inner", ":0000024");
    sources.slabs.add("other24", ":0000024");
    sources.slabs.add("first", ":A-0000024");
    sources.slabs.add("plain24", ":A-0000024");
    KernelData namer(std::move(sources));
    // inner and other24 both have a mutex at +8: which one cannot be told.
    auto r = data_name(namer, 0xffff888012345000ull + 8, LCB_F_MUTEX, in_cache("inner", 24), "", "");
    EXPECT_EQ(r.name, "");
    EXPECT_NE(r.detail.find("ambiguous"), std::string::npos) << r.detail;
    EXPECT_NE(r.detail.find("merged with 1 other"), std::string::npos) << r.detail;
    // The waiting function may name one of the merged types, and then decides.
    auto picked = data_name(namer, 0xffff888012345000ull + 8, LCB_F_MUTEX, in_cache("inner", 24), "other24_flush", "");
    EXPECT_EQ(picked.name, "other24.q");
    EXPECT_NE(picked.detail.find("the caller other24_flush names this one"), std::string::npos) << picked.detail;
    // first is merged with plain24, which has no lock: the mutex is first's.
    auto f = data_name(namer, 0xffff888012345000ull, LCB_F_MUTEX, in_cache("first", 24), "", "");
    EXPECT_EQ(f.name, "first.m");
    EXPECT_NE(f.detail.find("merged with 1 other"), std::string::npos) << f.detail;
}

TEST(KernelDataSources, GenericCacheInfersOnlyAUniqueTypeAndChecksTheCallerClass)
{
    KernelData namer(blob_sources());
    // kmalloc-32 holds 17..32 bytes: first, inner, other24, plain24 are 24.
    // A mutex at +0: only first.
    auto r = data_name(namer, 0xffff888012345000ull + 32, LCB_F_MUTEX, in_cache("kmalloc-32", 32), "", "");
    EXPECT_EQ(r.name, "first.m");
    EXPECT_NE(r.detail.find("inferred"), std::string::npos) << r.detail;
    // A mutex at +8: inner or other24: evidence only, checked against the caller's class.
    auto amb = data_name(namer, 0xffff888012345000ull + 8, LCB_F_MUTEX, in_cache("kmalloc-32", 32), "", "inner.m");
    EXPECT_EQ(amb.name, "");
    EXPECT_NE(amb.detail.find("consistent with inner.m"), std::string::npos) << amb.detail;
    auto misfit = data_name(namer, 0xffff888012345000ull + 8, LCB_F_MUTEX, in_cache("kmalloc-32", 32), "", "first.m");
    // A kind@caller stand-in is no class to check against: the unique type decides.
    EXPECT_EQ(
        data_name(namer, 0xffff888012345000ull + 8, LCB_F_SPIN, in_cache("kmalloc-32", 32), "", "mutex@f.wait_lock")
            .name,
        "first.m.wait_lock");
    EXPECT_EQ(data_name(namer, 0xffff888012345000ull, LCB_F_MUTEX, in_cache("kmalloc-32", 32), "", "mutex@f").name,
              "first.m");
    EXPECT_NE(misfit.detail.find("does not fit first.m"), std::string::npos) << misfit.detail;
}

TEST(KernelTypes, TypesAFunctionReachesThroughItsParameters)
{
    auto t = blob_types();
    auto reached = [&](const char* fn) {
        std::vector<std::string> out;
        for (const auto& r : t->types_reached_from(fn))
            out.push_back(std::to_string(r.depth) + " " + r.type + " " + r.via);
        return out;
    };
    EXPECT_EQ(reached("other24_get"), std::vector<std::string>{"0 other24 o"});
    EXPECT_EQ(reached("other24_get.isra.0"), std::vector<std::string>{"0 other24 o"});  // a clone
    EXPECT_EQ(reached("through_holder"), (std::vector<std::string>{"0 holder h", "1 other24 h->o"}));
    EXPECT_TRUE(reached("nothing").empty());
    EXPECT_TRUE(reached("no_such_function").empty());

    std::string why;
    auto kernel = KernelTypes::load_vmlinux(&why);
    ASSERT_TRUE(kernel) << why;
    // evict(struct inode *) works on the inode and, through i_sb, its super_block.
    bool sb = false;
    for (const auto& r : kernel->types_reached_from("evict"))
        sb |= r.depth == 1 && r.type == "super_block" && r.via == "inode->i_sb";
    EXPECT_TRUE(sb);
}

TEST(KernelDataSources, GenericCacheCandidatesNarrowedByTheWaitingFunctionsPrototype)
{
    KernelData namer(blob_sources());
    const uint64_t at = 0xffff888012345000ull + 8;  // a mutex at +8 of a kmalloc-32 object: inner or other24
    auto direct = data_name(namer, at, LCB_F_MUTEX, in_cache("kmalloc-32", 32), "other24_get", "");
    EXPECT_EQ(direct.name, "other24.q");
    EXPECT_EQ(direct.source, NameSource::Slab);
    EXPECT_NE(direct.detail.find("the only one the waiting function other24_get reaches (o)"), std::string::npos)
        << direct.detail;
    EXPECT_EQ(data_name(namer, at, LCB_F_MUTEX, in_cache("kmalloc-32", 32), "through_holder", "").name, "other24.q");
    // A function that reaches both candidates decides nothing, nor one that reaches none.
    EXPECT_EQ(data_name(namer, at, LCB_F_MUTEX, in_cache("kmalloc-32", 32), "both", "").name, "");
    EXPECT_EQ(data_name(namer, at, LCB_F_MUTEX, in_cache("kmalloc-32", 32), "nothing", "").name, "");
    // The caller table's class still has the last word.
    EXPECT_EQ(data_name(namer, at, LCB_F_MUTEX, in_cache("kmalloc-32", 32), "other24_get", "inner.m").name, "");
}

TEST(KernelDataSources, AFlexibleArrayOfLockedItemsInALargerCache)
{
    KernelData namer(blob_sources());
    // kmalloc-128 holds 97..128 bytes: no fixed-size type, but a
    // futex_private_hash with four or five items; item 3's mutex is at 8 + 3 * 24.
    auto r = data_name(namer, 0xffff888012345000ull + 128 + 80, LCB_F_MUTEX, in_cache("kmalloc-128", 128), "", "");
    EXPECT_EQ(r.name, "first.m");
    EXPECT_NE(r.detail.find("struct futex_private_hash (a header of 8 bytes and a flexible array) (queues[3].m)"),
              std::string::npos)
        << r.detail;
    // Inside the header, nothing.
    EXPECT_EQ(data_name(namer, 0xffff888012345000ull + 128 + 4, LCB_F_MUTEX, in_cache("kmalloc-128", 128), "", "").name,
              "");
    // The same object reached through the task (mm->futex_phash): no inference needed.
    RawIdentity id = in_cache("kmalloc-128", 128);
    id.task_member = LS_TASK_FUTEX_HASH;
    id.object = 0xffff888012345000ull + 128;
    id.tgid = 77;
    auto t = data_name(namer, id.object + 80, LCB_F_MUTEX, id, "futex_wake", "");
    EXPECT_EQ(t.name, "first.m");
    EXPECT_EQ(t.source, NameSource::Task);
    EXPECT_EQ(t.instance, "futex hash of process 77, queues[3]");
}

TEST(KernelDataSources, APipeTheWaiterHasOpenNamesItsMember)
{
    KernelData namer(blob_sources());
    const uint64_t pipe = 0xffff888012345040ull;
    RawIdentity id = in_cache("kmalloc-cg-64", 64);
    id.task_member = LS_TASK_PIPE;
    id.object = pipe;
    id.inode_ino = 4242;
    auto r = data_name(namer, pipe, LCB_F_MUTEX, id, "pipe_read", "pipe_inode_info.mutex");
    EXPECT_EQ(r.name, "pipe_inode_info.mutex");
    EXPECT_EQ(r.source, NameSource::Task);
    EXPECT_EQ(r.instance, "pipe:[4242]");
    EXPECT_NE(r.detail.find("a pipe the waiter has open"), std::string::npos) << r.detail;
    EXPECT_EQ(data_name(namer, pipe + 8, LCB_F_SPIN, id, "", "").name, "pipe_inode_info.mutex.wait_lock");
    // No lock of the kind there: the pipe says nothing, the slab evidence stays.
    auto none = data_name(namer, pipe + 16, LCB_F_MUTEX, id, "", "");
    EXPECT_NE(none.source, NameSource::Task);
}

TEST(KernelDataSources, PerCpuLocksByVariableAndCpu)
{
    KernelData namer(blob_sources());
    const uint64_t cpu1 = 0xffff888100100000ull;
    auto r = data_name(namer, cpu1 + 64 + 32 + 4, LCB_F_SPIN, RawIdentity{}, "", "");  // runqueues.locks[1]
    EXPECT_EQ(r.name, "outer.locks[]");
    EXPECT_EQ(r.source, NameSource::Percpu);
    EXPECT_EQ(r.instance, "CPU 1");
    EXPECT_EQ(data_name(namer, cpu1 + 128, LCB_F_SPIN, RawIdentity{}, "", "").name, "lonely");
    EXPECT_EQ(data_name(namer, cpu1 + 4096, LCB_F_SPIN, RawIdentity{}, "", "").name, "");  // past the area
}

const char* kKallsyms =
    "ffffffff81000000 T _text\n"
    "ffffffff81000100 T do_one\n"
    "ffffffff81000200 T do_two\n";

TEST(KernelImage, SystemMapIsUsedOnlyWhenItMatchesAndIomemBoundsTheData)
{
    lockscope::testing::TempDir dir;
    std::string kallsyms = kKallsyms, map_ok, map_bad;
    // 60 functions, so that the check has enough to compare; KASLR shift 0x2000000.
    for (int i = 0; i < 60; i++) {
        char line[96];
        std::snprintf(line, sizeof line, "ffffffff81%06x T f%d\n", 0x10000 + i * 0x100, i);
        kallsyms += line;
        std::snprintf(line, sizeof line, "ffffffff7f%06x T f%d\n", 0x10000 + i * 0x100, i);
        map_ok += line;
        std::snprintf(line, sizeof line, "ffffffff7f%06x T f%d\n", 0x20000 + i * 0x100, i);
        map_bad += line;
    }
    const std::string data =
        "ffffffff7f000000 T _text\nffffffff80000000 D _sdata\nffffffff80000100 D big_lock\n"
        "ffffffff80001000 D _edata\n";
    const auto syms = KernelSymbols::parse(kallsyms);
    std::ofstream(dir.path().string() + "/ok.map") << map_ok << data;
    std::ofstream(dir.path().string() + "/bad.map") << map_bad << data;
    std::ofstream(dir.path().string() + "/iomem") << "00100000-00ffffff : System RAM\n"
                                                     "  01000000-01ffffff : Kernel code\n"
                                                     "  03000000-030fffff : Kernel data\n";
    std::vector<std::string> warnings;
    auto ok = KernelImage::load(syms, warnings, dir.path().string() + "/iomem", dir.path().string() + "/ok.map");
    EXPECT_TRUE(warnings.empty());
    EXPECT_EQ(ok.symbol(0xffffffff82000100ull), "big_lock");
    EXPECT_EQ(ok.symbol(0xffffffff82000108ull), "big_lock");  // inside it
    EXPECT_TRUE(ok.in_data(0xffffffff83000010ull));           // _text + (0x3000000 - 0x1000000)
    EXPECT_FALSE(ok.in_data(0xffff888000000000ull));
    auto bad = KernelImage::load(syms, warnings, dir.path().string() + "/iomem", dir.path().string() + "/bad.map");
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find("does not match the running kernel"), std::string::npos) << warnings[0];
    EXPECT_FALSE(bad.symbol(0xffffffff82000100ull));
    std::vector<std::string> none;
    auto missing = KernelImage::load(syms, none, dir.path().string() + "/iomem", dir.path().string() + "/nothing.map");
    EXPECT_TRUE(none.empty());
    EXPECT_FALSE(missing.has_symbols());
}

// The whole ladder, kernel data included: data names a lock before the
// caller table does, a failed source leaves its evidence for people, and a
// lock in the image's data that nothing names is marked kernel-data.
TEST(Ladder, KernelDataComesBeforeTheCallerAndUnnamedImageDataIsMarked)
{
    const auto syms = KernelSymbols::parse(
        "ffffffff81000000 T _text\n"
        "ffffffff81100000 T pipe_read\n"
        "ffffffff81200000 T vfs_read\n");
    const std::vector<uint64_t> in_pipe_read = {0xffffffff81100010ull, 0xffffffff81200010ull};
    KernelData data(blob_sources());
    const uint64_t slab = 0xffff888012345000ull;

    const LockIdentity by_slab =
        identify_lock(syms, slab + 48, LCB_F_MUTEX, in_cache("first_cache", 24), in_pipe_read, &data);
    EXPECT_EQ(by_slab.name, "first.m");
    EXPECT_EQ(by_slab.source, NameSource::Slab);
    EXPECT_EQ(by_slab.caller, "pipe_read");
    // Without kernel data the caller table names it.
    const LockIdentity by_caller =
        identify_lock(syms, slab + 48, LCB_F_MUTEX, in_cache("first_cache", 24), in_pipe_read);
    EXPECT_EQ(by_caller.name, "pipe_inode_info.mutex");
    EXPECT_EQ(by_caller.source, NameSource::Caller);
    // A cache no type is known for: named by the caller, the slab's evidence kept.
    const LockIdentity evidence =
        identify_lock(syms, slab + 8, LCB_F_MUTEX, in_cache("nosuchtype_cache", 24), in_pipe_read, &data);
    EXPECT_EQ(evidence.source, NameSource::Caller);
    EXPECT_NE(evidence.detail.find("nosuchtype_cache +0x8"), std::string::npos) << evidence.detail;

    lockscope::testing::TempDir dir;
    std::string kallsyms = "ffffffff81000000 T _text\n", map;
    for (int i = 0; i < 60; i++) {
        char line[96];
        std::snprintf(line, sizeof line, "ffffffff81%06x T f%d\n", 0x10000 + i * 0x100, i);
        kallsyms += line;
        map += line;
    }
    // The image's data starts at 0xffffffff82000000, its first symbol further on.
    map +=
        "ffffffff81000000 T _text\nffffffff82000100 D _sdata\nffffffff82000200 D big_lock\nffffffff82001000 D _edata\n";
    const auto image_syms = KernelSymbols::parse(kallsyms);
    std::ofstream(dir.path().string() + "/System.map") << map;
    std::ofstream(dir.path().string() + "/iomem") << "00100000-00ffffff : System RAM\n"
                                                     "  01000000-01ffffff : Kernel code\n"
                                                     "  02000000-020fffff : Kernel data\n";
    std::vector<std::string> warnings;
    KernelData::Sources sources;
    sources.image =
        KernelImage::load(image_syms, warnings, dir.path().string() + "/iomem", dir.path().string() + "/System.map");
    ASSERT_TRUE(warnings.empty()) << warnings[0];
    KernelData image(std::move(sources));
    const LockIdentity global =
        identify_lock(image_syms, 0xffffffff82000200ull, LCB_F_MUTEX, RawIdentity{}, {}, &image);
    EXPECT_EQ(global.name, "big_lock");
    EXPECT_EQ(global.source, NameSource::Global);
    EXPECT_EQ(global.detail, "System.map");
    const LockIdentity unnamed =
        identify_lock(image_syms, 0xffffffff82000010ull, LCB_F_READ | LCB_F_PERCPU, RawIdentity{}, {}, &image);
    EXPECT_EQ(unnamed.source, NameSource::KernelData);
    EXPECT_EQ(unnamed.name, "percpu-rwsem@unknown");
}

}  // namespace
}  // namespace lockscope::identity
