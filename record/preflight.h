/* SPDX-License-Identifier: Apache-2.0 */
/*
 * preflight.h - what can be checked before recording is checked before
 * recording: privileges, the kernel's BTF, the output file, the pid
 * namespace and the -p/-L ids.  A recording that cannot be written, or that
 * would name the wrong tasks, should fail in the first millisecond, not
 * after an hour of sampling.  (What the recorder may read is access.h's.)
 */
#ifndef BPROF_RECORD_PREFLIGHT_H
#define BPROF_RECORD_PREFLIGHT_H

#include "options.h"

/* A file can be created in dir (a temporary one, removed at once, with
 * the stop signals held back meanwhile).  0 or a negative errno. */
int preflight_probe_dir(const char *dir);

/* 0 when recording may start; -1 after printing why not and what to do. */
int preflight_check(const struct env *env, const char *output);

#endif
