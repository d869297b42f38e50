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
 * whole table.
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
#include "profile.h"
#include "unwind.h"
#include "unwinder.h"

/* What the unwinder knows of one manifest object. */
struct unw_obj {
	uint32_t obj_id;      /* 0: none (not seen, or no ELF) */
	uint32_t nr_loads;
	struct unw_load {
		uint64_t offset, vaddr, filesz;
	} *loads;             /* PT_LOAD segments: file offset -> vaddr */
};

/* build-id -> obj_id, so that copies of one library share a table */
struct unw_bid {
	uint8_t id[BPROF_BUILD_ID_MAX];
	uint32_t len;
	uint32_t obj_id;
};

struct unwinder {
	struct unwinder_maps maps;
	uint8_t *objs_mem;    /* mmapped arrays; strides as the kernel lays them out */
	size_t objs_len;
	uint8_t *rows_mem;
	size_t rows_len;
	uint8_t *rules_mem;
	size_t rules_len;
	uint32_t rows_used, pages_used, rules_loaded, next_obj_id, images_live;
	struct ehtab_rules *rules;
	struct unw_obj *objs; /* by manifest index */
	size_t nr_objs;
	struct unw_bid *bids;
	size_t nr_bids, cap_bids;
	struct unwind_proc *proc; /* scratch for unwinder_image */
	struct tabcache *cache;   /* NULL: every table is built */
	struct unwinder_stats st;
};

/* An array map's values are laid out every round_up(value_size, 8) bytes. */
#define ELEM_STRIDE(sz) (((sz) + 7) & ~(size_t)7)

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

int unwinder_create(struct unwinder **out, const struct unwinder_maps *maps)
{
	struct unwinder *u = calloc(1, sizeof(*u));
	int err = -ENOMEM;

	*out = NULL;
	if (!u)
		return -ENOMEM;
	u->maps = *maps;
	u->next_obj_id = 1;
	u->proc = malloc(sizeof(*u->proc));
	if (!u->proc || ehtab_rules_create(&u->rules))
		goto fail;
	u->objs_len = page_round(ELEM_STRIDE(sizeof(__u32)) * maps->objs_cap);
	u->rows_len = page_round(sizeof(struct unwind_row_chunk) * (size_t)maps->row_chunks);
	u->rules_len = page_round(ELEM_STRIDE(sizeof(struct unwind_rule)) * maps->rules_cap);
	u->objs_mem = map_array(maps->objs_fd, u->objs_len);
	u->rows_mem = map_array(maps->rows_fd, u->rows_len);
	u->rules_mem = map_array(maps->rules_fd, u->rules_len);
	if (!u->objs_mem || !u->rows_mem || !u->rules_mem) {
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
	if (u->rows_mem)
		munmap(u->rows_mem, u->rows_len);
	if (u->rules_mem)
		munmap(u->rules_mem, u->rules_len);
	for (size_t i = 0; i < u->nr_objs; i++)
		free(u->objs[i].loads);
	free(u->objs);
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
	/* what the kernel holds for the tables: the preallocated arrays, the
	 * page entries (hash: key, value and ~48 bytes of element header) and
	 * the live images' mapping tables */
	st->bytes = u->objs_len + u->rows_len + u->rules_len + (uint64_t)u->pages_used * 64 +
		    (uint64_t)u->images_live * sizeof(struct unwind_proc);
}

static void set_state(struct unwinder *u, uint32_t obj_id, uint32_t state)
{
	__atomic_store_n((uint32_t *)(u->objs_mem + ELEM_STRIDE(sizeof(__u32)) * obj_id), state,
			 __ATOMIC_RELEASE);
}

static struct unw_obj *slot(struct unwinder *u, uint32_t idx)
{
	if (idx >= u->nr_objs) {
		size_t n = idx + 1 > u->nr_objs * 2 ? idx + 1 : u->nr_objs * 2;
		void *p = realloc(u->objs, n * sizeof(*u->objs));

		if (!p)
			return NULL;
		u->objs = p;
		memset(u->objs + u->nr_objs, 0, (n - u->nr_objs) * sizeof(*u->objs));
		u->nr_objs = n;
	}
	return &u->objs[idx];
}

static int read_loads(struct unw_obj *s, Elf *elf)
{
	size_t phnum = 0, n = 0;

	free(s->loads);
	s->loads = NULL;
	s->nr_loads = 0;
	if (elf_getphdrnum(elf, &phnum) || !phnum || phnum > 65535)
		return -EINVAL;
	s->loads = calloc(phnum, sizeof(*s->loads));
	if (!s->loads)
		return -ENOMEM;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		s->loads[n].offset = ph.p_offset;
		s->loads[n].vaddr = ph.p_vaddr;
		s->loads[n].filesz = ph.p_filesz;
		n++;
	}
	s->nr_loads = n;
	return n ? 0 : -EINVAL;
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

/* The page index of an object's rows into the pages map: in one batch
 * (BPF_MAP_UPDATE_BATCH, Linux 5.6), one system call where each page was
 * one (a system-wide recording's objects: ~300 pages); page by page where
 * the kernel takes no batches.  0 or -errno. */
static int load_pages(struct unwinder *u, uint32_t obj_id, const struct ehtab_packed *pk)
{
	struct unwind_page_key *keys = malloc(pk->nr_pages * sizeof(*keys) + 1);
	struct unwind_page *vals = malloc(pk->nr_pages * sizeof(*vals) + 1);
	LIBBPF_OPTS(bpf_map_batch_opts, opts, .elem_flags = BPF_ANY);
	__u32 count = (__u32)pk->nr_pages;
	int err = 0;

	if (!keys || !vals) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < pk->nr_pages; i++) {
		keys[i] = (struct unwind_page_key){ .obj_id = obj_id, .page = pk->pages[i].page };
		vals[i] = (struct unwind_page){
			.first_row = u->rows_used + pk->pages[i].first,
			.nr_rows = pk->pages[i].nr,
		};
	}
	if (!count || !bpf_map_update_batch(u->maps.pages_fd, keys, vals, &count, &opts))
		goto out;
	/* refused, or stopped part way (count: those written): the rest one
	 * by one, which also says which error it was */
	for (size_t i = count <= pk->nr_pages ? count : 0; i < pk->nr_pages; i++) {
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

/* The table's cache key: the object's build-id and its .eh_frame bytes.
 * false: no key (no build-id, no .eh_frame), the table is built. */
static bool cache_key(const struct bprof_object *o, Elf *elf, struct tabcache_key *k)
{
	const uint8_t *src;
	size_t len;
	uint64_t vaddr;

	if (!(o->flags & BPROF_OBJ_HAS_BUILD_ID) || !o->build_id_len ||
	    ehtab_source(elf, &src, &len, &vaddr))
		return false;
	*k = (struct tabcache_key){
		.build_id = o->build_id, .build_id_len = o->build_id_len,
		.src_len = len, .src_vaddr = vaddr, .src_hash = tabcache_hash(src, len, 0),
	};
	return true;
}

/* Build obj_id's table from elf (or read it from the cache) and load it;
 * false when it has none. */
static bool build_and_load(struct unwinder *u, uint32_t obj_id, Elf *elf,
			   const struct bprof_object *o)
{
	struct ehtab *t = NULL;
	struct ehtab_packed pk = {0};
	struct ehtab_error err;
	struct tabcache_key key;
	bool keyed = u->cache && cache_key(o, elf, &key);
	uint64_t t0 = cpu_ns();
	bool ok = false;
	int berr = -ENOENT;

	/* from the cache, or built (and then kept for the next recording);
	 * a broken .eh_frame is the object's problem, not the recording's:
	 * it just has no table (err says why; -v could print it) */
	if (keyed)
		berr = tabcache_get(u->cache, &key, u->rules, &pk);
	if (berr) {
		berr = ehtab_build(&t, elf, &err);
		if (!berr)
			berr = ehtab_pack(t, u->rules, &pk, &err);
		if (!berr && keyed)
			tabcache_put(u->cache, &key, &pk, u->rules);
	}
	u->st.build_ns += cpu_ns() - t0;
	if (berr)
		goto out;
	t0 = cpu_ns();
	if (!pk.nr_rows || pk.nr_rows > (uint64_t)u->maps.row_chunks * UNWIND_ROWS_PER_CHUNK - u->rows_used ||
	    pk.nr_pages > u->maps.pages_cap - u->pages_used ||
	    ehtab_rules_count(u->rules) > u->maps.rules_cap) {
		u->st.objects_failed++;
		goto out;
	}
	load_new_rules(u);
	memcpy(u->rows_mem + (size_t)u->rows_used * sizeof(__u32), pk.rows,
	       pk.nr_rows * sizeof(__u32));
	if (load_pages(u, obj_id, &pk)) {
		/* the pages written so far stay, unreachable: the object is
		 * marked as having no table */
		u->st.objects_failed++;
		goto out;
	}
	u->rows_used += pk.nr_rows;
	u->pages_used += pk.nr_pages;
	u->st.load_ns += cpu_ns() - t0;
	ok = true;
out:
	ehtab_packed_free(&pk);
	ehtab_destroy(t);
	return ok;
}

void unwinder_object(struct unwinder *u, uint32_t idx, Elf *elf, const struct bprof_object *o)
{
	struct unw_obj *s = slot(u, idx);
	struct unw_bid *b;

	if (!s || s->obj_id)
		return; /* a table once decided stays: its id is in mapping tables */
	if (!elf || elf_kind(elf) != ELF_K_ELF || read_loads(s, elf))
		return; /* no ELF: walks through it fall back to frame pointers */
	if ((o->flags & BPROF_OBJ_HAS_BUILD_ID) && (b = find_bid(u, o))) {
		s->obj_id = b->obj_id;
		u->st.objects_shared++;
		return;
	}
	if (u->next_obj_id >= u->maps.objs_cap) {
		u->st.objects_failed++;
		return;
	}
	s->obj_id = u->next_obj_id++;
	if (build_and_load(u, s->obj_id, elf, o)) {
		set_state(u, s->obj_id, UNWIND_OBJ_LOADED);
		u->st.objects_loaded++;
	} else {
		set_state(u, s->obj_id, UNWIND_OBJ_NO_TABLE);
		u->st.objects_no_table++;
	}
	remember_bid(u, o, s->obj_id);
}

/* vaddr = address - bias for the PT_LOAD that holds file offset off */
static bool mapping_bias(const struct unw_obj *s, uint64_t start, uint64_t off, uint64_t *bias)
{
	for (uint32_t i = 0; i < s->nr_loads; i++) {
		const struct unw_load *l = &s->loads[i];
		uint64_t first = l->offset & ~0xfffULL;

		if (off >= first && off < l->offset + l->filesz) {
			*bias = start - off + l->offset - l->vaddr;
			return true;
		}
	}
	return false;
}

void unwinder_image(struct unwinder *u, uint32_t pid, uint32_t exec_id, uint32_t gen,
		    const struct manifest_mapping *maps, uint32_t nr)
{
	struct profile_seen_key key = { .pid = pid, .exec_id = exec_id };
	struct unwind_proc *p = u->proc;
	uint32_t n = 0;

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
		    mapping_bias(s, maps[i].start, maps[i].offset, (uint64_t *)&m->bias))
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
