/* SPDX-License-Identifier: Apache-2.0 */
/*
 * unwinder.h - feeds the BPF unwinder: builds each sampled object's unwind
 * table from its .eh_frame (record/unwind/ehtab.h), once per build-id, loads it
 * into the maps of bpf/unwind/unwind.h, and keeps the per-image mapping tables
 * that lead the BPF walk from an address to an object and its table.
 *
 * Driven by the manifest (manifest_observer): an object is seen when the
 * manifest opens it for its build-id, an image's mappings when a snapshot
 * changes them.  Never prints; errors are counted in the stats.
 */
#ifndef BPROF_RECORD_UNWINDER_H
#define BPROF_RECORD_UNWINDER_H

#include <gelf.h>
#include <stdbool.h>
#include <stdint.h>
#include "bprof.h"
#include "manifest/manifest.h"
#include "tabcache.h"
#include <linux/types.h>
#include "unwind/unwind.h"

struct unwinder;

/* The maps of bpf/unwind/unwind.h, by fd, with their capacities as loaded. */
struct unwinder_maps {
	int procs_fd;        /* (tgid, exec_id) -> struct unwind_proc */
	int objs_fd;         /* obj_id -> enum unwind_obj_state (mmapable array) */
	int pages_fd;        /* struct unwind_page_key -> struct unwind_page */
	int rows_fd;         /* array of maps: inner arrays of struct unwind_row_chunk */
	int rules_fd;        /* struct unwind_rule array (mmapable) */
	uint32_t objs_cap;   /* max_entries of each */
	uint32_t row_maps;   /* ... of the outer rows array: inner maps possible */
	uint32_t rules_cap;
	uint32_t pages_cap;
	uint64_t budget;     /* bytes of kernel memory the tables may take */
	/* the inner maps go into the outer array one at a time, not in a
	 * batch: on Debian 11's 5.10 a batch update of an array of maps
	 * returns success, a lookup from user space finds the maps, and a
	 * BPF program's finds none (every walk went by frame pointer, 0 %
	 * complete; one at a time, 100 %).  Set by the loader where the
	 * kernel lacks bpf_loop (5.17): a batch is trusted where it was
	 * seen to work (6.1, 6.18), not on the kernels between. */
	bool no_fd_batch;
};

/*
 * The kernel memory budget (--unwind-memory) as map sizes, for the loader:
 * the outer rows array's entries (inner maps of UNWIND_ROWS_PER_MAP rows),
 * the page index's and the rules' capacities.  What they cost before any
 * table is loaded is unwinder_fixed_bytes(); the rest of the budget is for
 * inner maps and page entries, allocated as tables are loaded.
 */
struct unwinder_sizes {
	uint32_t row_maps, pages_cap, rules_cap, objs_cap;
};
void unwinder_sizes(uint64_t budget, struct unwinder_sizes *out);
uint64_t unwinder_fixed_bytes(const struct unwinder_sizes *sz);
/* The budget that holds that many rows (--unwind-table-size), at least
 * UNWINDER_MIN_BUDGET. */
uint64_t unwinder_budget_for_rows(uint64_t rows);
/* Kernel memory of one inner rows map, and of one page index entry. */
#define UNWINDER_INNER_BYTES ((uint64_t)UNWIND_ROWS_PER_MAP * 4 + 4096)
#define UNWINDER_PAGE_BYTES 64
/* The smallest budget: the fixed part and one inner map. */
#define UNWINDER_MIN_BUDGET (4ull << 20)

/* 0 or -errno (the arrays could not be mapped). */
int unwinder_create(struct unwinder **out, const struct unwinder_maps *maps);
void unwinder_destroy(struct unwinder *u);
/* Tables are looked up in c before they are built, and kept there after
 * (NULL: none).  c outlives u's use of it. */
void unwinder_set_cache(struct unwinder *u, struct tabcache *c);

/*
 * Object idx of the manifest was opened: elf is its ELF image (only valid
 * during the call; NULL when the file could not be read), o its identity.
 * Builds its table (placed by unwinder_flush()) unless an object with the
 * same build-id has one already.  Called again for the same idx when the
 * manifest learns more (an unreadable entry later read through a live
 * mapping).
 */
void unwinder_object(struct unwinder *u, uint32_t idx, Elf *elf, const struct bprof_object *o);
/*
 * Place the tables unwinder_object() built since the last call, their new
 * row maps added in one batch (each batch waits for an RCU grace period).
 * unwinder_image() and unwinder_tick() do it first; call it when objects
 * were opened for no image (a command's, before it starts).
 */
void unwinder_flush(struct unwinder *u);

/*
 * Load the tables that walks asked for (UNWIND_OBJ_WANTED: they did not
 * fit in the budget when their object was mapped), evicting tables no
 * walk has used, or none lately, if that makes room.  Called from the
 * event loop; cheap when nothing is wanted.  Returns how soon (ms) it
 * wants to be called again while a wanted table waits for room, else 0.
 */
int unwinder_tick(struct unwinder *u);

/* The executable mappings of image (pid, exec_id), sorted by start. */
void unwinder_image(struct unwinder *u, uint32_t pid, uint32_t exec_id, uint32_t gen,
		    const struct manifest_mapping *maps, uint32_t nr);
/* The image is gone (exit, exec): free its mapping table. */
void unwinder_image_gone(struct unwinder *u, uint32_t pid, uint32_t exec_id);

struct unwinder_stats {
	uint64_t objects_loaded;   /* tables built or shared, and loaded */
	uint64_t objects_shared;   /* ... of which another object's (same build-id) */
	uint64_t objects_no_table; /* no .eh_frame, unreadable, or a broken one */
	uint64_t objects_failed;   /* no room: the budget (now), or a map full */
	uint64_t objects_evicted;  /* tables unloaded to make room for wanted ones */
	uint64_t objects_reloaded; /* tables loaded late, because a walk wanted them */
	uint64_t rows;             /* rows loaded */
	uint64_t rules;            /* distinct rules loaded */
	uint64_t pages;
	uint64_t images;           /* image mapping tables written */
	uint64_t image_failures;   /* ... that could not be (map full, too many mappings) */
	uint64_t bytes;            /* kernel memory the tables take (the budget's part) */
	uint64_t peak_bytes;       /* ... at most, over the recording */
	uint64_t image_bytes;      /* kernel memory the live images' mapping tables take */
	uint64_t row_maps;         /* inner rows maps created */
	uint64_t budget;           /* --unwind-memory, as used */
	uint64_t build_ns;         /* CPU time spent building tables */
	uint64_t load_ns;          /* ... and loading them */
	uint64_t map_wait_ns;      /* wall time adding inner maps (each waits for
				    * an RCU grace period) */
};
void unwinder_stats(const struct unwinder *u, struct unwinder_stats *st);

/*
 * An object whose table is not loaded for lack of room: idx is a manifest
 * object index (the first with its build-id), rows and pages its table's
 * size, sampled whether a walk met it.
 */
struct unwinder_miss {
	uint32_t idx;
	bool sampled;
	uint64_t rows, pages;
};
/* The objects not loaded for lack of room now, in *out (malloc'd, the
 * caller frees; NULL when none).  Their number, or -ENOMEM. */
long unwinder_misses(const struct unwinder *u, struct unwinder_miss **out);
/* The --unwind-memory that would have held every table the recording
 * built (those loaded and those missed), rounded up to a MiB. */
uint64_t unwinder_budget_needed(const struct unwinder *u);

#endif
