/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ksymname.h - the context of ksymname.bpf.c's syscall program, shared
 * with record/ksymname.c.
 */
#ifndef BPROF_KSYMNAME_H
#define BPROF_KSYMNAME_H

/* Addresses named per run: the verifier walks the loop once per address,
 * so a small batch keeps the program quick to load; a run is a system
 * call of a few microseconds. */
#define KSYMNAME_BATCH 16
/* "name+0xoff/0xsize [module]"; a longer answer is cut, and said so by
 * len (the length the whole answer has) */
#define KSYMNAME_LEN 256

struct ksymname_args {
	__u64 addr[KSYMNAME_BATCH];
	__s32 len[KSYMNAME_BATCH];       /* out: bpf_snprintf's length, NUL included; < 0: error */
	char text[KSYMNAME_BATCH][KSYMNAME_LEN]; /* out: %pS of addr */
	__u32 nr;
	__u32 pad;
};

#endif
