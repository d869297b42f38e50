// SPDX-License-Identifier: Apache-2.0
/*
 * ehtab_pack.c - a table as the BPF maps hold it (ehtab.h): the
 * system-wide set of distinct rules, and an object's rows packed by
 * 4 KiB page (UNWIND_ROW(lo, rule index)).  Apart from ehtab.c: it
 * reads a finished table and knows nothing of .eh_frame, and tabcache.c
 * fills the same rules from tables kept on disk.
 */
#include "ehtab_internal.h"

/* ---- rules and packing ------------------------------------------------ */

struct ehtab_rules {
	struct unwind_rule *rules;
	size_t nr, cap;
	uint32_t *slots; /* open addressing: index + 1, 0 empty */
	size_t nslots;
};

static uint64_t rule_hash(const struct unwind_rule *r)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	const uint8_t *b = (const uint8_t *)r;

	for (size_t i = 0; i < sizeof(*r); i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;
	return h;
}

int ehtab_rules_create(struct ehtab_rules **out)
{
	struct ehtab_rules *rs = calloc(1, sizeof(*rs));
	uint16_t idx;

	*out = NULL;
	if (!rs)
		return -ENOMEM;
	rs->nslots = 1 << 12;
	rs->slots = calloc(rs->nslots, sizeof(*rs->slots));
	if (!rs->slots) {
		free(rs);
		return -ENOMEM;
	}
	struct unwind_rule none = { 0 };
	if (ehtab_rules_intern(rs, &none, &idx)) {
		ehtab_rules_destroy(rs);
		return -ENOMEM;
	}
	*out = rs;
	return 0;
}

void ehtab_rules_destroy(struct ehtab_rules *rs)
{
	if (!rs)
		return;
	free(rs->rules);
	free(rs->slots);
	free(rs);
}

size_t ehtab_rules_count(const struct ehtab_rules *rs)
{
	return rs->nr;
}

const struct unwind_rule *ehtab_rules_get(const struct ehtab_rules *rs, size_t i)
{
	return i < rs->nr ? &rs->rules[i] : NULL;
}

int ehtab_rules_intern(struct ehtab_rules *rs, const struct unwind_rule *r, uint16_t *idx)
{
	size_t mask = rs->nslots - 1, j;

	for (j = rule_hash(r) & mask; rs->slots[j]; j = (j + 1) & mask) {
		if (!memcmp(&rs->rules[rs->slots[j] - 1], r, sizeof(*r))) {
			*idx = (uint16_t)(rs->slots[j] - 1);
			return 0;
		}
	}
	if (rs->nr >= UNWIND_MAX_RULES)
		return -E2BIG;
	if (rs->nr == rs->cap) {
		size_t n = rs->cap ? rs->cap * 2 : 256;
		void *p = realloc(rs->rules, n * sizeof(*rs->rules));

		if (!p)
			return -ENOMEM;
		rs->rules = p;
		rs->cap = n;
	}
	rs->rules[rs->nr] = *r;
	rs->slots[j] = (uint32_t)++rs->nr;
	*idx = (uint16_t)(rs->nr - 1);
	if (rs->nr * 2 > rs->nslots) { /* keep the table half empty */
		size_t ns = rs->nslots * 2;
		uint32_t *s = calloc(ns, sizeof(*s));

		if (!s)
			return 0; /* still correct, only slower */
		for (size_t i = 0; i < rs->nr; i++) {
			size_t k;

			for (k = rule_hash(&rs->rules[i]) & (ns - 1); s[k]; k = (k + 1) & (ns - 1))
				;
			s[k] = (uint32_t)i + 1;
		}
		free(rs->slots);
		rs->slots = s;
		rs->nslots = ns;
	}
	return 0;
}

void ehtab_packed_free(struct ehtab_packed *p)
{
	free(p->rows);
	free(p->pages);
	memset(p, 0, sizeof(*p));
}

/*
 * A page gets an entry when any rule other than NONE is in force in it;
 * its rows are the rule in force at its start (offset 0) and every row
 * that starts inside it.
 */
int ehtab_pack(const struct ehtab *t, struct ehtab_rules *rs, struct ehtab_packed *out,
	       struct ehtab_error *err)
{
	size_t nrows = 0, capr = 0, npages = 0, capp = 0;
	uint16_t *idx = NULL;
	int rc = -ENOMEM;

	memset(out, 0, sizeof(*out));
	if (!t->nr)
		return 0;
	idx = malloc(t->nr * sizeof(*idx));
	if (!idx)
		goto fail;
	for (size_t i = 0; i < t->nr; i++) {
		rc = ehtab_rules_intern(rs, &t->rows[i].rule, &idx[i]);
		if (rc) {
			snprintf(err->message, sizeof(err->message), "%s",
				 rc == -E2BIG ? "more distinct unwind rules than the table holds" : "out of memory");
			goto fail;
		}
	}
	rc = -ENOMEM;
	for (size_t i = 0; i < t->nr; i++) {
		uint64_t a = t->rows[i].addr;
		uint64_t b = i + 1 < t->nr ? t->rows[i + 1].addr : a + 1;
		uint64_t first = a >> UNWIND_PAGE_SHIFT, last = (b - 1) >> UNWIND_PAGE_SHIFT;

		if (idx[i] == UNWIND_RULE_NONE)
			continue;
		/* page numbers are 32 bits: no row may reach past 2^48 */
		if (last - first > MAX_TEXT_PAGES || ((b - 1) >> 48) || b <= a) {
			rc = -E2BIG;
			snprintf(err->message, sizeof(err->message), "unwind rows span too much address space");
			goto fail;
		}
		for (uint64_t pg = first; pg <= last; pg++) {
			size_t j;

			if (npages && out->pages[npages - 1].page >= pg)
				continue; /* already there */
			if (npages >= MAX_TEXT_PAGES) {
				rc = -E2BIG;
				snprintf(err->message, sizeof(err->message), "unwind rows span too many pages");
				goto fail;
			}
			if (npages == capp) {
				size_t n = capp ? capp * 2 : 64;
				void *p = realloc(out->pages, n * sizeof(*out->pages));

				if (!p)
					goto fail;
				out->pages = p;
				capp = n;
			}
			/* rows of this page: the one in force at its start (row
			 * i or earlier: rows are sorted) and those inside */
			uint64_t pstart = pg << UNWIND_PAGE_SHIFT, pend = pstart + (1u << UNWIND_PAGE_SHIFT);
			size_t k = i;

			while (k > 0 && t->rows[k].addr > pstart)
				k--;
			out->pages[npages].page = (uint32_t)pg;
			out->pages[npages].first = (uint32_t)nrows;
			for (j = k; j < t->nr && t->rows[j].addr < pend; j++) {
				uint32_t lo = t->rows[j].addr <= pstart ? 0 : (uint32_t)(t->rows[j].addr - pstart);

				if (nrows == capr) {
					size_t n = capr ? capr * 2 : 4096;
					void *p = realloc(out->rows, n * sizeof(*out->rows));

					if (!p)
						goto fail;
					out->rows = p;
					capr = n;
				}
				/* rows before the page start collapse into row 0 */
				if (lo == 0 && nrows > out->pages[npages].first)
					nrows--;
				out->rows[nrows++] = UNWIND_ROW(lo, idx[j]);
			}
			out->pages[npages].nr = (uint32_t)(nrows - out->pages[npages].first);
			npages++;
		}
	}
	out->nr_rows = nrows;
	out->nr_pages = npages;
	free(idx);
	return 0;
fail:
	free(idx);
	ehtab_packed_free(out);
	if (rc == -ENOMEM)
		snprintf(err->message, sizeof(err->message), "out of memory");
	return rc;
}
