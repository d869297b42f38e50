/* SPDX-License-Identifier: Apache-2.0 */
/*
 * preload.h - the -- COMMAND's program and the libraries it will load,
 * opened before it starts, so that their unwind tables are built while the
 * command still waits to exec rather than during its first milliseconds
 * (samples taken before a table arrives lose their callers).
 *
 * A best guess of what the dynamic loader will map, made the way it
 * searches (DT_NEEDED through LD_LIBRARY_PATH, DT_RPATH/DT_RUNPATH with
 * $ORIGIN, the multiarch and default directories; not /etc/ld.so.cache's
 * extra directories): a wrong guess costs only the time of building a
 * table no process uses.  Nothing is trusted from it: objects are still
 * identified by the mappings that processes really make (device, inode,
 * mtime), and an object no process maps is not recorded.
 */
#ifndef BPROF_RECORD_PRELOAD_H
#define BPROF_RECORD_PRELOAD_H

#include <stddef.h>
#include "manifest/manifest.h"

/* Open command (as execvp finds it) and its libraries in m.  Returns how
 * many objects were opened; errors are not reported (the command's own
 * exec says what is wrong with it). */
size_t preload_command(struct manifest *m, const char *command);

#endif
