/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The record futex_stacks.bpf.c sends to user_stack_test.cpp: one FUTEX_WAIT
 * of the target process, with the waiter's user stack.
 */
#ifndef LOCKSCOPE_TEST_FUTEX_SAMPLE_H
#define LOCKSCOPE_TEST_FUTEX_SAMPLE_H

#include "lockscope_abi.h"

#define FUTEX_SAMPLE_FP_FRAMES 32

struct futex_sample {
    __u32 tid;
    __u32 owner_tid; /* glibc's pthread_mutex_t __data.__owner, 0 if unreadable */
    __u64 futex;     /* the futex word's user address */
    /* The kernel's own frame-pointer walk of the same user stack
     * (bpf_get_stack with BPF_F_USER_STACK), for comparison. */
    __u32 fp_frames;
    __u32 pad;
    __u64 fp_stack[FUTEX_SAMPLE_FP_FRAMES];
    /* The same registers read through bpf_task_pt_regs(), for comparison. */
    struct ls_user_regs task_regs;
    struct ls_user_stack stack;
};

#endif /* LOCKSCOPE_TEST_FUTEX_SAMPLE_H */
