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

struct mm_struct {
	/* a struct rw_semaphore since 5.8 (mmap_sem before) */
	struct {
		long count;
	} mmap_lock;
} __attribute__((preserve_access_index));

struct task_struct {
	int pid;
	int tgid;
	int on_cpu;
	struct mm_struct *mm;
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

#define MUTEX_FLAGS_MASK 0x07UL
#define RWSEM_READER_OWNED (1UL << 0)
#define RWSEM_NONSPINNABLE (1UL << 1)
#define RWSEM_OWNER_FLAGS_MASK 0x07UL

#endif /* LOCKSCOPE_KERNEL_TYPES_H */
