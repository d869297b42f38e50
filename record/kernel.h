/* SPDX-License-Identifier: Apache-2.0 */
/* kernel.h - the running kernel's identity for offline symbolization. */
#ifndef BPROF_RECORD_KERNEL_H
#define BPROF_RECORD_KERNEL_H

#include <stdbool.h>
#include "bprof.h"

/*
 * Fill k: release, build-id (/sys/kernel/notes), _stext (KASLR reference),
 * modules (/proc/modules + /sys/module/NAME/notes) and, with with_kallsyms,
 * the text symbols of /proc/kallsyms.  Missing pieces are left empty: this
 * never fails the recording except on allocation failure (returns -ENOMEM);
 * *hidden is set when kptr_restrict hides the addresses.
 */
int kernel_collect(struct bprof_kernel *k, bool with_kallsyms, bool *hidden);

/*
 * Keep only the symbols of k->ksyms that name the recording's kernel
 * addresses (kernel stacks and kernel_ip of rec's counts): for each address
 * the symbol containing it and that symbol's successor, which bounds it.
 * The full table is ~120k symbols, ~650 KiB compressed - more than a whole
 * recording otherwise weighs; the few hundred that matter are a few KiB.
 * Sets BPROF_KERNEL_KALLSYMS_PARTIAL.  Returns 0 or -ENOMEM (k unchanged).
 */
int kernel_prune_ksyms(struct bprof_kernel *k, const struct bprof_recording *rec);

/* Whether rec's counts hold any kernel address (a kernel stack or an
 * interrupted kernel ip): without one, kallsyms need not be read. */
bool kernel_sampled(const struct bprof_recording *rec);

/* Parse an ELF note stream (as in /sys/kernel/notes) for NT_GNU_BUILD_ID.
 * Returns the build-id length, 0 when absent. */
uint32_t notes_build_id(const void *buf, size_t len, uint8_t out[BPROF_BUILD_ID_MAX]);

#endif
