/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cursor.c - the reading cursor's checked steps (internal.h has the
 * inline loads): an error that names the section and the offset, a
 * length that must remain, a count checked against the bytes left before
 * anything is allocated, a run of counters of which a reader knows the
 * first few.  Apart from the section readers, so that read_sections.c
 * (the core sections and the walk) and read_runtimes.c (the runtimes')
 * both use them without calling each other in a loop.
 */
#include <stdio.h>

#include "internal.h"

int bprof_cerr(struct bprof_cur *c, int code, const char *fmt, ...)
{
	char msg[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return bprof_set_error(c->err, code, 0, "%s section at offset %llu: %s", c->sect,
			       (unsigned long long)(c->base + c->pos), msg);
}

int bprof_need(struct bprof_cur *c, uint64_t n, const char *what)
{
	if (bprof_rem(c) < n)
		return bprof_cerr(c, BPROF_E_TRUNCATED, "%s needs %llu bytes but %llu remain", what,
				  (unsigned long long)n, (unsigned long long)bprof_rem(c));
	return 0;
}

int bprof_get_count(struct bprof_cur *c, uint64_t *out, uint64_t min_entry, const char *what)
{
	uint64_t n;
	int rc = bprof_need(c, 8, "entry count");

	if (rc)
		return rc;
	n = bprof_g64(c);
	if (n > bprof_rem(c) / min_entry)
		return bprof_cerr(c, BPROF_E_TRUNCATED,
				  "claims %llu %s of at least %llu bytes but %llu bytes remain",
				  (unsigned long long)n, what, (unsigned long long)min_entry,
				  (unsigned long long)bprof_rem(c));
	*out = n;
	return 0;
}

int bprof_get_counters(struct bprof_cur *c, uint64_t *dst, uint64_t known, uint64_t n,
		       const char *what)
{
	int rc = bprof_need(c, n * 8, what);

	for (uint64_t i = 0; !rc && i < n; i++) {
		uint64_t v = bprof_g64(c);

		if (i < known)
			dst[i] = v;
	}
	return rc;
}
