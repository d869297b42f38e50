/* SPDX-License-Identifier: Apache-2.0 */
/*
 * knames.h - kernel addresses named in the kernel (bpf/ksymname.bpf.c),
 * for the kallsyms snapshot of a recording: kallsyms answers for each
 * sampled address, where reading /proc/kallsyms made the kernel format
 * all of it.  A kernel_namer (kernel.h) for kernel_collect_for().
 */
#ifndef BPROF_RECORD_KNAMES_H
#define BPROF_RECORD_KNAMES_H

#include "kernel.h"

struct knames;

/* Load the program (needs CAP_BPF or root, bpf_snprintf: Linux 5.13).
 * 0, or a negative errno: the caller reads /proc/kallsyms instead. */
int knames_open(struct knames **out);
void knames_close(struct knames *kn);

/* The kernel_namer of kn. */
struct kernel_namer knames_namer(struct knames *kn);

/*
 * Parse one %pS answer, "name+0xoff/0xsize" or "name+0xoff/0xsize [mod]"
 * (a bare "0x..." when no symbol contains the address), into *s for addr.
 * true when it is one of those forms; s->found says whether a symbol was.
 */
bool knames_parse(const char *text, uint64_t addr, struct kernel_sym *s);

#endif
