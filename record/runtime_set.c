// SPDX-License-Identifier: Apache-2.0
/*
 * runtime_set.c - the runtimes' recorder sides as one table (runtimes.h):
 * a row per runtime, each row's operations in its folder (record/python/,
 * record/v8/, record/jvm/), and the set of those a recording walks, which
 * prof-record feeds what the manifest learns and the walks' events.  Apart
 * from runtimes.c, which decides which runtimes to walk and is tested on
 * its own (tests/record/runtimes_elf.c).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "loader.h"
#include "runtimes.h"

/* A new runtime is a row here (and its folder). */
static const struct runtime_ops *const runtime_table[] = { &pyrec_ops, &v8rec_ops, &jvmrec_ops };
#define NR_RUNTIMES (sizeof(runtime_table) / sizeof(runtime_table[0]))

struct runtime_set {
	void *rt[NR_RUNTIMES]; /* NULL: not walked */
};

int runtime_set_create(struct runtime_set **out, const struct loader *ld)
{
	struct runtime_set *s = calloc(1, sizeof(*s));

	*out = s;
	if (!s)
		goto nomem;
	for (size_t i = 0; i < NR_RUNTIMES; i++) {
		struct runtime_maps m;

		if (loader_runtime_maps(ld, runtime_table[i]->mask, &m) &&
		    runtime_table[i]->create(&s->rt[i], &m))
			goto nomem;
	}
	return 0;
nomem:
	fprintf(stderr, "prof-record: out of memory\n");
	return -ENOMEM;
}

void runtime_set_destroy(struct runtime_set *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < NR_RUNTIMES; i++)
		if (s->rt[i])
			runtime_table[i]->destroy(s->rt[i]);
	free(s);
}

void runtime_set_object(struct runtime_set *s, uint32_t idx, Elf *elf)
{
	for (size_t i = 0; s && i < NR_RUNTIMES; i++)
		if (s->rt[i])
			runtime_table[i]->object(s->rt[i], idx, elf);
}

void runtime_set_image(struct runtime_set *s, uint32_t pid, uint32_t exec_id,
		       const struct manifest_mapping *maps, uint32_t nr)
{
	for (size_t i = 0; s && i < NR_RUNTIMES; i++)
		if (s->rt[i])
			runtime_table[i]->image(s->rt[i], pid, exec_id, maps, nr);
}

void runtime_set_image_gone(struct runtime_set *s, uint32_t pid, uint32_t exec_id)
{
	for (size_t i = 0; s && i < NR_RUNTIMES; i++)
		if (s->rt[i])
			runtime_table[i]->image_gone(s->rt[i], pid, exec_id);
}

bool runtime_set_event(struct runtime_set *s, const void *data, size_t size)
{
	for (size_t i = 0; i < NR_RUNTIMES; i++)
		if (runtime_table[i]->event(s ? s->rt[i] : NULL, data, size))
			return true;
	return false;
}

unsigned runtime_set_tick(struct runtime_set *s)
{
	unsigned met = 0;

	for (size_t i = 0; s && i < NR_RUNTIMES; i++) {
		if (!s->rt[i])
			continue;
		if (runtime_table[i]->tick)
			runtime_table[i]->tick(s->rt[i]);
		if (runtime_table[i]->met(s->rt[i]))
			met |= runtime_table[i]->mask;
	}
	return met;
}

int runtime_set_emit(struct runtime_set *s, struct bprof_recording *rec)
{
	for (size_t i = 0; s && i < NR_RUNTIMES; i++)
		if (s->rt[i] && runtime_table[i]->emit(s->rt[i], rec))
			return -ENOMEM;
	return 0;
}
