// SPDX-License-Identifier: Apache-2.0
/*
 * v8.bpf.c - V8 (Node.js) JavaScript frames: the maps only (v8.h for the
 * stack words).  The walk's code is inline in the native walk
 * (v8_walk.h, included by profile.bpf.c): a global function or callback
 * here would be one more subprogram than libbpf 1.1's loader program
 * holds.  Linked with the other tracers (bpf/CMakeLists.txt).
 */

#include "bprof.bpf.h"
#include "v8/v8.h"

/* tgid -> the V8 of its image (struct v8_proc), written by prof-record */
struct bprof_v8_procs_map v8_procs SEC(".maps");

/* SFIs announced to prof-record, by (pid, image, SFI, guard) */
struct bprof_v8_seen_map v8_seen SEC(".maps");

/* on-stack-replaced code of (pid, image, SFI), found by prof-record */
struct bprof_v8_codes_map v8_codes SEC(".maps");
