/* SPDX-License-Identifier: Apache-2.0 */
/*
 * jvmrec.h - the recorder's side of HotSpot frames: finding libjvm.so in
 * the objects sampled processes map, learning the JVM's layouts from its
 * own introspection tables (gHotSpotVMStructs, gHotSpotVMTypes) in the
 * process, telling the BPF walk where its code cache is (the "jvm_procs"
 * map), and copying, once per frame identity the walk meets, what names
 * it (class, method, signature, source file, line number table) while the
 * process still lives.  See record/DESIGN.md "Java frames".
 */
#ifndef BPROF_RECORD_JVMREC_H
#define BPROF_RECORD_JVMREC_H

#include <gelf.h>
#include <stdint.h>
#include <linux/types.h>

#include "bprof.h"
#include "manifest/manifest.h"
#include "jvm/jvm.h"

struct jvmrec;

/* procs_fd: the "jvm_procs" map; stats_fd: "jvm_stats" (per-CPU, nr_cpus
 * possible CPUs).  0 or -ENOMEM. */
int jvmrec_create(struct jvmrec **out, int procs_fd, int stats_fd, int nr_cpus);
void jvmrec_destroy(struct jvmrec *j);

/* The manifest's observer calls, forwarded (manifest.h). */
void jvmrec_object(struct jvmrec *j, uint32_t idx, Elf *elf);
void jvmrec_image(struct jvmrec *j, uint32_t pid, uint32_t exec_id,
		  const struct manifest_mapping *maps, uint32_t nr);
void jvmrec_image_gone(struct jvmrec *j, uint32_t pid, uint32_t exec_id);
/* Whether a process has been given to the walk (jvm_procs) yet. */
bool jvmrec_met(const struct jvmrec *j);

/* The event loop's tick: JVMs found but whose code cache was not made
 * yet (libjvm is mapped long before) are looked at again. */
void jvmrec_tick(struct jvmrec *j);

/* An identity the walk met first (JVM_EVENT_FRAME, size bytes): named now,
 * from the event's copy and the process's memory. */
void jvmrec_frame(struct jvmrec *j, const struct jvm_frame_event *e, size_t size);

/* A JVM found that will not be walked (a release not known, or tables
 * lacking what the walk needs) and not given here before: true with its
 * pid, release (NULL when unread; j's, valid until jvmrec_destroy) and
 * status (BPROF_JVM_UNKNOWN_VERSION or BPROF_JVM_NO_OFFSETS), and for the
 * latter what its last read found lacking (NULL when nothing more is
 * known); false when there is none. */
bool jvmrec_next_refused(struct jvmrec *j, uint32_t *pid, const char **version, uint32_t *status,
			 const char **why);

/* Fill rec->jvm: every JVM found, every identity named, the counters.
 * 0 or -ENOMEM. */
int jvmrec_emit(struct jvmrec *j, struct bprof_recording *rec);

#endif /* BPROF_RECORD_JVMREC_H */
