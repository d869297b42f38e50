/* SPDX-License-Identifier: Apache-2.0 */
/*
 * runtimes.h - which language runtimes' frames a recording walks.
 *
 * Walking Python, V8 and HotSpot frames is code in the unwinding
 * sampler, and the kernel's verifier checks it at every start whether or
 * not a recording meets such a process: ~23 ms of a recording's start-up
 * (record/DESIGN.md "Kernels", verifier headroom).  So a recording walks
 * the runtimes it may meet: all of them system-wide, in a cgroup, or when
 * its command is a script or a program that starts others (a shell, env,
 * timeout, make, ...); of a command that is an ELF program, or of the
 * processes of -p/-L, the runtimes that program is (its name, the
 * libraries it needs, the symbols it exports or imports) or that they
 * map.  --runtimes walks all of them everywhere.
 */
#ifndef BPROF_RECORD_RUNTIMES_H
#define BPROF_RECORD_RUNTIMES_H

#include <stddef.h>

#include "options.h"

#define RUNTIME_PYTHON (1u << 0)
#define RUNTIME_V8     (1u << 1)
#define RUNTIME_JVM    (1u << 2)
#define RUNTIME_ALL    (RUNTIME_PYTHON | RUNTIME_V8 | RUNTIME_JVM)

/*
 * The runtimes env's recording may meet (RUNTIME_*), before --no-python,
 * --no-v8 and --no-jvm are applied; why, in a phrase for -v, into why
 * (may be NULL).  Never fails: what cannot be read counts as "may".
 */
unsigned runtimes_expected(const struct env *env, char *why, size_t len);

/* The runtimes an ELF file is (RUNTIME_*); 0 for none or unreadable.
 * Exposed for the tests. */
unsigned runtimes_of_elf(const char *path);

#endif
