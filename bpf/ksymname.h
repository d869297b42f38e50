/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ksymname.h - the sizes shared by ksymname.bpf.c's syscall program and
 * record/knames.c.  The program's inputs and answers are its global
 * variables (.bss), which both sides reach through the skeleton.
 */
#ifndef BPROF_KSYMNAME_H
#define BPROF_KSYMNAME_H

/* Addresses named per run: the verifier walks the loop once per address,
 * so a small batch keeps the program quick to load; a run is a system
 * call of a few microseconds. */
#define KSYMNAME_BATCH 16
/* "name+0xoff/0xsize [module]"; a longer answer is cut, and said so by
 * the length (that of the whole answer) */
#define KSYMNAME_LEN 256

#endif
