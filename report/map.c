/* SPDX-License-Identifier: Apache-2.0 */
/*
 * map.c - a byte-string -> value hash map (report.h: rep_map), open
 * addressing with linear probing: the name caches, fold.c's keys and the
 * exporters' tables.  It calls nothing of the report.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

/* Eight bytes a step: fold.c hashes whole stacks, hundreds of bytes. */
static uint64_t hash_bytes(const void *p, size_t n)
{
	const unsigned char *s = p;
	uint64_t h = 0xcbf29ce484222325ull ^ n, v;

	for (; n >= 8; s += 8, n -= 8) {
		memcpy(&v, s, 8);
		h = (h ^ v) * 0x9e3779b97f4a7c15ull;
		h ^= h >> 29;
	}
	for (; n; s++, n--)
		h = (h ^ *s) * 0x100000001b3ull;
	return h ^ (h >> 32); /* the slot is taken from the low bits */
}

void rep_map_free(struct rep_map *m)
{
	for (size_t i = 0; i < m->nslots; i++)
		free(m->slots[i].key);
	free(m->slots);
	memset(m, 0, sizeof(*m));
}

static int map_grow(struct rep_map *m)
{
	size_t n = m->nslots ? m->nslots * 2 : 256;
	struct rep_map_slot *s = calloc(n, sizeof(*s));

	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < m->nslots; i++) {
		if (!m->slots[i].key)
			continue;
		size_t j = m->slots[i].hash & (n - 1);
		while (s[j].key)
			j = (j + 1) & (n - 1);
		s[j] = m->slots[i];
	}
	free(m->slots);
	m->slots = s;
	m->nslots = n;
	return 0;
}

int rep_map_ref(struct rep_map *m, const void *key, size_t len, uint64_t **value, bool *found)
{
	uint64_t h;
	size_t j;

	*value = NULL;
	if ((m->nr + 1) * 2 > m->nslots && map_grow(m))
		return -ENOMEM;
	h = hash_bytes(key, len);
	j = h & (m->nslots - 1);
	while (m->slots[j].key) {
		struct rep_map_slot *s = &m->slots[j];
		if (s->hash == h && s->len == len && memcmp(s->key, key, len) == 0) {
			*value = &s->value;
			*found = true;
			return 0;
		}
		j = (j + 1) & (m->nslots - 1);
	}
	*found = false;
	char *k = malloc(len ? len : 1);
	if (!k)
		return -ENOMEM;
	memcpy(k, key, len);
	m->slots[j] = (struct rep_map_slot){ .key = k, .len = len, .hash = h, .value = 0 };
	m->nr++;
	*value = &m->slots[j].value;
	return 0;
}

int rep_map_get(struct rep_map *m, const void *key, size_t len, uint64_t *value, bool *found)
{
	uint64_t *v;
	int err = rep_map_ref(m, key, len, &v, found);

	if (err)
		return err;
	if (*found)
		*value = *v;
	else
		*v = *value;
	return 0;
}
