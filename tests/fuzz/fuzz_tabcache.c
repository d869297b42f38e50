// SPDX-License-Identifier: Apache-2.0
/*
 * fuzz_tabcache - hostile unwind-table cache files (record/unwind/tabcache.c)
 * through tabcache_parse().  The input's body hash is set to match it
 * first (a mutation would otherwise only ever meet the hash check, which
 * the unit test covers) and the key is the one the file claims, so that
 * mutations reach the structural checks.  What the parser accepts must
 * hold what the BPF walk relies on: rows back to back in pages of
 * increasing number, each page's rows sorted, every rule index inside the
 * interned set, every rule of a known kind.
 */
#include <stdlib.h>
#include <string.h>
#include "tabcache.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *buf = malloc(size ? size : 1);
	struct ehtab_rules *rs = NULL;
	struct ehtab_packed pk;
	struct tabcache_key k;
	const uint8_t *rid;
	size_t rid_len;

	if (!buf || ehtab_rules_create(&rs))
		abort();
	memcpy(buf, data, size);
	if (tabcache_seal(buf, size, &k, &rid, &rid_len) == 0 &&
	    tabcache_parse(buf, size, rid, rid_len, &k, rs, &pk) == 0) {
		uint64_t next = 0;

		if (!pk.nr_rows || !pk.nr_pages)
			abort();
		for (size_t i = 0; i < pk.nr_pages; i++) {
			const struct ehtab_page *pg = &pk.pages[i];

			if (pg->first != next || !pg->nr || (i && pg->page <= pk.pages[i - 1].page))
				abort();
			for (uint32_t j = pg->first; j < pg->first + pg->nr; j++) {
				const struct unwind_rule *r =
					ehtab_rules_get(rs, UNWIND_ROW_RULE(pk.rows[j]));

				if (!r || r->cfa_kind >= UNWIND_CFA_KIND_MAX ||
				    r->rbp_kind > UNWIND_RBP_UNDEFINED || r->ra_kind > UNWIND_RA_REG)
					abort();
				if (j > pg->first &&
				    UNWIND_ROW_LO(pk.rows[j]) <= UNWIND_ROW_LO(pk.rows[j - 1]))
					abort();
			}
			next = (uint64_t)pg->first + pg->nr;
		}
		if (next != pk.nr_rows || ehtab_rules_count(rs) > UNWIND_MAX_RULES)
			abort();
		ehtab_packed_free(&pk);
	}
	ehtab_rules_destroy(rs);
	free(buf);
	return 0;
}
