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

/* Parse an ELF note stream (as in /sys/kernel/notes) for NT_GNU_BUILD_ID.
 * Returns the build-id length, 0 when absent. */
uint32_t notes_build_id(const void *buf, size_t len, uint8_t out[BPROF_BUILD_ID_MAX]);

#endif
