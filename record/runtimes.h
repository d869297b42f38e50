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

#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/*
 * The recorder side of a runtime's frames, one table of operations per
 * runtime (record/python/, record/v8/, record/jvm/: each defines its row at
 * the end of its recorder), so that a new runtime is a folder and a row in
 * runtimes.c's table (docs/development.md, "Adding a runtime").  The BPF
 * walk is the loader's (loaded and attached with the sampler, or when first
 * met: loader_runtimes_tick); this side
 *   - detects the runtime in what the manifest learns (objects, images),
 *   - tells the walk where each process's runtime is (its procs map),
 *   - copies, while the process lives, what names its frames (the walk's
 *     events), and writes that into the recording.
 * Every operation takes its own state (void *: the runtime's handle); the
 * maps its walk was given are the loader's to say (loader_runtime_maps).
 */
struct manifest_mapping;
struct bprof_recording;
struct loader;

/* The maps of a runtime's walk, as the loader made them. */
struct runtime_maps {
	int procs_fd;  /* the walk's processes */
	int stats_fd;  /* its per-CPU counters, or -1 */
	int codes_fd;  /* its code objects met (V8), or -1 */
	int nr_cpus;   /* possible CPUs (the per-CPU maps' values) */
};

struct runtime_ops {
	unsigned mask;     /* RUNTIME_* */
	int (*create)(void **out, const struct runtime_maps *m); /* 0 or -ENOMEM */
	void (*destroy)(void *rt);
	/* the manifest's observer calls (manifest.h) */
	void (*object)(void *rt, uint32_t idx, Elf *elf);
	void (*image)(void *rt, uint32_t pid, uint32_t exec_id, const struct manifest_mapping *maps,
		      uint32_t nr);
	void (*image_gone)(void *rt, uint32_t pid, uint32_t exec_id);
	/* whether a process of it has been given to the walk */
	bool (*met)(const void *rt);
	/* an event of the walk's ring buffer: true when its type is this
	 * runtime's (handled when rt is not NULL, ignored otherwise) */
	bool (*event)(void *rt, const void *data, size_t size);
	/* the event loop's tick and the recording's end (NULL: nothing) */
	void (*tick)(void *rt);
	/* fill its section of rec: 0 or -ENOMEM */
	int (*emit)(void *rt, struct bprof_recording *rec);
};

extern const struct runtime_ops pyrec_ops, v8rec_ops, jvmrec_ops;

/* The recorder sides of the runtimes a recording walks. */
struct runtime_set;

/* One state per runtime the loader walks.  0, or -ENOMEM (said). */
int runtime_set_create(struct runtime_set **out, const struct loader *ld);
void runtime_set_destroy(struct runtime_set *s);
void runtime_set_object(struct runtime_set *s, uint32_t idx, Elf *elf);
void runtime_set_image(struct runtime_set *s, uint32_t pid, uint32_t exec_id,
		       const struct manifest_mapping *maps, uint32_t nr);
void runtime_set_image_gone(struct runtime_set *s, uint32_t pid, uint32_t exec_id);
/* true when the event was a runtime's (handled or ignored) */
bool runtime_set_event(struct runtime_set *s, const void *data, size_t size);
/* each runtime's tick; the runtimes met so far (RUNTIME_*) */
unsigned runtime_set_tick(struct runtime_set *s);
int runtime_set_emit(struct runtime_set *s, struct bprof_recording *rec);

#endif
