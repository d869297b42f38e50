/* SPDX-License-Identifier: Apache-2.0 */
/*
 * perfmap.c - JIT symbol maps (/tmp/perf-PID.map): "START SIZE name" per
 * line, START and SIZE in hex (0x optional), the name running to the end of
 * the line.  Anything else is skipped: the text is untrusted.
 *
 * Lines have no time: a JIT that freed code and put other code at its
 * address adds a line that overlaps an older one, and nothing says
 * whether a sample came before or after.  So an address is named only when
 * every line that covers it gives the same name (format/SPEC.md 6.16,
 * rule 2); otherwise the answer is BSYM_R_JIT_AMBIGUOUS, never a choice.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bsym_internal.h"

/* Lines looked at below an address: enough for any real map (the scan
 * also stops at the longest line's length); a hostile map of huge lines
 * makes an address ambiguous rather than slow. */
#define SCAN_BACK 4096

struct pm_ent {
	uint64_t start, end;
	const char *name;
	uint32_t seq; /* line order: a later line wins over an earlier overlap */
};

struct bsym_perfmap {
	char *text;
	struct pm_ent *e;
	size_t n;
	uint64_t max_len; /* of any line: no line starting lower covers more */
	struct bsym_map cache;
};

void bsym_perfmap_free(struct bsym_perfmap *p)
{
	if (!p)
		return;
	free(p->text);
	free(p->e);
	bsym_map_free(&p->cache);
	free(p);
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Parse hex at *p (0x optional); false on no digits or overflow. */
static bool parse_hex(char **p, char *end, uint64_t *out)
{
	char *s = *p;
	if (end - s >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	uint64_t v = 0;
	int nd = 0;
	while (s < end && hexval(*s) >= 0) {
		if (v >> 60)
			return false;
		v = (v << 4) | (uint64_t)hexval(*s);
		s++;
		nd++;
	}
	if (!nd)
		return false;
	*p = s;
	*out = v;
	return true;
}

static int cmp_ent(const void *a, const void *b)
{
	const struct pm_ent *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int bsym_perfmap_register(struct bsym_ctx *ctx, const char *text, size_t len, uint32_t *id_out)
{
	if (!ctx || (!text && len) || !id_out)
		return -EINVAL;
	*id_out = BSYM_NO_OBJECT;
	if (ctx->nr_perfmaps >= BSYM_NO_OBJECT - 1)
		return -ENOMEM;
	struct bsym_perfmap *p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->text = malloc(len + 1);
	if (!p->text)
		goto oom;
	if (len)
		memcpy(p->text, text, len);
	p->text[len] = '\0';
	size_t cap = 0;
	char *s = p->text, *tend = p->text + len;
	uint32_t seq = 0;
	while (s < tend) {
		char *nl = memchr(s, '\n', (size_t)(tend - s));
		char *le = nl ? nl : tend;
		char *q = s;
		s = nl ? nl + 1 : tend;
		*le = '\0';
		if (memchr(q, '\0', (size_t)(le - q)))
			continue; /* embedded NUL: not a text line */
		while (q < le && (*q == ' ' || *q == '\t'))
			q++;
		uint64_t start, size;
		if (!parse_hex(&q, le, &start) || q >= le || (*q != ' ' && *q != '\t'))
			continue;
		while (q < le && (*q == ' ' || *q == '\t'))
			q++;
		if (!parse_hex(&q, le, &size) || q >= le || (*q != ' ' && *q != '\t'))
			continue;
		while (q < le && (*q == ' ' || *q == '\t'))
			q++;
		char *ne = le;
		while (ne > q && (ne[-1] == '\r' || ne[-1] == ' ' || ne[-1] == '\t'))
			ne--;
		if (ne == q || size == 0)
			continue;
		*ne = '\0';
		if (p->n == cap) {
			size_t nc = cap ? cap * 2 : 64;
			struct pm_ent *n = realloc(p->e, nc * sizeof(*n));
			if (!n)
				goto oom;
			p->e = n;
			cap = nc;
		}
		uint64_t end = start + size < start ? UINT64_MAX : start + size;
		p->e[p->n++] = (struct pm_ent){ start, end, q, seq++ };
		if (end - start > p->max_len)
			p->max_len = end - start;
	}
	if (p->n)
		qsort(p->e, p->n, sizeof(*p->e), cmp_ent);
	if (ctx->nr_perfmaps == ctx->cap_perfmaps) {
		size_t nc = ctx->cap_perfmaps ? ctx->cap_perfmaps * 2 : 4;
		struct bsym_perfmap **n = realloc(ctx->perfmaps, nc * sizeof(*n));
		if (!n)
			goto oom;
		ctx->perfmaps = n;
		ctx->cap_perfmaps = nc;
	}
	*id_out = (uint32_t)ctx->nr_perfmaps;
	ctx->perfmaps[ctx->nr_perfmaps++] = p;
	return 0;
oom:
	bsym_perfmap_free(p);
	return -ENOMEM;
}

int bsym_symbolize_perfmap(struct bsym_ctx *ctx, uint32_t perfmap, uint64_t addr,
			   const struct bsym_result **out)
{
	if (!ctx || !out)
		return -EINVAL;
	*out = NULL;
	if (perfmap >= ctx->nr_perfmaps)
		return -EINVAL;
	struct bsym_perfmap *p = ctx->perfmaps[perfmap];
	const struct bsym_result *r = bsym_map_get(&p->cache, addr);
	if (r) {
		*out = r;
		return 0;
	}
	size_t lo = 0, hi = p->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->e[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	const struct pm_ent *best = NULL;
	bool differ = false;
	size_t i = lo, k = 0;
	for (; i > 0 && k < SCAN_BACK; i--, k++) {
		const struct pm_ent *e = &p->e[i - 1];
		if (addr - e->start >= p->max_len)
			break; /* no line further down reaches addr */
		if (addr >= e->end)
			continue;
		if (best && strcmp(best->name, e->name))
			differ = true;
		if (!best || e->seq > best->seq)
			best = e;
	}
	/* cut short with lines left that might cover addr: not provably one name */
	if (best && i > 0 && k == SCAN_BACK && addr - p->e[i - 1].start < p->max_len)
		differ = true;
	if (!best) {
		r = bsym_result_reason(BSYM_R_JIT);
	} else if (differ) {
		r = bsym_result_reason(BSYM_R_JIT_AMBIGUOUS);
	} else {
		struct bsym_result *nr = bsym_result_new(ctx, 1);
		if (!nr)
			return -ENOMEM;
		struct bsym_frame *f = (struct bsym_frame *)nr->frames;
		f->raw_name = best->name;
		f->name = bsym_display_name(ctx, best->name);
		f->offset = addr - best->start;
		f->kind = BSYM_FRAME_JIT;
		r = nr;
	}
	if (bsym_map_put(&p->cache, addr, (void *)r))
		return -ENOMEM;
	*out = r;
	return 0;
}
