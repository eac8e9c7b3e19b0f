/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The few kernel types lockscope reads, declared for CO-RE: libbpf
 * relocates every field access against the running kernel's BTF, so only
 * the fields named here must exist (under these names) in the target.
 * Replaces a generated multi-megabyte vmlinux.h.
 */
#ifndef LOCKSCOPE_KERNEL_TYPES_H
#define LOCKSCOPE_KERNEL_TYPES_H

#include <linux/types.h>
#include <linux/bpf.h>
#include <asm/ptrace.h> /* struct pt_regs, for USDT argument access */

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

typedef __u64 u64;
typedef __u32 u32;
typedef __s32 s32;
typedef __u8 u8;
typedef _Bool bool;
#define true 1
#define false 0

/* 6.16+: a process's private futex hash, a header and (hash_mask + 1) buckets */
struct futex_hash_bucket {
	int waiters;
} __attribute__((preserve_access_index));

struct futex_private_hash {
	unsigned int hash_mask;
} __attribute__((preserve_access_index));

struct mm_struct {
	/* a struct rw_semaphore since 5.8 (mmap_sem before) */
	struct {
		long count;
	} mmap_lock;
	struct futex_private_hash *futex_phash; /* 6.16+ */
} __attribute__((preserve_access_index));

struct mutex;
struct rw_semaphore;

/* Lock identity (ls_lock_identity): only offsets and a few names are read. */
struct kmem_cache_order_objects {
	unsigned int x; /* order << 16 | objects */
} __attribute__((preserve_access_index));

struct kmem_cache {
	unsigned int size;
	unsigned int object_size;
	struct kmem_cache_order_objects oo;
	struct kmem_cache_order_objects min;
	unsigned int red_left_pad; /* CONFIG_SLUB_DEBUG */
	const char *name;
} __attribute__((preserve_access_index));

struct sighand_struct {
	struct {
		int x;
	} siglock;
} __attribute__((preserve_access_index));

struct signal_struct {
	struct {
		int counter;
	} live;             /* threads of the group still alive */
	struct {
		long x;
	} cred_guard_mutex;
	struct {
		long x;
	} exec_update_lock; /* 5.11+ */
} __attribute__((preserve_access_index));

struct file;

struct fdtable {
	unsigned int max_fds;
	struct file **fd;
} __attribute__((preserve_access_index));

struct files_struct {
	struct {
		int x;
	} file_lock;
	struct fdtable *fdt;
} __attribute__((preserve_access_index));

struct file_system_type {
	const char *name;
} __attribute__((preserve_access_index));

struct super_block {
	__u32 s_dev;
	struct file_system_type *s_type;
	struct {
		long x;
	} s_vfs_rename_mutex;
} __attribute__((preserve_access_index));

struct vfsmount {
	struct super_block *mnt_sb;
} __attribute__((preserve_access_index));

struct path {
	struct vfsmount *mnt;
} __attribute__((preserve_access_index));

struct fs_struct {
	struct {
		struct {
			int x;
		} lock;
	} seq;          /* seqlock_t since 6.x: its spinlock */
	struct {
		int x;
	} lock;         /* before */
	struct path pwd;
} __attribute__((preserve_access_index));

struct hlist_node {
	struct hlist_node *next;
} __attribute__((preserve_access_index));

struct hlist_head {
	struct hlist_node *first;
} __attribute__((preserve_access_index));

struct qstr {
	const unsigned char *name;
} __attribute__((preserve_access_index));

struct dentry {
	struct qstr d_name;
	union {
		struct hlist_node d_alias;
	} d_u;
} __attribute__((preserve_access_index));

/* Only its size is read (bpf_core_type_size). */
struct pipe_inode_info {
	struct {
		long x;
	} mutex;
} __attribute__((preserve_access_index));

struct inode {
	unsigned short i_mode; /* umode_t */
	struct super_block *i_sb;
	struct pipe_inode_info *i_pipe; /* in an anonymous union */
	unsigned long i_ino;
	struct {
		long x;
	} i_rwsem;
	struct hlist_head i_dentry;
} __attribute__((preserve_access_index));

struct file {
	struct inode *f_inode;
} __attribute__((preserve_access_index));

#define S_IFMT 00170000
#define S_IFIFO 0010000

/* The task's cgroup v2 id: task->cgroups->dfl_cgrp->kn->id (5.5+: a u64) */
struct kernfs_node {
	__u64 id;
} __attribute__((preserve_access_index));

struct cgroup {
	struct kernfs_node *kn;
} __attribute__((preserve_access_index));

struct css_set {
	struct cgroup *dfl_cgrp;
} __attribute__((preserve_access_index));

/* include/linux/sched.h: sched_delayed since 6.12 (EEVDF's delayed dequeue:
 * a task gone to sleep may stay on its run queue, marked) */
struct cfs_rq;

struct sched_entity {
	unsigned char sched_delayed;
	struct cfs_rq *cfs_rq; /* CONFIG_FAIR_GROUP_SCHED */
} __attribute__((preserve_access_index));

struct task_struct {
	unsigned int __state; /* 0: TASK_RUNNING */
	int pid;
	int tgid;
	int on_cpu;
	int on_rq;
	struct sched_entity se;
	unsigned int cpu; /* 5.16+ */
	unsigned int in_iowait : 1;
	struct mm_struct *mm;
	struct fs_struct *fs;
	struct files_struct *files;
	struct signal_struct *signal;
	struct sighand_struct *sighand;
	struct css_set *cgroups;
	char comm[16];
} __attribute__((preserve_access_index));

/* include/linux/mutex_types.h: owner = task pointer | MUTEX_FLAG_* (low 3 bits) */
struct mutex {
	struct {
		long counter;
	} owner;
} __attribute__((preserve_access_index));

/*
 * include/linux/rwsem.h (4.20+ owner is atomic_long_t): owner = task | READER_OWNED(1) |
 * NONSPINNABLE(2); count has WRITER_LOCKED(1) and readers from bit 8.
 */
struct rw_semaphore {
	struct {
		long counter;
	} count;
	struct {
		long counter;
	} owner;
} __attribute__((preserve_access_index));

/*
 * kernel/locking/rtmutex_common.h: owner = task pointer | RT_MUTEX_HAS_WAITERS
 * (bit 0). PREEMPT_RT's mutex, spinlock_t and rwlock/rwsem writers wait on
 * one; elsewhere PI futexes use it (through proxy locking, which emits no
 * contention events).
 */
struct rt_mutex_base {
	struct task_struct *owner;
} __attribute__((preserve_access_index));

/*
 * include/linux/rwbase_rt.h (PREEMPT_RT only, unchanged since 5.15):
 * struct rwbase_rt { atomic_t readers; struct rt_mutex_base rtmutex; }, the
 * rwsem and rwlock of RT, whose rtmutex a writer holds from its first step.
 * Not declared for CO-RE: a type the running kernel lacks makes libbpf 1.1
 * search the module BTFs, which needs CAP_SYS_ADMIN, and a recorder with only
 * CAP_BPF + CAP_PERFMON could not load. The rtmutex follows the 4-byte
 * counter at the next 8-byte boundary.
 */
#define RWBASE_RT_RTMUTEX_OFFSET 8

#define RT_MUTEX_HAS_WAITERS 1UL
#define MUTEX_FLAGS_MASK 0x07UL
#define RWSEM_READER_OWNED (1UL << 0)
#define RWSEM_NONSPINNABLE (1UL << 1)
#define RWSEM_OWNER_FLAGS_MASK 0x07UL

#endif /* LOCKSCOPE_KERNEL_TYPES_H */
