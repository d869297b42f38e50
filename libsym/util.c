/* SPDX-License-Identifier: Apache-2.0 */
/* util.c - arena, hash map, CRC-32 and logging shared by libsym. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bsym_internal.h"

struct bsym_arena_chunk {
	struct bsym_arena_chunk *next;
	size_t used, cap;
	_Alignas(16) unsigned char data[];
};

#define ARENA_CHUNK (64 * 1024)

void *bsym_arena_alloc(struct bsym_arena *a, size_t sz)
{
	sz = (sz + 15) & ~(size_t)15;
	if (sz == 0)
		sz = 16;
	struct bsym_arena_chunk *c = a->head;
	if (!c || c->cap - c->used < sz) {
		size_t cap = sz > ARENA_CHUNK / 4 ? sz : ARENA_CHUNK;
		struct bsym_arena_chunk *n = malloc(sizeof(*n) + cap);
		if (!n)
			return NULL;
		n->used = 0;
		n->cap = cap;
		if (c && sz > ARENA_CHUNK / 4) {
			/* big block: keep the current chunk in front for small ones */
			n->next = c->next;
			c->next = n;
		} else {
			n->next = c;
			a->head = n;
		}
		c = n;
	}
	void *p = c->data + c->used;
	c->used += sz;
	return p;
}

char *bsym_arena_strdup(struct bsym_arena *a, const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = bsym_arena_alloc(a, n);
	if (p)
		memcpy(p, s, n);
	return p;
}

void bsym_arena_free(struct bsym_arena *a)
{
	struct bsym_arena_chunk *c = a->head;
	while (c) {
		struct bsym_arena_chunk *n = c->next;
		free(c);
		c = n;
	}
	a->head = NULL;
}

/* ---- map ------------------------------------------------------------------ */

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

uint64_t bsym_hash_bytes(const void *p, size_t n, uint64_t seed)
{
	const unsigned char *b = p;
	uint64_t h = 0xcbf29ce484222325ULL ^ seed;
	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ULL;
	}
	return mix64(h);
}

void *bsym_map_get(const struct bsym_map *m, uint64_t key)
{
	if (!m->cap)
		return NULL;
	size_t mask = m->cap - 1;
	for (size_t i = mix64(key) & mask;; i = (i + 1) & mask) {
		if (!m->slots[i].val)
			return NULL;
		if (m->slots[i].key == key)
			return m->slots[i].val;
	}
}

static int map_grow(struct bsym_map *m)
{
	size_t ncap = m->cap ? m->cap * 2 : 64;
	struct bsym_map_slot *ns = calloc(ncap, sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	for (size_t j = 0; j < m->cap; j++) {
		if (!m->slots[j].val)
			continue;
		size_t i = mix64(m->slots[j].key) & (ncap - 1);
		while (ns[i].val)
			i = (i + 1) & (ncap - 1);
		ns[i] = m->slots[j];
	}
	free(m->slots);
	m->slots = ns;
	m->cap = ncap;
	return 0;
}

/* Insert or replace. */
int bsym_map_put(struct bsym_map *m, uint64_t key, void *val)
{
	if ((m->len + 1) * 4 > m->cap * 3 && map_grow(m))
		return -ENOMEM;
	size_t mask = m->cap - 1;
	size_t i = mix64(key) & mask;
	while (m->slots[i].val && m->slots[i].key != key)
		i = (i + 1) & mask;
	if (!m->slots[i].val)
		m->len++;
	m->slots[i].key = key;
	m->slots[i].val = val;
	return 0;
}

void bsym_map_free(struct bsym_map *m)
{
	free(m->slots);
	m->slots = NULL;
	m->cap = m->len = 0;
}

/* ---- CRC-32 as in .gnu_debuglink (the zlib polynomial) --------------------- */

uint32_t bsym_crc32_fd(int fd, bool *ok)
{
	static const uint32_t poly = 0xEDB88320u;
	uint32_t table[256];
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c & 1) ? poly ^ (c >> 1) : c >> 1;
		table[i] = c;
	}
	uint32_t crc = 0xFFFFFFFFu;
	unsigned char buf[65536];
	off_t off = 0;
	*ok = false;
	for (;;) {
		ssize_t n = pread(fd, buf, sizeof(buf), off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return 0;
		}
		if (n == 0)
			break;
		for (ssize_t i = 0; i < n; i++)
			crc = table[(crc ^ buf[i]) & 0xff] ^ (crc >> 8);
		off += n;
	}
	*ok = true;
	return crc ^ 0xFFFFFFFFu;
}

void bsym_log(struct bsym_ctx *ctx, enum bsym_log_level lvl, const char *fmt, ...)
{
	if (!ctx->log)
		return;
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	ctx->log(ctx->log_arg, lvl, buf);
}
