/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pyrec.h - the recorder's side of Python frames: finding CPython in the
 * objects sampled processes map, telling the BPF walk where it is (the
 * "py_procs" map), and copying, once per code object the walk meets, what
 * names its frames (qualified name, file name, first line, line table)
 * while the process still lives.  See record/DESIGN.md "Python frames".
 */
#ifndef BPROF_RECORD_PYREC_H
#define BPROF_RECORD_PYREC_H

#include <gelf.h>
#include <stdint.h>
#include <linux/types.h>

#include "bprof.h"
#include "manifest/manifest.h"
#include "python/python.h"

struct pyrec;

/* procs_fd: the "py_procs" map; stats_fd: "py_stats" (per-CPU, nr_cpus
 * possible CPUs).  0 or -ENOMEM. */
int pyrec_create(struct pyrec **out, int procs_fd, int stats_fd, int nr_cpus);
void pyrec_destroy(struct pyrec *py);

/* The manifest's observer calls, forwarded (manifest.h). */
void pyrec_object(struct pyrec *py, uint32_t idx, Elf *elf);
void pyrec_image(struct pyrec *py, uint32_t pid, uint32_t exec_id,
		 const struct manifest_mapping *maps, uint32_t nr);
/* Whether a process has been given to the walk (py_procs) yet. */
bool pyrec_met(const struct pyrec *py);
void pyrec_image_gone(struct pyrec *py, uint32_t pid, uint32_t exec_id);

/* A code object the walk met first (PYTHON_EVENT_CODE, size bytes): its
 * names, from the copies the event carries, then from the process for
 * what they do not hold.  A shorter event (the replay tests') has no
 * copies: everything is read from the process. */
void pyrec_code(struct pyrec *py, const struct python_code_event *e, size_t size);

/* What the BPF walk was given for image (pid, exec_id): 0, or -ENOENT
 * when it has no interpreter that is walked (for the replay tests). */
int pyrec_walk_info(const struct pyrec *py, uint32_t pid, uint32_t exec_id,
		    struct python_proc *out);

/* Fill rec->python: every process found, every code copied (since the
 * recording began), the counters.  0 or -ENOMEM. */
int pyrec_emit(struct pyrec *py, struct bprof_recording *rec);

#endif /* BPROF_RECORD_PYREC_H */
