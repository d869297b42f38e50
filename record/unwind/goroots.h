/* SPDX-License-Identifier: Apache-2.0 */
/*
 * goroots.h - the outermost frames of Go's threads, for the unwinder.
 *
 * Go code has no .eh_frame: the walk follows its frame pointers, which end
 * at a zero rbp that says nothing of whether the stack was whole.  Go's
 * own traceback stops at the runtime's TOPFRAME functions (runtime.goexit
 * under every goroutine, runtime.mstart under every g0 stack,
 * runtime.rt0_go, runtime.sigtramp); marked UNWIND_CFA_END in the object's
 * table, they end the walk as _start and clone's CFI ends a C thread's,
 * and the walk counts as complete.  Found in Go's function table
 * (libsym/gopclntab.h, which needs no symbols).
 */
#ifndef BPROF_RECORD_GOROOTS_H
#define BPROF_RECORD_GOROOTS_H

#include <gelf.h>

#include "ehtab.h"

/* Add elf's Go roots to *t (NULL: a table of them alone is made).
 * 0 when roots were added, -ENOENT (not a Go object, or none found),
 * -ENOMEM, -E2BIG. */
int goroots_add(struct ehtab **t, Elf *elf);

#endif
