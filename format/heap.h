/* SPDX-License-Identifier: Apache-2.0 */
/*
 * heap.h - how the process heap asks the kernel for memory.  Both programs
 * call bprof_heap_tune() once, first thing in main().  It lives beside the
 * format library only because that is what both programs link; it knows
 * nothing of the format.
 */
#ifndef BPROF_HEAP_H
#define BPROF_HEAP_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Make large allocations come from the main heap, make every thread
 * allocate from it, keep freed heap memory for reuse, and ask for transparent huge pages on the first `reserve`
 * bytes of heap (rounded to 2 MiB pages; address space only: nothing is
 * touched).  Why: both programs fill megabytes of fresh memory at once -
 * libbpf copies the kernel's 5.5 MiB BTF twice, libdw inflates a debug
 * file's compressed sections (libc's: ~15 MiB) - and with 4 KiB pages each
 * page is a fault; on a virtualized host a fault costs tens of
 * microseconds, more than filling the page.  Measured on this project's
 * 2-CPU VM: libbpf's BTF load 57-69 -> 10-17 ms, a cold report 170 ->
 * 100 ms.  Where the kernel has transparent huge pages off, or malloc is
 * not glibc's (a sanitizer's), it changes nothing.  Best effort: returns
 * whether malloc took the settings, and never fails.
 */
bool bprof_heap_tune(size_t reserve);

#endif
