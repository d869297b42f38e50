/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gotab.h - unwind rows for Go code, from Go's own function table.
 *
 * Go code has no .eh_frame.  Go's function table (libsym/gopclntab.h,
 * which needs no symbols) says what the unwinder needs instead:
 *  - where a thread's stack ends: the runtime's TOPFRAME functions
 *    (runtime.goexit under every goroutine, runtime.mstart under every g0
 *    stack, runtime.rt0_go, runtime.sigtramp), UNWIND_CFA_END rows, as
 *    _start and clone's CFI end a C thread's: the walk is complete there;
 *  - each function's stack pointer offset at each pc (its pcsp table):
 *    the CFA, with the return address below it and, in a frame bigger
 *    than that, the caller's rbp below the return address (Go saves it
 *    there), except in the instructions of the prologue and epilogue that
 *    save and restore it.  So a frameless leaf's caller is found (a
 *    frame-pointer walk skips it), and every Go frame is exact.
 * Functions that switch stacks (SPWRITE: systemstack, mcall, morestack,
 * gogo, asmcgocall, ...) get no rows: the walk follows rbp there, as
 * without a table (the report marks the caller this skips).  The signal
 * handler's restorer (runtime.sigreturn__sigaction) is a sigreturn
 * trampoline (UNWIND_CFA_SIGNAL).
 */
#ifndef BPROF_RECORD_GOTAB_H
#define BPROF_RECORD_GOTAB_H

#include <gelf.h>

#include "ehtab.h"

struct gotab_stats {
	uint64_t funcs, roots, rows;
	uint64_t skipped;  /* stack switches, malformed tables */
};

/*
 * Add elf's Go rows to *t (NULL: a table of them alone is made), where no
 * FDE covers the code.  0 when rows were added (st, if not NULL, counts
 * them), -ENOENT (not a Go object), -ENOMEM, -E2BIG.
 */
int gotab_add(struct ehtab **t, Elf *elf, struct gotab_stats *st);

#endif
