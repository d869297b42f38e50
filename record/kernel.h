/* SPDX-License-Identifier: Apache-2.0 */
/* kernel.h - the running kernel's identity for offline symbolization. */
#ifndef BPROF_RECORD_KERNEL_H
#define BPROF_RECORD_KERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "bprof.h"

/*
 * Keep only the symbols of k->ksyms that name the recording's kernel
 * addresses (kernel stacks and kernel_ip of rec's counts): for each address
 * the symbol containing it and that symbol's successor, which bounds it.
 * The full table is ~120k symbols, ~650 KiB compressed - more than a whole
 * recording otherwise weighs; the few hundred that matter are a few KiB.
 * Sets BPROF_KERNEL_KALLSYMS_PARTIAL.  Returns 0 or -ENOMEM (k unchanged).
 */
int kernel_prune_ksyms(struct bprof_kernel *k, const struct bprof_recording *rec);

/*
 * --rotate writes a file every few seconds, and reading /proc/kallsyms for
 * each costs ~30 ms of CPU (the kernel formats ~120k lines).  The core
 * kernel's text symbols (_stext to _etext) cannot change while it runs, so
 * a cache keeps them from the first full read, and a file whose kernel
 * addresses all lie in that range takes its symbols from there.  Any other
 * address (a module, a BPF program, a trampoline: those come and go) makes
 * the file read kallsyms again, so a name is never one that went away.
 */
struct kernel_cache;
int kernel_cache_create(struct kernel_cache **out); /* 0 or -ENOMEM */
void kernel_cache_destroy(struct kernel_cache *c);

/* The symbol containing an address, as kallsyms names it. */
struct kernel_sym {
	uint64_t start, size;
	char name[256];
	char module[64]; /* "" for vmlinux */
	bool found;      /* false: no symbol contains the address */
};

/*
 * Something that asks kallsyms about each address (knames.h does it in the
 * kernel), instead of reading all of /proc/kallsyms: name(ctx, addrs, n,
 * out) fills out[i] for addrs[i]; 0, or < 0 when it cannot.
 */
struct kernel_namer {
	int (*name)(void *ctx, const uint64_t *addrs, size_t n, struct kernel_sym *out);
	void *ctx;
};

/*
 * Fill k for the file rec: release, build-id (/sys/kernel/notes), _stext
 * (KASLR reference), modules (/proc/modules + /sys/module/NAME/notes) and
 * the text symbols of /proc/kallsyms.  Missing pieces are left empty: this
 * never fails the recording except on allocation failure (-ENOMEM); *hidden
 * is set when kptr_restrict hides the addresses.  kallsyms is read only
 * when rec has kernel addresses and kallsyms is asked for; all of it with
 * full, else only what names rec's addresses: asked of namer (may be NULL)
 * address by address, else taken from cache (may be NULL) when it can,
 * else pruned from a full read (kernel_prune_ksyms()).  0 or -ENOMEM.
 */
int kernel_collect_for(struct bprof_kernel *k, const struct bprof_recording *rec, bool kallsyms,
		       bool full, struct kernel_cache *cache, const struct kernel_namer *namer,
		       bool *hidden);

/* Sort symbols by address, then name (the order the snapshot is kept in),
 * as qsort would: 0 or -ENOMEM. */
int kernel_sort_ksyms(struct bprof_ksym *s, uint32_t n);

/* Whether rec's counts hold any kernel address (a kernel stack or an
 * interrupted kernel ip): without one, kallsyms need not be read. */
bool kernel_sampled(const struct bprof_recording *rec);

/* Parse an ELF note stream (as in /sys/kernel/notes) for NT_GNU_BUILD_ID.
 * Returns the build-id length, 0 when absent. */
uint32_t notes_build_id(const void *buf, size_t len, uint8_t out[BPROF_BUILD_ID_MAX]);

#endif
