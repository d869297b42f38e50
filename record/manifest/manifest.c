// SPDX-License-Identifier: Apache-2.0
/*
 * manifest.c - the manifest itself: its lifetime, the process images it
 * keeps (found by pid and exec_id through a table of indexes) and the
 * observer it tells of their mappings.  These are the tables the other
 * files of the manifest work on (manifest_internal.h); this one calls none
 * of them.
 */
#include "manifest_internal.h"

uint64_t manifest__mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

static int tab_grow(struct idx_table *t)
{
	size_t ncap = t->cap ? t->cap * 2 : 1024;
	uint64_t *nk = calloc(ncap, sizeof(*nk));
	uint32_t *nv = malloc(ncap * sizeof(*nv));

	if (!nk || !nv) {
		free(nk);
		free(nv);
		return -ENOMEM;
	}
	memset(nv, 0xff, ncap * sizeof(*nv));
	for (size_t i = 0; i < t->cap; i++) {
		size_t j;

		if (t->vals[i] == UINT32_MAX)
			continue;
		for (j = t->keys[i] & (ncap - 1); nv[j] != UINT32_MAX; j = (j + 1) & (ncap - 1))
			;
		nk[j] = t->keys[i];
		nv[j] = t->vals[i];
	}
	free(t->keys);
	free(t->vals);
	t->keys = nk;
	t->vals = nv;
	t->cap = ncap;
	return 0;
}

int manifest__tab_insert(struct idx_table *t, uint64_t key, uint32_t val)
{
	size_t j;

	if ((t->used + 1) * 2 > t->cap && tab_grow(t))
		return -ENOMEM;
	for (j = key & (t->cap - 1); t->vals[j] != UINT32_MAX; j = (j + 1) & (t->cap - 1))
		;
	t->keys[j] = key;
	t->vals[j] = val;
	t->used++;
	return 0;
}

uint64_t manifest__now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

void manifest__proc_free(struct manifest *m, struct proc_ent *p)
{
	perfmap_copy_release(m->perfmaps, &p->pm);
	perfmap_dump_release(m->perfmaps, &p->jd);
	free(p->maps);
	free(p->hist);
	free(p->gen_seen);
	free(p->partial);
}

int manifest_new(struct manifest **out, int exec_gen_fd, int map_gens_fd, uint64_t start_ns)
{
	struct manifest *m = calloc(1, sizeof(*m));

	*out = NULL;
	if (!m)
		return -ENOMEM;
	elf_version(EV_CURRENT);
	if (perfmap_dirs_new(&m->perfmaps, NULL)) {
		free(m);
		return -ENOMEM;
	}
	m->exec_gen_fd = exec_gen_fd;
	m->map_gens_fd = map_gens_fd;
	m->start_ns = start_ns;
	*out = m;
	return 0;
}

void manifest_free(struct manifest *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nr_procs; i++)
		manifest__proc_free(m, &m->procs[i]);
	perfmap_dirs_free(m->perfmaps);
	for (size_t i = 0; i < m->nr_objs; i++) {
		free(m->objs[i].o.path);
		free(m->objs[i].image);
	}
	free(m->procs);
	free(m->obs_buf);
	free(m->dirty);
	free(m->objs);
	free(m->proc_idx.keys);
	free(m->proc_idx.vals);
	free(m->obj_idx.keys);
	free(m->obj_idx.vals);
	free(m);
}

void manifest_set_observer(struct manifest *m, const struct manifest_observer *obs)
{
	m->obs = *obs;
}

/* Tell the observer an image's mappings (after a change), read in
 * generation gen. */
void manifest__observe_image(struct manifest *m, const struct proc_ent *p, uint32_t gen)
{
	if (!m->obs.image)
		return;
	if (p->nr_maps > m->obs_cap) {
		void *n = realloc(m->obs_buf, p->nr_maps * sizeof(*m->obs_buf));

		if (!n)
			return; /* the image keeps its old table: its walks fall back */
		m->obs_buf = n;
		m->obs_cap = p->nr_maps;
	}
	for (uint32_t i = 0; i < p->nr_maps; i++) {
		m->obs_buf[i].start = p->maps[i].start;
		m->obs_buf[i].end = p->maps[i].end;
		m->obs_buf[i].offset = p->maps[i].off;
		m->obs_buf[i].obj = p->maps[i].obj;
	}
	m->obs.image(m->obs.ctx, p->pid, p->exec_id, gen, m->obs_buf, p->nr_maps);
}

void manifest_stats(const struct manifest *m, struct manifest_stats *st)
{
	*st = m->st;
}

struct proc_ent *manifest__proc_find(struct manifest *m, uint32_t pid, uint32_t exec_id)
{
	uint64_t key = (uint64_t)pid << 32 | exec_id, h = manifest__mix64(key);
	struct idx_table *t = &m->proc_idx;

	if (!t->cap)
		return NULL;
	for (size_t j = h & (t->cap - 1); t->vals[j] != UINT32_MAX; j = (j + 1) & (t->cap - 1)) {
		struct proc_ent *p = &m->procs[t->vals[j]];

		if (t->keys[j] == h && p->pid == pid && p->exec_id == exec_id)
			return p;
	}
	return NULL;
}

/* Pointers into m->procs are valid until the next manifest__proc_get(). */
struct proc_ent *manifest__proc_get(struct manifest *m, uint32_t pid, uint32_t exec_id)
{
	struct proc_ent *p = manifest__proc_find(m, pid, exec_id);

	if (p)
		return p;
	if (m->nr_procs == m->cap_procs) {
		size_t nc = m->cap_procs ? m->cap_procs * 2 : 256;
		void *np = realloc(m->procs, nc * sizeof(*m->procs));

		if (!np)
			return NULL;
		m->procs = np;
		m->cap_procs = nc;
	}
	if (manifest__tab_insert(&m->proc_idx, manifest__mix64((uint64_t)pid << 32 | exec_id), m->nr_procs))
		return NULL;
	p = &m->procs[m->nr_procs++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->exec_id = exec_id;
	return p;
}
