/* SPDX-License-Identifier: Apache-2.0 */
/*
 * v8rec.h - the recorder's side of V8 (Node.js) frames: finding V8 in the
 * objects sampled processes map (its v8dbg_* postmortem symbols), telling
 * the BPF walk where its code is and how its frames and objects are laid
 * out (the "v8_procs" map), and naming, once per SharedFunctionInfo the
 * walk meets, its function and script while the process lives.  See
 * record/DESIGN.md "V8 frames".
 */
#ifndef BPROF_RECORD_V8REC_H
#define BPROF_RECORD_V8REC_H

#include <gelf.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

#include "bprof.h"
#include "manifest/manifest.h"
#include "v8/v8.h"

struct v8rec;

/* procs_fd: the "v8_procs" map; codes_fd: "v8_codes" (-1: none).  0 or
 * -ENOMEM. */
int v8rec_create(struct v8rec **out, int procs_fd, int codes_fd);
void v8rec_destroy(struct v8rec *v);

/* The manifest's observer calls, forwarded (manifest.h). */
void v8rec_object(struct v8rec *v, uint32_t idx, Elf *elf);
void v8rec_image(struct v8rec *v, uint32_t pid, uint32_t exec_id,
		 const struct manifest_mapping *maps, uint32_t nr);
void v8rec_image_gone(struct v8rec *v, uint32_t pid, uint32_t exec_id);
/* Whether a process has been given to the walk (v8_procs) yet. */
bool v8rec_met(const struct v8rec *v);

/* An SFI the walk met first (V8_EVENT_SFI): named from the process now. */
void v8rec_sfi(struct v8rec *v, const struct v8_sfi_event *e);
/* A frame in JIT code the walk could not place (V8_EVENT_CODE): the code
 * object found around its pc, if it is optimized code of the frame's
 * function, is given to the walk (v8_codes). */
void v8rec_code(struct v8rec *v, const struct v8_sfi_event *e);

/* What the BPF walk was given for image (pid, exec_id): 0, or -ENOENT
 * when it has no V8 that is walked (for the tests). */
int v8rec_walk_info(const struct v8rec *v, uint32_t pid, uint32_t exec_id, struct v8_proc *out);

/* V8 processes found so far (for the status line). */
uint32_t v8rec_nr_processes(const struct v8rec *v);

/* Fill rec->v8: every process found, every SFI named.  0 or -ENOMEM. */
int v8rec_emit(struct v8rec *v, struct bprof_recording *rec);

#endif /* BPROF_RECORD_V8REC_H */
