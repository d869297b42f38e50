/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: libsym's symbol cache files (libsym/CACHE.md) through
 * bsym_cache_parse().  The input's length and checksum fields are set to
 * match it first (a mutation would otherwise only ever meet the checksum
 * check, which the unit tests cover), and the reader's key is the one the
 * file carries, so that mutations reach the structural checks behind both.
 * What the parser accepts must hold its promises: every name inside the
 * string table and terminated there, entries in increasing order, frame
 * counts that match the reason, enums in range.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bsym_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct check {
	const char *strings;
	size_t slen;
	uint64_t last;
	bool any;
};

static int on_info(void *arg, enum bsym_reason status, bool has_dwarf, bool has_symtab)
{
	if ((unsigned)status > BSYM_R_INVALID)
		abort();
	return 0;
}

static const char *on_strings(void *arg, const char *s, size_t len)
{
	struct check *c = arg;
	if (!len || s[len - 1] != '\0')
		abort();
	c->strings = s;
	c->slen = len;
	return s;
}

static void in_table(const struct check *c, const char *s)
{
	if (!s || s < c->strings || s >= c->strings + c->slen)
		abort();
	if (strnlen(s, (size_t)(c->strings + c->slen - s)) >= (size_t)(c->strings + c->slen - s))
		abort();
}

static int on_entry(void *arg, uint64_t off, unsigned fp, const struct bsym_result *r)
{
	struct check *c = arg;
	if (c->any && off <= c->last)
		abort();
	c->last = off;
	c->any = true;
	if (fp > 1 + BSYM_FP_CLOBBERED || (!fp && !r))
		abort();
	if (!r)
		return 0;
	if ((unsigned)r->reason > BSYM_R_INVALID)
		abort();
	if ((r->reason == BSYM_OK) != (r->nr_frames > 0) || r->nr_frames > BSYM_MAX_INLINE_DEPTH)
		abort();
	for (unsigned i = 0; i < r->nr_frames; i++) {
		in_table(c, r->frames[i].name);
		in_table(c, r->frames[i].raw_name);
		if (r->frames[i].file)
			in_table(c, r->frames[i].file);
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *b = malloc(size ? size : 1);
	static const uint8_t other_key[1] = { 0 };
	const uint8_t *key = other_key;
	size_t kl = sizeof(other_key);
	struct check c = { 0 };
	struct bsym_cache_sink sink = { &c, on_info, on_strings, on_entry };
	const char *why = NULL;

	if (!b)
		return 0;
	memcpy(b, data, size);
	if (size >= 36) {
		uint64_t h = bsym_hash_bytes(b + 32, size - 32, 0x6273796d63616368ull);
		for (int i = 0; i < 8; i++) {
			b[16 + i] = (uint8_t)((uint64_t)size >> (8 * i));
			b[24 + i] = (uint8_t)(h >> (8 * i));
		}
		size_t l = b[32] | (size_t)b[33] << 8 | (size_t)b[34] << 16 | (size_t)b[35] << 24;
		if (l > 0 && l <= size - 36) {
			key = b + 36;
			kl = l;
		}
	}
	int err = bsym_cache_parse(b, size, key, kl, &sink, &why);
	if (err != 0 && err != -EINVAL && err != -ESTALE && err != -ENOMEM)
		abort();
	if (err == -EINVAL && !why)
		abort(); /* a refusal says why */
	free(b);
	return 0;
}
