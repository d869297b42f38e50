/* SPDX-License-Identifier: Apache-2.0 */
/*
 * unwinder.h - feeds the BPF unwinder: builds each sampled object's unwind
 * table from its .eh_frame (record/unwind/ehtab.h), once per build-id, loads it
 * into the maps of bpf/unwind.h, and keeps the per-image mapping tables
 * that lead the BPF walk from an address to an object and its table.
 *
 * Driven by the manifest (manifest_observer): an object is seen when the
 * manifest opens it for its build-id, an image's mappings when a snapshot
 * changes them.  Never prints; errors are counted in the stats.
 */
#ifndef BPROF_RECORD_UNWINDER_H
#define BPROF_RECORD_UNWINDER_H

#include <gelf.h>
#include <stdint.h>
#include "bprof.h"
#include "manifest.h"
#include "tabcache.h"

struct unwinder;

/* The maps of bpf/unwind.h, by fd, with their capacities as loaded. */
struct unwinder_maps {
	int procs_fd;        /* (tgid, exec_id) -> struct unwind_proc */
	int objs_fd;         /* obj_id -> enum unwind_obj_state (mmapable array) */
	int pages_fd;        /* struct unwind_page_key -> struct unwind_page */
	int rows_fd;         /* struct unwind_row_chunk array (mmapable) */
	int rules_fd;        /* struct unwind_rule array (mmapable) */
	uint32_t objs_cap;   /* max_entries of each */
	uint32_t row_chunks;
	uint32_t rules_cap;
	uint32_t pages_cap;
	uint32_t procs_cap;
};

/* 0 or -errno (the arrays could not be mapped). */
int unwinder_create(struct unwinder **out, const struct unwinder_maps *maps);
void unwinder_destroy(struct unwinder *u);
/* Tables are looked up in c before they are built, and kept there after
 * (NULL: none).  c outlives u's use of it. */
void unwinder_set_cache(struct unwinder *u, struct tabcache *c);

/*
 * Object idx of the manifest was opened: elf is its ELF image (only valid
 * during the call; NULL when the file could not be read), o its identity.
 * Builds and loads its table unless an object with the same build-id has
 * one already.  Called again for the same idx when the manifest learns more
 * (an unreadable entry later read through a live mapping).
 */
void unwinder_object(struct unwinder *u, uint32_t idx, Elf *elf, const struct bprof_object *o);

/* The executable mappings of image (pid, exec_id), sorted by start. */
void unwinder_image(struct unwinder *u, uint32_t pid, uint32_t exec_id, uint32_t gen,
		    const struct manifest_mapping *maps, uint32_t nr);
/* The image is gone (exit, exec): free its mapping table. */
void unwinder_image_gone(struct unwinder *u, uint32_t pid, uint32_t exec_id);

struct unwinder_stats {
	uint64_t objects_loaded;   /* tables built or shared, and loaded */
	uint64_t objects_shared;   /* ... of which another object's (same build-id) */
	uint64_t objects_no_table; /* no .eh_frame, unreadable, or a broken one */
	uint64_t objects_failed;   /* the maps were full */
	uint64_t rows;             /* rows loaded */
	uint64_t rules;            /* distinct rules loaded */
	uint64_t pages;
	uint64_t images;           /* image mapping tables written */
	uint64_t image_failures;   /* ... that could not be (map full, too many mappings) */
	uint64_t bytes;            /* kernel memory the tables take */
	uint64_t build_ns;         /* CPU time spent building tables */
	uint64_t load_ns;          /* ... and loading them */
};
void unwinder_stats(const struct unwinder *u, struct unwinder_stats *st);

#endif
