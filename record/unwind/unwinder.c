// SPDX-License-Identifier: Apache-2.0
/*
 * unwinder.c - build, share and load the unwind tables of sampled objects,
 * and keep each sampled image's mapping table, for the BPF unwinder.
 *
 * Tables are built synchronously when the manifest first opens an object:
 * a whole libc takes a few milliseconds, and by the time an image's mapping
 * table is written every object it maps has its table (or is marked as
 * having none), so a walk never waits for a table that is being built.
 * Objects with one build-id share one table, whatever their path.
 *
 * The rows, rules and object states are BPF_F_MMAPABLE arrays written in
 * place; the order of writes (rows and rules, then pages, then the state,
 * with a release store) means a walk that sees UNWIND_OBJ_LOADED sees the
 * whole table.  The rows are in 1 MiB inner maps of an array of maps,
 * added as tables need them, within the memory budget; a table that does
 * not fit waits here (UNWIND_OBJ_NO_ROOM) until a walk wants it, and then
 * takes the place of tables no walk used (record/DESIGN.md, "The memory
 * budget").  Rows are freed only after an RCU grace period, so no walk
 * reads a freed row that another table reuses.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <linux/types.h>
#include "ehtab.h"
#include "elfobj.h"
#include "gotab.h"
#include "profile.h"
#include "unwind/unwind.h"
#include "unwinder.h"

/* What the unwinder knows of one manifest object. */
struct unw_obj {
	uint32_t obj_id;      /* 0: none (not seen, or no ELF) */
	struct elfobj_loads loads; /* PT_LOAD segments: file offset -> vaddr */
};

/*
 * One table (by obj_id, shared by every object with its build-id).  While
 * loaded its rows are in the kernel only, pages[].first their place there;
 * while not (no room), the rows are kept here, pages[].first an index into
 * rows, until a walk wants them.
 */
struct unw_tab {
	uint32_t idx;         /* the first manifest object with this table */
	uint32_t state;       /* enum unwind_obj_state, as last written */
	bool sampled;         /* a walk wanted it while it was not loaded,
			       * or used it before it was evicted */
	uint64_t tried_gen;   /* no room at this space_gen: retry when it moves */
	uint64_t tried_ns;    /* ... or UNWINDER_IDLE_NS after this try */
	uint64_t cleared_ns;  /* LOADED: when its USED flag was last cleared
			       * (0: no walk has used it yet) */
	uint64_t nr_rows;
	size_t nr_pages;
	struct ehtab_page *pages;
	uint32_t *rows;       /* PENDING and NO_ROOM only */
};

/* build-id -> obj_id, so that copies of one library share a table */
struct unw_bid {
	uint8_t id[BPROF_BUILD_ID_MAX];
	uint32_t len;
	uint32_t obj_id;
};

/* A run of free rows, [start, start + len) in the global row index. */
struct unw_ext {
	uint32_t start, len;
};

struct unwinder {
	struct unwinder_maps maps;
	struct unwinder_sizes sizes;
	uint8_t *objs_mem;    /* mmapped arrays; strides as the kernel lays them out */
	size_t objs_len;
	uint8_t *rules_mem;
	size_t rules_len;
	/* the inner rows maps: fds and mmapped memory, UNWIND_ROWS_PER_MAP rows each */
	int *inner_fd;
	uint32_t **inner_mem;
	uint32_t nr_inner;
	struct unw_ext *free; /* sorted by start, never adjacent */
	size_t nr_free, cap_free;
	uint64_t space_gen;   /* moves when rows are freed or maps added */
	uint64_t aged_ns;     /* the last age_tables() */
	uint64_t rows_used, pages_used;
	uint32_t rules_loaded, next_obj_id, images_live, nr_no_room;
	uint32_t *pending;    /* obj_ids built, to be placed (unwinder_flush) */
	size_t nr_pending, cap_pending;
	struct ehtab_rules *rules;
	struct unw_obj *objs; /* by manifest index */
	size_t nr_objs;
	struct unw_tab *tabs; /* by obj_id */
	size_t nr_tabs;
	struct unw_bid *bids;
	size_t nr_bids, cap_bids;
	struct unwind_proc *proc; /* scratch for unwinder_image */
	struct tabcache *cache;   /* NULL: every table is built */
	struct unwinder_stats st;
};

/* An array map's values are laid out every round_up(value_size, 8) bytes. */
#define ELEM_STRIDE(sz) (((sz) + 7) & ~(size_t)7)

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void *map_array(int fd, size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	return p == MAP_FAILED ? NULL : p;
}

static size_t page_round(size_t n)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);

	return (n + pg - 1) / pg * pg;
}

/*
 * The budget as map sizes.  The page index is a hash map without
 * preallocation, but its bucket array (16 bytes a bucket, a power of two
 * at least max_entries) is allocated whole: one entry per 4 KiB of budget,
 * where every object under Debian's /usr/lib and /usr/bin averages 4 KiB
 * of rows a page (10.2 M rows in 10,345 pages, tools/bench part 7), is
 * room for a budget full of such tables for 0.4 % of it.  Rules: that
 * whole host has 4,044 distinct ones; 16384 leave four times that
 * (256 KiB, where the 65536 the u16 index allows took 1 MiB).  Objects:
 * 1,538 there with a table, copies shared by build-id; 16384 (128 KiB,
 * 512 KiB before).
 */
void unwinder_sizes(uint64_t budget, struct unwinder_sizes *out)
{
	uint64_t pages = budget / 4096;

	out->row_maps = budget / UNWINDER_INNER_BYTES ? budget / UNWINDER_INNER_BYTES : 1;
	if (out->row_maps > 1u << 16)
		out->row_maps = 1u << 16;
	out->pages_cap = pages < 1024 ? 1024 : pages > (1u << 22) ? 1u << 22 : (uint32_t)pages;
	out->rules_cap = 16384;
	out->objs_cap = 16384;
}

uint64_t unwinder_fixed_bytes(const struct unwinder_sizes *sz)
{
	uint64_t buckets = 1;

	while (buckets < sz->pages_cap)
		buckets <<= 1;
	return page_round(sizeof(__u64) * sz->objs_cap) +
	       page_round(ELEM_STRIDE(sizeof(struct unwind_rule)) * sz->rules_cap) +
	       buckets * 16 + (uint64_t)sz->row_maps * 8;
}

uint64_t unwinder_budget_for_rows(uint64_t rows)
{
	uint64_t maps = (rows + UNWIND_ROWS_PER_MAP - 1) / UNWIND_ROWS_PER_MAP;
	uint64_t b = maps * UNWINDER_INNER_BYTES + rows / 256 * UNWINDER_PAGE_BYTES;
	struct unwinder_sizes sz;

	unwinder_sizes(b + (2 << 20), &sz);
	b += unwinder_fixed_bytes(&sz);
	b = (b + (1 << 20) - 1) >> 20 << 20;
	return b < UNWINDER_MIN_BUDGET ? UNWINDER_MIN_BUDGET : b;
}

/* What the tables take now: the fixed arrays, the inner maps, the pages. */
static uint64_t table_bytes(const struct unwinder *u)
{
	return unwinder_fixed_bytes(&u->sizes) + (uint64_t)u->nr_inner * UNWINDER_INNER_BYTES +
	       u->pages_used * UNWINDER_PAGE_BYTES;
}

int unwinder_create(struct unwinder **out, const struct unwinder_maps *maps)
{
	struct unwinder *u = calloc(1, sizeof(*u));
	int err = -ENOMEM;

	*out = NULL;
	if (!u)
		return -ENOMEM;
	u->maps = *maps;
	u->sizes = (struct unwinder_sizes){
		.row_maps = maps->row_maps, .pages_cap = maps->pages_cap,
		.rules_cap = maps->rules_cap, .objs_cap = maps->objs_cap,
	};
	u->next_obj_id = 1;
	u->proc = malloc(sizeof(*u->proc));
	u->inner_fd = calloc(maps->row_maps, sizeof(*u->inner_fd));
	u->inner_mem = calloc(maps->row_maps, sizeof(*u->inner_mem));
	if (!u->proc || !u->inner_fd || !u->inner_mem || ehtab_rules_create(&u->rules))
		goto fail;
	u->objs_len = page_round(sizeof(__u64) * maps->objs_cap);
	u->rules_len = page_round(ELEM_STRIDE(sizeof(struct unwind_rule)) * maps->rules_cap);
	u->objs_mem = map_array(maps->objs_fd, u->objs_len);
	u->rules_mem = map_array(maps->rules_fd, u->rules_len);
	if (!u->objs_mem || !u->rules_mem) {
		err = -errno;
		goto fail;
	}
	/* rule 0 is the all-zero UNWIND_CFA_NONE: the array starts zeroed */
	u->rules_loaded = 1;
	*out = u;
	return 0;
fail:
	unwinder_destroy(u);
	return err;
}

void unwinder_set_cache(struct unwinder *u, struct tabcache *c)
{
	u->cache = c;
}

void unwinder_destroy(struct unwinder *u)
{
	if (!u)
		return;
	if (u->objs_mem)
		munmap(u->objs_mem, u->objs_len);
	if (u->rules_mem)
		munmap(u->rules_mem, u->rules_len);
	for (uint32_t i = 0; i < u->nr_inner; i++) {
		munmap(u->inner_mem[i], (size_t)UNWIND_ROWS_PER_MAP * 4);
		close(u->inner_fd[i]);
	}
	free(u->inner_fd);
	free(u->inner_mem);
	free(u->free);
	free(u->objs);
	for (size_t i = 0; i < u->nr_tabs; i++) {
		free(u->tabs[i].pages);
		free(u->tabs[i].rows);
	}
	free(u->tabs);
	free(u->pending);
	free(u->bids);
	free(u->proc);
	ehtab_rules_destroy(u->rules);
	free(u);
}

void unwinder_stats(const struct unwinder *u, struct unwinder_stats *st)
{
	*st = u->st;
	st->rules = u->rules_loaded;
	st->rows = u->rows_used;
	st->pages = u->pages_used;
	st->objects_failed += u->nr_no_room;
	st->row_maps = u->nr_inner;
	st->budget = u->maps.budget;
	st->bytes = table_bytes(u);
	if (st->peak_bytes < st->bytes)
		st->peak_bytes = st->bytes;
	/* the live images' mapping tables: hash elements of one struct
	 * unwind_proc each, outside the budget (they follow the processes) */
	st->image_bytes = (uint64_t)u->images_live * (sizeof(struct unwind_proc) + 64);
}

static uint64_t *state_word(const struct unwinder *u, uint32_t obj_id)
{
	return (uint64_t *)(u->objs_mem + sizeof(__u64) * obj_id);
}

/* A new state, the walker's flags cleared.  Release: a walk that sees
 * LOADED sees the rows and pages written before. */
static void set_state(struct unwinder *u, uint32_t obj_id, uint32_t state)
{
	if (obj_id < u->nr_tabs) {
		if (u->tabs[obj_id].state == UNWIND_OBJ_NO_ROOM)
			u->nr_no_room--;
		if (state == UNWIND_OBJ_NO_ROOM)
			u->nr_no_room++;
		if (state == UNWIND_OBJ_LOADED)
			u->space_gen++; /* one more table that may be evicted */
		u->tabs[obj_id].state = state;
	}
	__atomic_store_n(state_word(u, obj_id), (uint64_t)state, __ATOMIC_RELEASE);
}

/* arr (of *nr elements of size sz) grown so that index idx exists, at
 * least doubling, the new elements zeroed; NULL when out of memory (arr is
 * then unchanged and still the caller's). */
static void *grow_array(void *arr, size_t *nr, size_t sz, size_t idx)
{
	size_t n;
	char *p;

	if (idx < *nr)
		return arr;
	n = idx + 1 > *nr * 2 ? idx + 1 : *nr * 2;
	p = realloc(arr, n * sz);
	if (!p)
		return NULL;
	memset(p + *nr * sz, 0, (n - *nr) * sz);
	*nr = n;
	return p;
}

static struct unw_obj *slot(struct unwinder *u, uint32_t idx)
{
	struct unw_obj *p = grow_array(u->objs, &u->nr_objs, sizeof(*p), idx);

	if (!p)
		return NULL;
	u->objs = p;
	return &p[idx];
}

static struct unw_tab *tab_slot(struct unwinder *u, uint32_t obj_id)
{
	struct unw_tab *p = grow_array(u->tabs, &u->nr_tabs, sizeof(*p), obj_id);

	if (!p)
		return NULL;
	u->tabs = p;
	return &p[obj_id];
}

static struct unw_bid *find_bid(struct unwinder *u, const struct bprof_object *o)
{
	for (size_t i = 0; i < u->nr_bids; i++)
		if (u->bids[i].len == o->build_id_len &&
		    !memcmp(u->bids[i].id, o->build_id, o->build_id_len))
			return &u->bids[i];
	return NULL;
}

static void remember_bid(struct unwinder *u, const struct bprof_object *o, uint32_t obj_id)
{
	if (!(o->flags & BPROF_OBJ_HAS_BUILD_ID) || !o->build_id_len)
		return;
	if (u->nr_bids == u->cap_bids) {
		size_t n = u->cap_bids ? u->cap_bids * 2 : 64;
		void *p = realloc(u->bids, n * sizeof(*u->bids));

		if (!p)
			return; /* only sharing is lost */
		u->bids = p;
		u->cap_bids = n;
	}
	memcpy(u->bids[u->nr_bids].id, o->build_id, o->build_id_len);
	u->bids[u->nr_bids].len = o->build_id_len;
	u->bids[u->nr_bids].obj_id = obj_id;
	u->nr_bids++;
}

/* Copy the rules the interner learnt since the last load into the map. */
static void load_new_rules(struct unwinder *u)
{
	size_t n = ehtab_rules_count(u->rules);

	for (size_t i = u->rules_loaded; i < n && i < u->maps.rules_cap; i++)
		memcpy(u->rules_mem + ELEM_STRIDE(sizeof(struct unwind_rule)) * i,
		       ehtab_rules_get(u->rules, i), sizeof(struct unwind_rule));
	u->rules_loaded = n < u->maps.rules_cap ? n : u->maps.rules_cap;
}

/* ---- the rows: inner maps and free runs --------------------------------- */

/* Wait until no BPF program still runs with what it read before: an update
 * of an array of maps returns only after an RCU grace period (the kernel's
 * maybe_wait_bpf_programs), so rewriting inner map 0's slot with itself is
 * a barrier against walks that may still read rows just freed. */
static void wait_walks(struct unwinder *u)
{
	__u32 k = 0;

	if (u->nr_inner)
		bpf_map_update_elem(u->maps.rows_fd, &k, &u->inner_fd[0], BPF_ANY);
}

static void free_rows(struct unwinder *u, uint32_t start, uint32_t len)
{
	size_t i = 0;

	if (!len)
		return;
	while (i < u->nr_free && u->free[i].start < start)
		i++;
	/* merge with the run before, the run after, or both */
	if (i > 0 && u->free[i - 1].start + u->free[i - 1].len == start) {
		u->free[i - 1].len += len;
		if (i < u->nr_free && start + len == u->free[i].start) {
			u->free[i - 1].len += u->free[i].len;
			memmove(&u->free[i], &u->free[i + 1], (u->nr_free - i - 1) * sizeof(*u->free));
			u->nr_free--;
		}
		return;
	}
	if (i < u->nr_free && start + len == u->free[i].start) {
		u->free[i].start = start;
		u->free[i].len += len;
		return;
	}
	if (u->nr_free == u->cap_free) {
		size_t n = u->cap_free ? u->cap_free * 2 : 64;
		void *p = realloc(u->free, n * sizeof(*u->free));

		if (!p)
			return; /* those rows are lost to this recording */
		u->free = p;
		u->cap_free = n;
	}
	memmove(&u->free[i + 1], &u->free[i], (u->nr_free - i) * sizeof(*u->free));
	u->free[i] = (struct unw_ext){ start, len };
	u->nr_free++;
}

/*
 * n more inner maps, within the budget: their rows join the free runs.
 * Every update of an array of maps returns after an RCU grace period
 * (the kernel's maybe_wait_bpf_programs), ~10 ms here: one batch update
 * for the n maps waits once (clang's 10 maps, one at a time, took 90-106
 * ms of waiting).  0, -ENOSPC (budget or outer array full), -errno.
 */
static int add_inners(struct unwinder *u, uint32_t n, uint64_t extra_pages)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_MMAPABLE);
	LIBBPF_OPTS(bpf_map_batch_opts, bopts, .elem_flags = BPF_ANY);
	uint32_t keys[64], first = u->nr_inner, made = 0;
	int fds[64], err = 0;

	if (!n || n > 64 || first + n > u->maps.row_maps ||
	    table_bytes(u) + n * UNWINDER_INNER_BYTES + extra_pages * UNWINDER_PAGE_BYTES > u->maps.budget)
		return -ENOSPC;
	for (; made < n; made++) {
		fds[made] = bpf_map_create(BPF_MAP_TYPE_ARRAY, "unwind_rows_in", sizeof(__u32),
					   sizeof(struct unwind_row_chunk), UNWIND_CHUNKS_PER_MAP, &opts);
		if (fds[made] < 0) {
			err = -errno;
			break;
		}
		u->inner_mem[first + made] = map_array(fds[made], (size_t)UNWIND_ROWS_PER_MAP * 4);
		if (!u->inner_mem[first + made]) {
			err = -errno;
			close(fds[made]);
			break;
		}
		keys[made] = first + made;
	}
	if (made) {
		uint64_t t0 = mono_ns();
		__u32 count = made;

		if (u->maps.no_fd_batch || bpf_map_update_batch(u->maps.rows_fd, keys, fds, &count, &bopts)) {
			/* no batches for arrays of maps (before Linux 5.6),
			 * none trusted (unwinder.h), or stopped part way
			 * (count: how far): the rest one by one */
			if (u->maps.no_fd_batch)
				count = 0;
			for (uint32_t i = count <= made ? count : 0; i < made; i++)
				if (bpf_map_update_elem(u->maps.rows_fd, &keys[i], &fds[i], BPF_ANY)) {
					err = -errno;
					made = i;
					break;
				}
		}
		u->st.map_wait_ns += mono_ns() - t0;
	}
	/* the maps in the outer array are the recording's; the others go
	 * (err: made is then what was stored) */
	for (uint32_t i = 0; i < n; i++) {
		if (i < made) {
			u->inner_fd[first + i] = fds[i];
			free_rows(u, (first + i) * UNWIND_ROWS_PER_MAP, UNWIND_ROWS_PER_MAP);
		} else if (u->inner_mem[first + i]) {
			munmap(u->inner_mem[first + i], (size_t)UNWIND_ROWS_PER_MAP * 4);
			u->inner_mem[first + i] = NULL;
			close(fds[i]);
		}
	}
	u->nr_inner += made;
	u->space_gen += made != 0;
	return made == n ? 0 : err ? err : -ENOSPC;
}

/* The first free run of at least len rows, taken; false if none. */
static bool take_rows(struct unwinder *u, uint32_t len, uint32_t *start)
{
	for (size_t i = 0; i < u->nr_free; i++) {
		if (u->free[i].len < len)
			continue;
		*start = u->free[i].start;
		u->free[i].start += len;
		u->free[i].len -= len;
		if (!u->free[i].len) {
			memmove(&u->free[i], &u->free[i + 1], (u->nr_free - i - 1) * sizeof(*u->free));
			u->nr_free--;
		}
		return true;
	}
	return false;
}

static uint64_t free_total(const struct unwinder *u)
{
	uint64_t n = 0;

	for (size_t i = 0; i < u->nr_free; i++)
		n += u->free[i].len;
	return n;
}

/* The maps that want rows need beyond the free ones, in one batch, as
 * many as the budget allows (with room for pages more page entries): what
 * does not fit then is tried page by page. */
static void grow_rows(struct unwinder *u, uint64_t want, size_t pages)
{
	uint64_t spare = free_total(u), n;

	if (want <= spare)
		return;
	n = (want - spare + UNWIND_ROWS_PER_MAP - 1) / UNWIND_ROWS_PER_MAP;
	if (n > u->maps.row_maps - u->nr_inner)
		n = u->maps.row_maps - u->nr_inner;
	while (n && add_inners(u, n > 64 ? 64 : (uint32_t)n, pages) == -ENOSPC)
		n--;
}

/* Copy rows to the global row index at, across inner maps. */
static void write_rows(struct unwinder *u, uint32_t at, const uint32_t *rows, uint32_t n)
{
	while (n) {
		uint32_t m = at / UNWIND_ROWS_PER_MAP, off = at % UNWIND_ROWS_PER_MAP;
		uint32_t k = UNWIND_ROWS_PER_MAP - off < n ? UNWIND_ROWS_PER_MAP - off : n;

		memcpy(u->inner_mem[m] + off, rows, (size_t)k * 4);
		at += k;
		rows += k;
		n -= k;
	}
}

static void read_rows(struct unwinder *u, uint32_t at, uint32_t *rows, uint32_t n)
{
	while (n) {
		uint32_t m = at / UNWIND_ROWS_PER_MAP, off = at % UNWIND_ROWS_PER_MAP;
		uint32_t k = UNWIND_ROWS_PER_MAP - off < n ? UNWIND_ROWS_PER_MAP - off : n;

		memcpy(rows, u->inner_mem[m] + off, (size_t)k * 4);
		at += k;
		rows += k;
		n -= k;
	}
}

/* ---- tables in and out of the maps ------------------------------------- */

/* The page index of a table into the pages map, pg[].first the rows'
 * places: in one batch (BPF_MAP_UPDATE_BATCH, Linux 5.6), one system call
 * where each page was one; page by page where the kernel takes no
 * batches.  0 or -errno. */
static int load_pages(struct unwinder *u, uint32_t obj_id, const struct ehtab_page *pg, size_t nr)
{
	struct unwind_page_key *keys = malloc(nr * sizeof(*keys) + 1);
	struct unwind_page *vals = malloc(nr * sizeof(*vals) + 1);
	LIBBPF_OPTS(bpf_map_batch_opts, opts, .elem_flags = BPF_ANY);
	__u32 count = (__u32)nr;
	int err = 0;

	if (!keys || !vals) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < nr; i++) {
		keys[i] = (struct unwind_page_key){ .obj_id = obj_id, .page = pg[i].page };
		vals[i] = (struct unwind_page){ .first_row = pg[i].first, .nr_rows = pg[i].nr };
	}
	if (!count || !bpf_map_update_batch(u->maps.pages_fd, keys, vals, &count, &opts))
		goto out;
	/* refused, or stopped part way (count: those written): the rest one
	 * by one, which also says which error it was */
	for (size_t i = count <= nr ? count : 0; i < nr; i++) {
		if (bpf_map_update_elem(u->maps.pages_fd, &keys[i], &vals[i], BPF_ANY)) {
			err = -errno;
			break;
		}
	}
out:
	free(keys);
	free(vals);
	return err;
}

static void unload_pages(struct unwinder *u, uint32_t obj_id, const struct ehtab_page *pg, size_t nr)
{
	struct unwind_page_key *keys = malloc(nr * sizeof(*keys) + 1);
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	__u32 count = (__u32)nr;

	if (!keys)
		return;
	for (size_t i = 0; i < nr; i++)
		keys[i] = (struct unwind_page_key){ .obj_id = obj_id, .page = pg[i].page };
	if (count && bpf_map_delete_batch(u->maps.pages_fd, keys, &count, &opts))
		for (size_t i = 0; i < nr; i++)
			bpf_map_delete_elem(u->maps.pages_fd, &keys[i]);
	free(keys);
}

/*
 * Place a table's rows (rows, pages relative to them) in the maps: each
 * page in the first free run that holds it (a table need not be in one
 * piece, so the holes that evictions leave are used), inner maps added
 * within the budget as needed.  On success pg[].first are the global rows
 * and the state is for the caller to set.  0, -ENOSPC (no room), -errno.
 */
static int place(struct unwinder *u, uint32_t obj_id, struct ehtab_page *pg, size_t nr,
		 const uint32_t *rows, uint64_t nr_rows)
{
	uint32_t *at = malloc(nr * sizeof(*at) + 1);
	size_t i;
	int err = 0;

	if (!at)
		return -ENOMEM;
	if (ehtab_rules_count(u->rules) > u->maps.rules_cap ||
	    u->pages_used + nr > u->maps.pages_cap ||
	    table_bytes(u) + nr * UNWINDER_PAGE_BYTES > u->maps.budget) {
		err = -ENOSPC;
		goto out;
	}
	/* the maps the table needs beyond the free rows, added at once */
	grow_rows(u, nr_rows + nr_rows / 64, nr);
	for (i = 0; i < nr; i++) {
		while (!take_rows(u, pg[i].nr, &at[i])) {
			err = add_inners(u, 1, nr);
			if (err)
				break;
		}
		if (err)
			break;
	}
	if (err) {
		while (i--)
			free_rows(u, at[i], pg[i].nr);
		goto out;
	}
	load_new_rules(u);
	for (i = 0; i < nr; i++)
		write_rows(u, at[i], rows + pg[i].first, pg[i].nr);
	for (i = 0; i < nr; i++) {
		uint32_t rel = pg[i].first;

		pg[i].first = at[i];
		at[i] = rel; /* kept to undo */
	}
	err = load_pages(u, obj_id, pg, nr);
	if (err) {
		/* the pages written so far go; the rows are free again (no
		 * walk reads them: the state is not LOADED) */
		unload_pages(u, obj_id, pg, nr);
		for (i = 0; i < nr; i++) {
			free_rows(u, pg[i].first, pg[i].nr);
			pg[i].first = at[i];
		}
		goto out;
	}
	u->rows_used += nr_rows;
	u->pages_used += nr;
out:
	free(at);
	return err;
}

/* A table's rows back out of the kernel into t (it was LOADED; the caller
 * has made sure no walk reads them any more). */
static int take_back(struct unwinder *u, struct unw_tab *t)
{
	uint32_t *rows = malloc(t->nr_rows * sizeof(*rows) + 1);
	uint32_t n = 0;

	if (!rows)
		return -ENOMEM;
	for (size_t i = 0; i < t->nr_pages; i++) {
		read_rows(u, t->pages[i].first, rows + n, t->pages[i].nr);
		free_rows(u, t->pages[i].first, t->pages[i].nr);
		t->pages[i].first = n;
		n += t->pages[i].nr;
	}
	t->rows = rows;
	u->rows_used -= t->nr_rows;
	u->pages_used -= t->nr_pages;
	return 0;
}

/* Try to load t (NO_ROOM, its rows in t->rows); true when loaded. */
static bool load_kept(struct unwinder *u, uint32_t obj_id, struct unw_tab *t)
{
	if (place(u, obj_id, t->pages, t->nr_pages, t->rows, t->nr_rows))
		return false;
	free(t->rows);
	t->rows = NULL;
	set_state(u, obj_id, UNWIND_OBJ_LOADED);
	return true;
}

/* The table's cache key: the object's build-id, or where it has none its
 * fallback hash (fb, 8 bytes: rustup's toolchains ship librustc_driver and
 * libLLVM without build-ids, 4 M rows built in ~1 s at every recording
 * before), and its .eh_frame bytes, which the cache checks whatever the
 * name.  false: no key (no identity, no .eh_frame), the table is built. */
static bool cache_key(const struct bprof_object *o, Elf *elf, struct tabcache_key *k,
		      uint8_t fb[8])
{
	const uint8_t *src, *id = o->build_id;
	size_t len, id_len = o->build_id_len;
	uint64_t vaddr;

	if (!(o->flags & BPROF_OBJ_HAS_BUILD_ID) || !id_len) {
		if (!(o->flags & BPROF_OBJ_FALLBACK_ID))
			return false;
		for (int i = 0; i < 8; i++)
			fb[i] = (uint8_t)(o->fallback_hash >> (8 * i));
		id = fb;
		id_len = 8;
	}
	if (ehtab_source(elf, &src, &len, &vaddr))
		return false;
	*k = (struct tabcache_key){
		.build_id = id, .build_id_len = id_len,
		.src_len = len, .src_vaddr = vaddr, .src_hash = tabcache_hash(src, len, 0),
	};
	return true;
}

/* Build obj_id's table from elf (or read it from the cache), to be placed
 * by unwinder_flush(); its new state (PENDING, or NO_TABLE). */
static uint32_t build_table(struct unwinder *u, uint32_t obj_id, struct unw_tab *tab,
			       Elf *elf, const struct bprof_object *o)
{
	struct ehtab *t = NULL;
	struct ehtab_packed pk = {0};
	struct ehtab_error err;
	struct tabcache_key key;
	uint8_t fb[8];
	bool keyed = u->cache && cache_key(o, elf, &key, fb);
	uint64_t t0 = cpu_ns();
	uint32_t state = UNWIND_OBJ_NO_TABLE;
	int berr = -ENOENT;

	/* from the cache, or built (and then kept for the next recording);
	 * a broken .eh_frame is the object's problem, not the recording's:
	 * it just has no table (err says why; -v could print it) */
	if (keyed)
		berr = tabcache_get(u->cache, &key, u->rules, &pk);
	if (berr) {
		berr = ehtab_build(&t, elf, &err);
		/* Go code, which no .eh_frame describes */
		if ((!berr || berr == -ENOENT) && gotab_add(&t, elf, NULL) == 0)
			berr = 0;
		/* ld.so's entry code, which no FDE describes: the outermost
		 * frame of every program's start-up (ehtab.h) */
		if (!berr && (berr = ehtab_add_entry(t, elf)) > 0)
			berr = 0;
		if (!berr)
			berr = ehtab_pack(t, u->rules, &pk, &err);
		if (!berr && keyed)
			tabcache_put(u->cache, &key, &pk, u->rules);
	}
	u->st.build_ns += cpu_ns() - t0;
	if (berr || !pk.nr_rows)
		goto out;
	if (u->nr_pending == u->cap_pending) {
		size_t cap = u->cap_pending ? 2 * u->cap_pending : 64;
		uint32_t *p = realloc(u->pending, cap * sizeof(*p));

		if (!p) {
			u->st.objects_failed++;
			goto out;
		}
		u->pending = p;
		u->cap_pending = cap;
	}
	/* placed with the image's other tables (unwinder_flush) */
	tab->nr_rows = pk.nr_rows;
	tab->nr_pages = pk.nr_pages;
	tab->pages = pk.pages;
	tab->rows = pk.rows;
	pk.pages = NULL;
	pk.rows = NULL;
	u->pending[u->nr_pending++] = obj_id;
	state = UNWIND_OBJ_PENDING;
out:
	ehtab_packed_free(&pk);
	ehtab_destroy(t);
	return state;
}

void unwinder_object(struct unwinder *u, uint32_t idx, Elf *elf, const struct bprof_object *o)
{
	struct unw_obj *s = slot(u, idx);
	struct unw_tab *t;
	struct unw_bid *b;
	uint32_t state;

	if (!s || s->obj_id)
		return; /* a table once decided stays: its id is in mapping tables */
	if (!elf || elf_kind(elf) != ELF_K_ELF)
		return; /* no ELF: walks through it fall back to frame pointers */
	elfobj_loads_read(elf, &s->loads);
	if (!s->loads.nr)
		return;
	if ((o->flags & BPROF_OBJ_HAS_BUILD_ID) && (b = find_bid(u, o))) {
		s->obj_id = b->obj_id;
		u->st.objects_shared++;
		return;
	}
	if (u->next_obj_id >= u->maps.objs_cap || !(t = tab_slot(u, u->next_obj_id))) {
		u->st.objects_failed++;
		return;
	}
	s->obj_id = u->next_obj_id++;
	t->idx = idx;
	state = build_table(u, s->obj_id, t, elf, o);
	set_state(u, s->obj_id, state);
	if (state == UNWIND_OBJ_NO_TABLE)
		u->st.objects_no_table++;
	remember_bid(u, o, s->obj_id);
}

/*
 * Place the tables built since the last call, in the order their objects
 * were met.  The row maps they need beyond the free rows are added first,
 * in one batch: each batch waits for an RCU grace period, and one batch
 * per table made a mid-recording exec of clang++ wait 65 ms with no
 * process table, its first 40 samples at 499 Hz walked by frame pointer.
 * A table that does not fit in the budget is kept here (NO_ROOM).
 */
void unwinder_flush(struct unwinder *u)
{
	uint64_t want = 0, t0;
	size_t pages = 0;

	if (!u->nr_pending)
		return;
	t0 = cpu_ns();
	for (size_t i = 0; i < u->nr_pending; i++) {
		const struct unw_tab *t = &u->tabs[u->pending[i]];

		want += t->nr_rows + t->nr_rows / 64;
		pages += t->nr_pages;
	}
	grow_rows(u, want, pages); /* place() adds any more it needs */
	for (size_t i = 0; i < u->nr_pending; i++) {
		uint32_t id = u->pending[i];
		struct unw_tab *t = &u->tabs[id];
		int err = place(u, id, t->pages, t->nr_pages, t->rows, t->nr_rows);

		if (!err) {
			free(t->rows);
			t->rows = NULL;
			set_state(u, id, UNWIND_OBJ_LOADED);
			u->st.objects_loaded++;
		} else if (err == -ENOSPC) {
			set_state(u, id, UNWIND_OBJ_NO_ROOM); /* until a walk wants it */
		} else {
			free(t->rows);
			t->rows = NULL;
			set_state(u, id, UNWIND_OBJ_NO_TABLE);
			u->st.objects_failed++;
		}
	}
	u->nr_pending = 0;
	u->st.load_ns += cpu_ns() - t0;
}

/*
 * A table a walk used is evicted only when no walk has used it for this
 * long: long enough that a table in use is not thrown out for another
 * (each eviction costs a grace period and a copy), short enough that one
 * sample in a library's constructors does not keep its table for the whole
 * recording against the library the program then runs in (clang++: libz3's
 * constructors, then libLLVM for the rest).
 */
#define UNWINDER_IDLE_NS 50000000ULL
#define UNWINDER_WAIT_TICK_MS 20 /* the event loop's tick while one waits */

static int cmp_victim(const void *a, const void *b, void *ctx)
{
	const struct unwinder *u = ctx;
	const struct unw_tab *x = &u->tabs[*(const uint32_t *)a], *y = &u->tabs[*(const uint32_t *)b];

	/* tables no walk ever used first, then those idle; largest first */
	if ((x->cleared_ns != 0) != (y->cleared_ns != 0))
		return x->cleared_ns ? 1 : -1;
	return x->nr_rows < y->nr_rows ? 1 : x->nr_rows > y->nr_rows ? -1 : 0;
}

/*
 * Make room for want (NO_ROOM, wanted by a walk) by evicting loaded tables
 * that no walk has used, or none for UNWINDER_IDLE_NS, and load it.
 * Nothing is evicted unless the rows and the budget then suffice.
 */
static bool load_wanted(struct unwinder *u, uint32_t want_id, uint64_t now)
{
	struct unw_tab *w = &u->tabs[want_id];
	uint32_t *victims = NULL, nv = 0;
	uint64_t room, got = 0, grow;
	bool ok = false;

	if (load_kept(u, want_id, w))
		return true;
	/* what the budget could still add, in rows */
	grow = table_bytes(u) + w->nr_pages * UNWINDER_PAGE_BYTES < u->maps.budget ?
		       (u->maps.budget - table_bytes(u) - w->nr_pages * UNWINDER_PAGE_BYTES) /
			       UNWINDER_INNER_BYTES * UNWIND_ROWS_PER_MAP : 0;
	if (grow > (uint64_t)(u->maps.row_maps - u->nr_inner) * UNWIND_ROWS_PER_MAP)
		grow = (uint64_t)(u->maps.row_maps - u->nr_inner) * UNWIND_ROWS_PER_MAP;
	room = free_total(u) + grow;
	victims = malloc(u->nr_tabs * sizeof(*victims) + 1);
	if (!victims)
		return false;
	for (uint32_t id = 1; id < u->nr_tabs; id++) {
		uint64_t v = __atomic_load_n(state_word(u, id), __ATOMIC_ACQUIRE);

		const struct unw_tab *t = &u->tabs[id];

		if (t->state == UNWIND_OBJ_LOADED && !(v & UNWIND_OBJ_USED) &&
		    (!t->cleared_ns || now - t->cleared_ns >= UNWINDER_IDLE_NS))
			victims[nv++] = id;
	}
	qsort_r(victims, nv, sizeof(*victims), cmp_victim, u);
	uint32_t n = 0;

	/* a little more than the rows: pages are placed whole, in holes */
	while (n < nv && room + got < w->nr_rows + w->nr_rows / 16 + 1)
		got += u->tabs[victims[n++]].nr_rows;
	if (room + got < w->nr_rows)
		goto out; /* even all of them would not do: keep them */
	for (uint32_t i = 0; i < n; i++) {
		struct unw_tab *t = &u->tabs[victims[i]];

		/* walks stop reading it, then its pages go; one a walk used
		 * is listed as sampled if it is still out at the end */
		t->sampled |= t->cleared_ns != 0;
		set_state(u, victims[i], UNWIND_OBJ_NO_ROOM);
		unload_pages(u, victims[i], t->pages, t->nr_pages);
	}
	/* ... and the walks that read them before have ended */
	wait_walks(u);
	for (uint32_t i = 0; i < n; i++) {
		struct unw_tab *t = &u->tabs[victims[i]];

		if (take_back(u, t)) {
			/* out of memory: its rows are lost to this recording,
			 * its table with them (it was never used) */
			for (size_t k = 0; k < t->nr_pages; k++)
				free_rows(u, t->pages[k].first, t->pages[k].nr);
			u->rows_used -= t->nr_rows;
			u->pages_used -= t->nr_pages;
			set_state(u, victims[i], UNWIND_OBJ_NO_TABLE);
		}
		u->st.objects_evicted++;
		u->st.objects_loaded--;
	}
	u->space_gen++;
	ok = load_kept(u, want_id, w);
out:
	free(victims);
	return ok;
}

/*
 * The walks' USED flags, read and cleared: a table whose flag is still
 * clear UNWINDER_IDLE_NS later was not used in between.  Only done while
 * some table is out (NO_ROOM), so a recording within its budget never
 * writes the flags.
 */
static void age_tables(struct unwinder *u, uint64_t now)
{
	for (uint32_t id = 1; id < u->nr_tabs; id++) {
		struct unw_tab *t = &u->tabs[id];
		uint64_t *w;

		if (t->state != UNWIND_OBJ_LOADED)
			continue;
		w = state_word(u, id);
		if (__atomic_load_n(w, __ATOMIC_ACQUIRE) & UNWIND_OBJ_USED) {
			__atomic_fetch_and(w, ~(uint64_t)UNWIND_OBJ_USED, __ATOMIC_ACQ_REL);
			t->cleared_ns = now;
		}
	}
}

int unwinder_tick(struct unwinder *u)
{
	bool waiting = false;
	uint64_t now;

	if (!u)
		return 0;
	unwinder_flush(u); /* objects met outside an image's reading */
	if (!u->nr_no_room)
		return 0;
	now = mono_ns();
	for (uint32_t id = 1; id < u->nr_tabs && u->nr_no_room; id++) {
		struct unw_tab *t = &u->tabs[id];
		uint64_t v, t0;

		if (t->state != UNWIND_OBJ_NO_ROOM)
			continue;
		v = __atomic_load_n(state_word(u, id), __ATOMIC_ACQUIRE);
		if (!(v & UNWIND_OBJ_WANTED))
			continue;
		t->sampled = true;
		/* nothing changed since it did not fit, and no table can
		 * have become idle since */
		if (t->tried_gen == u->space_gen + 1 && now - t->tried_ns < UNWINDER_IDLE_NS) {
			waiting = true;
			continue;
		}
		t0 = cpu_ns();
		if (load_wanted(u, id, now)) {
			t->cleared_ns = now; /* a walk wants it: in use */
			u->st.objects_loaded++;
			u->st.objects_reloaded++;
		} else {
			t->tried_gen = u->space_gen + 1;
			t->tried_ns = now;
			waiting = true;
		}
		u->st.load_ns += cpu_ns() - t0;
	}
	/* aged while anything is out, so that a table idle since before a
	 * want is evicted at once */
	if (waiting || now - u->aged_ns >= UNWINDER_IDLE_NS) {
		age_tables(u, now);
		u->aged_ns = now;
	}
	if (u->st.peak_bytes < table_bytes(u))
		u->st.peak_bytes = table_bytes(u);
	return waiting ? UNWINDER_WAIT_TICK_MS : 0;
}

long unwinder_misses(const struct unwinder *u, struct unwinder_miss **out)
{
	long n = 0;

	*out = NULL;
	if (!u->nr_no_room)
		return 0;
	*out = calloc(u->nr_no_room, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	for (uint32_t id = 1; id < u->nr_tabs && n < u->nr_no_room; id++) {
		const struct unw_tab *t = &u->tabs[id];
		uint64_t v;

		if (t->state != UNWIND_OBJ_NO_ROOM)
			continue;
		v = __atomic_load_n(state_word(u, id), __ATOMIC_ACQUIRE);
		(*out)[n++] = (struct unwinder_miss){
			.idx = t->idx, .sampled = t->sampled || (v & UNWIND_OBJ_WANTED),
			.rows = t->nr_rows, .pages = t->nr_pages,
		};
	}
	return n;
}

uint64_t unwinder_budget_needed(const struct unwinder *u)
{
	uint64_t rows = u->rows_used, pages = u->pages_used, maps, need;

	for (uint32_t id = 1; id < u->nr_tabs; id++)
		if (u->tabs[id].state == UNWIND_OBJ_NO_ROOM) {
			rows += u->tabs[id].nr_rows;
			pages += u->tabs[id].nr_pages;
		}
	/* pages placed whole leave a little of each inner map unused */
	maps = (rows + rows / 32 + UNWIND_ROWS_PER_MAP - 1) / UNWIND_ROWS_PER_MAP;
	need = maps * UNWINDER_INNER_BYTES + pages * UNWINDER_PAGE_BYTES;
	struct unwinder_sizes sz;

	/* the fixed part grows a little with the budget */
	unwinder_sizes(need + (need >> 4) + (2 << 20), &sz);
	need += unwinder_fixed_bytes(&sz);
	return (need + (1 << 20) - 1) >> 20 << 20;
}

void unwinder_image(struct unwinder *u, uint32_t pid, uint32_t exec_id, uint32_t gen,
		    const struct manifest_mapping *maps, uint32_t nr)
{
	struct profile_seen_key key = { .pid = pid, .exec_id = exec_id };
	struct unwind_proc *p = u->proc;
	uint32_t n = 0;

	unwinder_flush(u); /* its objects' tables, before walks can meet them */
	memset(p, 0, sizeof(*p));
	for (uint32_t i = 0; i < nr && n < UNWIND_MAX_MAPPINGS; i++) {
		struct unwind_mapping *m = &p->m[n];
		const struct unw_obj *s = maps[i].obj < u->nr_objs ? &u->objs[maps[i].obj] : NULL;

		if (maps[i].end <= maps[i].start)
			continue;
		/* sorted and disjoint, as the binary search assumes */
		if (n && maps[i].start < p->m[n - 1].end)
			continue;
		m->start = maps[i].start;
		m->end = maps[i].end;
		if (s && s->obj_id &&
		    elfobj_loads_bias(&s->loads, maps[i].start, maps[i].offset, (uint64_t *)&m->bias))
			m->obj_id = s->obj_id;
		n++;
	}
	if (nr > n)
		u->st.image_failures++; /* some mappings left out: they fall back */
	p->nr = n;
	/* the walker uses it only in this generation (profile.bpf.c) */
	p->gen = gen;
	if (!bpf_map_update_elem(u->maps.procs_fd, &key, p, BPF_NOEXIST)) {
		u->images_live++;
	} else if (errno != EEXIST || bpf_map_update_elem(u->maps.procs_fd, &key, p, BPF_EXIST)) {
		u->st.image_failures++; /* full: this image's walks use frame pointers */
		return;
	}
	u->st.images++;
}

void unwinder_image_gone(struct unwinder *u, uint32_t pid, uint32_t exec_id)
{
	struct profile_seen_key key = { .pid = pid, .exec_id = exec_id };

	if (!bpf_map_delete_elem(u->maps.procs_fd, &key) && u->images_live)
		u->images_live--;
}
