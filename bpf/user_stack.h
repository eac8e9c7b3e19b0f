/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Copies a thread's user registers and the top of its user stack into a
 * struct ls_user_stack (lockscope_abi.h), for an unwinder in user space
 * that reads the binaries' CFI (.eh_frame): distribution binaries and
 * glibc have no frame pointers, so bpf_get_stack(BPF_F_USER_STACK) stops
 * in libc.
 *
 * Include after kernel_types.h, lockscope_abi.h and <bpf/bpf_core_read.h>.
 * Callable from tp_btf and raw_tp programs (bpf_probe_read_user must not
 * fault: a page that is not resident ends the copy).
 */
#ifndef LOCKSCOPE_USER_STACK_H
#define LOCKSCOPE_USER_STACK_H

/*
 * The kernel's struct pt_regs under its kernel field names: libbpf 1.1's
 * PT_REGS_*_CORE use the uapi names (rip, rsp) on x86, which the kernel's
 * BTF does not have.
 */
#if defined(__TARGET_ARCH_x86)
struct pt_regs___ls {
	unsigned long bp;
	unsigned long si;
	unsigned long di;
	unsigned long orig_ax;
	unsigned long ip;
	unsigned long sp;
} __attribute__((preserve_access_index));
/* The syscall's number, at its entry and its exit alike: a direct load
 * (tp_btf's regs are a trusted pointer), no helper call. */
#define LS_REGS_SYSCALL_NR(r) ((long)(r)->orig_ax)
/* A syscall's first two arguments, as direct loads like the number: only
 * through a tracepoint's trusted regs. */
#define LS_SYSCALL_ARG1(r) ((r)->di)
#define LS_SYSCALL_ARG2(r) ((r)->si)
#define LS_REGS_IP(r) BPF_CORE_READ((r), ip)
#define LS_REGS_SP(r) BPF_CORE_READ((r), sp)
#define LS_REGS_BP(r) BPF_CORE_READ((r), bp)
#define LS_REGS_ARG1(r) BPF_CORE_READ((r), di)
#define LS_REGS_ARG2(r) BPF_CORE_READ((r), si)
#elif defined(__TARGET_ARCH_arm64)
struct pt_regs___ls {
	unsigned long regs[31];
	unsigned long sp;
	unsigned long pc;
	int syscallno;
} __attribute__((preserve_access_index));
#define LS_REGS_SYSCALL_NR(r) ((long)(r)->syscallno)
#define LS_SYSCALL_ARG1(r) ((r)->regs[0])
#define LS_SYSCALL_ARG2(r) ((r)->regs[1])
#define LS_REGS_IP(r) BPF_CORE_READ((r), pc)
#define LS_REGS_SP(r) BPF_CORE_READ((r), sp)
#define LS_REGS_BP(r) BPF_CORE_READ((r), regs[29])
#define LS_REGS_ARG1(r) BPF_CORE_READ((r), regs[0])
#define LS_REGS_ARG2(r) BPF_CORE_READ((r), regs[1])
#else
#error "user_stack.h: no pt_regs layout for this architecture"
#endif

/* The copy ends where a page is not mapped (the top of the stack). */
#define LS_USER_STACK_PAGE 4096

/* Reads a thread's user registers from regs (a syscall tracepoint's regs,
 * or bpf_task_pt_regs()). Returns 0, or -1 when they are not a user
 * thread's (a kernel thread's are zero). */
static __always_inline int ls_user_regs_read(struct ls_user_regs *out, void *regs)
{
	struct pt_regs___ls *r = regs;

	out->ip = LS_REGS_IP(r);
	out->sp = LS_REGS_SP(r);
	out->bp = LS_REGS_BP(r);
	return out->ip && out->sp ? 0 : -1;
}

/*
 * Fills out from regs, the current task's user registers, and copies the
 * longest run of its stack from sp that ends on a page boundary or at
 * LS_USER_STACK_BYTES. Only the current task's: bpf_probe_read_user reads
 * the current address space. Returns 0, or -1 when there is nothing to
 * copy (out->size is then 0).
 */
static __always_inline int ls_user_stack_copy(struct ls_user_stack *out, void *regs)
{
	__u64 sp, head;
	int pages;

	out->size = 0;
	out->pad = 0;
	if (ls_user_regs_read(&out->regs, regs))
		return -1;
	sp = out->regs.sp;
	if (!bpf_probe_read_user(out->data, LS_USER_STACK_BYTES, (void *)sp)) {
		out->size = LS_USER_STACK_BYTES;
		return 0;
	}
	/* The stack's top is closer than LS_USER_STACK_BYTES: try shorter
	 * copies that end on page boundaries, longest first. */
	head = LS_USER_STACK_PAGE - (sp & (LS_USER_STACK_PAGE - 1));
	for (pages = LS_USER_STACK_BYTES / LS_USER_STACK_PAGE - 1; pages >= 0; pages--) {
		__u64 len = head + (__u64)pages * LS_USER_STACK_PAGE;

		if (len > LS_USER_STACK_BYTES)
			continue;
		if (!bpf_probe_read_user(out->data, len, (void *)sp)) {
			out->size = len;
			return 0;
		}
	}
	return -1;
}

/* The current task's user registers where no tracepoint passes them
 * (bpf_task_pt_regs: 5.15+): its registers at its last kernel entry. */
static __always_inline void *ls_current_user_regs(void)
{
	return (void *)bpf_task_pt_regs(bpf_get_current_task_btf());
}

#endif /* LOCKSCOPE_USER_STACK_H */
