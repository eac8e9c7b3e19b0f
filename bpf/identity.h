/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Lock identity, the in-kernel half: when a lock gets its row, what the
 * waiting task can see about it goes into the row's ls_lock_identity (the
 * slab cache it lies in, the task's well-known member it is, the inode or
 * pipe it belongs to). User space names the lock from that evidence
 * (collector/identity/README.md: the ladder of name sources).
 *
 * BPF only (helpers, kfuncs and CO-RE reads); included by lockscope.bpf.c
 * after the kernel types and the ABI.
 */
#ifndef LOCKSCOPE_IDENTITY_H
#define LOCKSCOPE_IDENTITY_H

#include "lockscope_abi.h"

/* 6.13+: the slab cache of an address. Called only from the program that
 * user space loads when the kernel's BTF has it (on_contention_end_kmem). */
extern struct kmem_cache *bpf_get_kmem_cache(u64 addr) __ksym __weak;

/* The creating task's well-known member @lock is, LS_TASK_* (0: none); for
 * one inside an object of the task's, the object's address in *object. */
static __always_inline u32 task_member(u64 lock, u32 flags, u64 *object)
{
	struct task_struct *task = bpf_get_current_task_btf();
	u64 base;

	if (flags & (LCB_F_READ | LCB_F_WRITE)) {
		base = (u64)BPF_CORE_READ(task, mm);
		if (base && lock == base + bpf_core_field_offset(struct mm_struct, mmap_lock))
			return LS_TASK_MMAP_LOCK;
		if (bpf_core_field_exists(((struct signal_struct *)0)->exec_update_lock)) {
			base = (u64)BPF_CORE_READ(task, signal);
			if (base && lock == base + bpf_core_field_offset(struct signal_struct, exec_update_lock))
				return LS_TASK_EXEC_UPDATE;
		}
		return LS_TASK_NONE;
	}
	if (flags & (LCB_F_MUTEX | LCB_F_RT)) {
		base = (u64)BPF_CORE_READ(task, signal);
		if (base && lock == base + bpf_core_field_offset(struct signal_struct, cred_guard_mutex))
			return LS_TASK_CRED_GUARD;
		base = (u64)BPF_CORE_READ(task, fs, pwd.mnt, mnt_sb);
		if (base && lock == base + bpf_core_field_offset(struct super_block, s_vfs_rename_mutex))
			return LS_TASK_RENAME;
	}
	/* spinlocks (and PREEMPT_RT's rtmutex-based ones) */
	if (bpf_core_field_exists(((struct mm_struct *)0)->futex_phash)) {
		base = (u64)BPF_CORE_READ(task, mm, futex_phash);
		if (base && lock - base < bpf_core_type_size(struct futex_private_hash) +
						  ((u64)BPF_CORE_READ((struct futex_private_hash *)base, hash_mask) + 1) *
							  bpf_core_type_size(struct futex_hash_bucket)) {
			*object = base;
			return LS_TASK_FUTEX_HASH;
		}
	}
	base = (u64)BPF_CORE_READ(task, sighand);
	if (base && lock == base + bpf_core_field_offset(struct sighand_struct, siglock))
		return LS_TASK_SIGLOCK;
	base = (u64)BPF_CORE_READ(task, files);
	if (base && lock == base + bpf_core_field_offset(struct files_struct, file_lock))
		return LS_TASK_FILE_LOCK;
	base = (u64)BPF_CORE_READ(task, fs);
	if (base && bpf_core_field_exists(((struct fs_struct *)0)->seq.lock) &&
	    lock == base + bpf_core_field_offset(struct fs_struct, seq.lock))
		return LS_TASK_FS_LOCK;
	if (base && bpf_core_field_exists(((struct fs_struct *)0)->lock) &&
	    lock == base + bpf_core_field_offset(struct fs_struct, lock))
		return LS_TASK_FS_LOCK;
	return LS_TASK_NONE;
}

/*
 * An rwsem may be an inode's i_rwsem: read the inode it would belong to, so
 * that user space can say which file it was when the slab and BTF confirm
 * the class. Reads of what turns out not to be an inode fail or are ignored.
 */
static __always_inline void read_inode(struct ls_lock_identity *id, u64 lock)
{
	struct inode *inode = (void *)(lock - bpf_core_field_offset(struct inode, i_rwsem));
	struct hlist_node *alias;
	struct super_block *sb;
	struct dentry *dentry;

	id->sources |= LS_IDENTITY_INODE_READ;
	id->inode_ino = BPF_CORE_READ(inode, i_ino);
	sb = BPF_CORE_READ(inode, i_sb);
	if (!sb)
		return;
	id->inode_dev = BPF_CORE_READ(sb, s_dev);
	bpf_probe_read_kernel_str(id->fs_type, sizeof(id->fs_type), BPF_CORE_READ(sb, s_type, name));
	alias = BPF_CORE_READ(inode, i_dentry.first);
	if (!alias)
		return;
	dentry = (void *)((u64)alias - bpf_core_field_offset(struct dentry, d_u.d_alias));
	bpf_probe_read_kernel_str(id->dentry_name, sizeof(id->dentry_name), BPF_CORE_READ(dentry, d_name.name));
}

/*
 * A pipe's locks live in a generic kmalloc cache, where the slab cannot say
 * what the object is. The waiter reached the pipe through a file it has
 * open: compare the lock with the pipe_inode_info of each FIFO in its fd
 * table (once per lock row that pipe_sized() lets through, at most
 * LS_FD_SCAN_MAX descriptors). It runs in an end, with the lock held: about
 * 33 ns a descriptor, and 4096 of them made a workload that contends on a
 * new pipe every few operations 30 times slower (bench/scale.py).
 */
#define LS_FD_SCAN_MAX 256

struct fd_scan {
	u64 fd;   /* struct file ** */
	u64 lock;
	u64 size; /* sizeof(struct pipe_inode_info) */
	struct ls_lock_identity *id;
};

static long scan_fd(u64 i, void *data)
{
	struct fd_scan *s = data;
	struct file *file = NULL;
	struct inode *inode;
	u64 pipe;

	bpf_probe_read_kernel(&file, sizeof(file), (void *)(s->fd + i * sizeof(file)));
	if (!file)
		return 0;
	inode = BPF_CORE_READ(file, f_inode);
	if (!inode || (BPF_CORE_READ(inode, i_mode) & S_IFMT) != S_IFIFO)
		return 0;
	pipe = (u64)BPF_CORE_READ(inode, i_pipe);
	if (!pipe || s->lock - pipe >= s->size)
		return 0;
	s->id->task_member = LS_TASK_PIPE;
	s->id->object = pipe;
	s->id->inode_ino = BPF_CORE_READ(inode, i_ino);
	s->id->inode_dev = BPF_CORE_READ(inode, i_sb, s_dev);
	return 1;
}

static __always_inline void scan_open_pipes(struct ls_lock_identity *id, u64 lock)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct fdtable *fdt = BPF_CORE_READ(task, files, fdt);
	struct fd_scan s = { .lock = lock, .id = id };
	u32 n;

	if (!bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_loop) || !fdt)
		return;
	s.fd = (u64)BPF_CORE_READ(fdt, fd);
	s.size = bpf_core_type_size(struct pipe_inode_info);
	n = BPF_CORE_READ(fdt, max_fds);
	if (!s.fd || !s.size)
		return;
	id->sources |= LS_IDENTITY_FD_SCAN; /* compared: a pipe not found is not open here */
	bpf_loop(n < LS_FD_SCAN_MAX ? n : LS_FD_SCAN_MAX, scan_fd, &s, 0);
}

/* Whether a lock may lie in a pipe: in a slab object that fits a
 * pipe_inode_info with little to spare (kmalloc rounds up to at most twice
 * the size), or anywhere when the slab cannot be asked. Keeps the fd scan to
 * the few locks it can name. */
static __always_inline bool pipe_sized(const struct ls_lock_identity *id, bool kmem)
{
	u32 pipe = bpf_core_type_size(struct pipe_inode_info);

	return !kmem || (id->cache && id->object_size >= pipe && id->object_size < 2 * pipe);
}

/*
 * Fills @id, a new lock row's identity, from what the waiting task can see;
 * the caller publishes the row afterwards. @kmem: the slab cache may be
 * asked (bpf_get_kmem_cache, 6.13+).
 */
static __always_inline void identify_lock(struct ls_lock_identity *id, u64 lock, u32 flags, bool kmem)
{
	bool rwsem = (flags & (LCB_F_READ | LCB_F_WRITE)) && !(flags & (LCB_F_SPIN | LCB_F_PERCPU));
	struct kmem_cache *cache;
	u32 oo, min;

	if (!id)
		return;
	__builtin_memset(id, 0, sizeof(*id));
	id->tgid = bpf_get_current_pid_tgid() >> 32;
	id->sources = LS_IDENTITY_TASK_LOOKUP;
	id->task_member = task_member(lock, flags, &id->object);
	if (rwsem)
		read_inode(id, lock);
	if (kmem) {
		id->sources |= LS_IDENTITY_SLAB_LOOKUP;
		cache = bpf_get_kmem_cache(lock);
		if (cache) {
			id->cache = (u64)cache;
			id->object_size = BPF_CORE_READ(cache, object_size);
			id->slab_size = BPF_CORE_READ(cache, size);
			if (bpf_core_field_exists(cache->red_left_pad))
				id->red_left_pad = BPF_CORE_READ(cache, red_left_pad);
			oo = BPF_CORE_READ(cache, oo.x);
			min = BPF_CORE_READ(cache, min.x);
			id->order = oo >> 16;
			id->min_order = min >> 16;
			bpf_probe_read_kernel_str(id->cache_name, sizeof(id->cache_name),
						  BPF_CORE_READ(cache, name));
		}
	}
	if (!rwsem && id->task_member == LS_TASK_NONE && pipe_sized(id, kmem))
		scan_open_pipes(id, lock);
}

#endif /* LOCKSCOPE_IDENTITY_H */
