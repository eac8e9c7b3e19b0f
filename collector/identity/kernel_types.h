// The running kernel's type information (BTF), asked one question: which
// struct member is the lock at this offset of this type? Also the layout of
// the per-CPU area (.data..percpu), whose variables BTF lists.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

struct btf;

namespace lockscope::identity {

// The lock types a contention of one kind can be (PREEMPT_RT's mutex is an
// rtmutex inside a struct mutex, its spinlock_t an rtmutex too).
enum class LockFamily { Mutex, RtMutex, Rwsem, RtRwlock, PercpuRwsem, Semaphore, Spinlock, Rwlock };
// From lock_kind()'s kind; nullopt for user-space locks.
std::optional<LockFamily> lock_family(std::string_view kind);

struct MemberPath {
    std::string
        class_name;    // innermost named struct that is not a lock (or a lock's wrapper) + members: "inode.i_rwsem"
    std::string root;  // the type searched: "ext4_inode_info"
    std::string path;  // members from the root: "vfs_inode.i_rwsem", "locks[3]"
};

class KernelTypes {
public:
    // The running kernel's BTF; nullptr and `why` when there is none.
    static std::unique_ptr<KernelTypes> load_vmlinux(std::string* why);
    // Takes ownership of `b` (tests build small BTF blobs with libbpf).
    explicit KernelTypes(btf* b);
    // Reads `b`, which outlives this (the process's one copy of the kernel's BTF).
    explicit KernelTypes(const btf* b);
    ~KernelTypes();
    KernelTypes(const KernelTypes&) = delete;
    KernelTypes& operator=(const KernelTypes&) = delete;

    // A struct or union by name.
    std::optional<uint32_t> named_type(std::string_view name) const;
    uint64_t size_of(uint32_t type_id) const;  // 0 if unknown
    std::string name_of(uint32_t type_id) const;

    // The lock of `family` that starts at `offset` inside `type_id`.
    std::optional<MemberPath> lock_at(uint32_t type_id, uint64_t offset, LockFamily family) const;
    // Every named struct or union of size in (min_size, max_size] with a lock
    // of `family` at `offset` (a generic kmalloc cache's candidates); a struct
    // that ends in a flexible array may be smaller, the offset in its array.
    std::vector<MemberPath> types_with_lock_at(uint64_t min_size, uint64_t max_size, uint64_t offset,
                                               LockFamily family) const;
    // Offset of a member path ("mutex", "vfs_inode.i_rwsem") in a struct.
    std::optional<uint64_t> member_offset(uint32_t type_id, std::string_view path) const;

    struct PercpuVar {
        std::string name;
        uint32_t type_id = 0;
        uint64_t offset = 0;  // within .data..percpu
        uint64_t size = 0;
    };
    const PercpuVar* percpu_var_at(uint64_t offset) const;
    const PercpuVar* percpu_var(std::string_view name) const;
    uint64_t percpu_size() const { return percpu_size_; }

    bool has_function(std::string_view name) const;

    // The structs a function works on, as its BTF prototype declares them:
    // what its parameters point to (depth 0, via "inode") and what those
    // structs' pointer members point to (depth 1, via "inode->i_sb").
    // Compiler clones ("f.part.0", "f.isra.0") are looked up as f. Each
    // function's answer is remembered: a recording of many locks in a
    // generic cache asks for the same few waiting functions again and again.
    struct Reached {
        std::string type;
        std::string via;
        int depth = 0;
    };
    const std::vector<Reached>& types_reached_from(std::string_view function) const;

private:
    bool find(uint32_t id, uint64_t offset, LockFamily family, std::vector<std::pair<uint32_t, std::string>>& steps,
              int depth) const;
    uint32_t pointee_struct(uint32_t type_id) const;
    bool flexible_array(uint32_t type_id)
        const;  // an array of no declared length ("T queues[]")  // a pointer's named struct or union, 0 if none
    MemberPath describe(uint32_t root, const std::vector<std::pair<uint32_t, std::string>>& steps) const;

    const btf* btf_ = nullptr;
    btf* owned_ = nullptr;
    mutable std::unordered_map<std::string, uint32_t> named_;                // named_type's answers, 0: none
    mutable std::unordered_map<std::string, std::vector<Reached>> reached_;  // types_reached_from's, by function
    std::vector<PercpuVar> percpu_;                                          // by offset
    uint64_t percpu_size_ = 0;
};

}  // namespace lockscope::identity
