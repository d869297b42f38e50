/* SPDX-License-Identifier: Apache-2.0 */
/*
 * runtime.c - the table of runtimes (runtime.h) and what the report does
 * around each row: finding a runtime's frame in a stack, and the names
 * found so far in an input, each frame named once however many rows hold
 * it.
 */
#include <errno.h>
#include <stdlib.h>

#include "report.h"

/* A row's file defines it; a new runtime is a line here and a row there. */
extern const struct rep_runtime rep_runtime_python, rep_runtime_jvm, rep_runtime_v8;

/* In the order --info prints them. */
const struct rep_runtime *const rep_runtimes[] = {
	&rep_runtime_python,
	&rep_runtime_jvm,
	&rep_runtime_v8,
	NULL,
};

/* One runtime's names in one input. */
struct rep_names {
	struct rep_map map;      /* (pid, exec_id, w0, name_key) -> index + 1, 0: unnamed */
	struct bsym_result **v;  /* each one allocation (rep_runtime.name) */
	size_t nr, cap;
};

int rep_runtime_at(const uint64_t *ips, size_t i, size_t nr)
{
	for (int k = 0; rep_runtimes[k]; k++)
		if (rep_runtime_is(rep_runtimes[k], ips, i, nr))
			return k;
	return -1;
}

int rep_runtimes_open(struct rep_input *in)
{
	size_t n = 0;

	while (rep_runtimes[n])
		n++;
	in->runtimes = calloc(n, sizeof(*in->runtimes));
	if (!in->runtimes)
		return -ENOMEM;
	for (size_t k = 0; k < n; k++)
		if (rep_runtimes[k]->present(in->rec) &&
		    !(in->runtimes[k] = calloc(1, sizeof(*in->runtimes[k]))))
			return -ENOMEM;
	return 0;
}

void rep_runtimes_close(struct rep_input *in)
{
	for (size_t k = 0; in->runtimes && rep_runtimes[k]; k++) {
		struct rep_names *c = in->runtimes[k];

		if (!c)
			continue;
		for (size_t i = 0; i < c->nr; i++)
			free(c->v[i]);
		free(c->v);
		rep_map_free(&c->map);
		free(c);
	}
	free(in->runtimes);
	in->runtimes = NULL;
}

const struct bsym_result *rep_runtime_name(const struct rep_input *in, int rt, uint32_t pid,
					   uint32_t exec_id, uint64_t w0, uint64_t w1, bool leaf,
					   uint64_t *id)
{
	const struct rep_runtime *r = rep_runtimes[rt];
	struct rep_names *c = in->runtimes ? in->runtimes[rt] : NULL;
	uint64_t key[3] = { (uint64_t)pid << 32 | exec_id, w0, r->name_key ? r->name_key(w1, leaf) : w1 };
	uint64_t *v;
	struct bsym_result *res;
	bool found;

	*id = 0;
	if (!c || rep_map_ref(&c->map, key, sizeof(key), &v, &found))
		return NULL;
	if (found) {
		*id = *v;
		return *v ? c->v[*v - 1] : NULL;
	}
	/* not named: the slot keeps 0, the frame stays unnamed */
	if (c->nr == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 64;
		struct bsym_result **a = realloc(c->v, cap * sizeof(*a));

		if (!a)
			return NULL;
		c->v = a;
		c->cap = cap;
	}
	res = r->name(in->rec, pid, exec_id, w0, w1, leaf);
	if (!res)
		return NULL;
	c->v[c->nr++] = res;
	/* the map may have moved: look the slot up again */
	if (rep_map_ref(&c->map, key, sizeof(key), &v, &found))
		return NULL;
	*v = c->nr;
	*id = c->nr;
	return res;
}

void rep_runtimes_info(FILE *f, const struct bprof_recording *rec)
{
	for (size_t k = 0; rep_runtimes[k]; k++)
		if (rep_runtimes[k]->info && rep_runtimes[k]->present(rec))
			rep_runtimes[k]->info(f, rec);
}
