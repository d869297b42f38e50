// SPDX-License-Identifier: Apache-2.0
/*
 * heatmap.c - prof-report --heatmap: the samples of the inputs over time,
 * FlameScope's way (a column per second, a row per slice of it, colour by
 * samples), and the flame graph of any range of cells, in one page that
 * needs no network (report.h).
 *
 * The stacks are rendered as the folded output renders them (render.c,
 * annotated so that frame kinds get their hues) and each row's samples are
 * kept with the time slice they fell in (SPEC.md 6.14).  The page gets
 * the unique frames, the stacks as lists of frames and (slot, stack,
 * samples) triples; its script (heatmap.html, embedded at build time)
 * builds the flame graph of a selection from them, as flamegraph_svg.c
 * lays one out.  The files of a --rotate directory share their slices'
 * origin, so they fall into one timeline.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "heatmap_page.h" /* rep_heatmap_page[], generated from heatmap.html */

/* slot is first the row's time (CLOCK_REALTIME ns), made a slot once
 * every input is in: the origin and slice are the inputs' earliest and
 * finest, known only then (the inputs are added one at a time). */
struct triple {
	uint64_t slot;
	uint64_t entry;
	uint64_t count;
};

struct hm {
	uint64_t origin, slice_ns;
	struct triple *t;
	size_t nr, cap;
	uint64_t max_slot;
};

/* The page being built (report.h). */
struct rep_heatmap {
	struct rep_config cfg;
	struct bsym_ctx *sym;
	struct rep_agg *agg;
	struct hm h;
	size_t nr_in, unsliced;
};

/* The start of row c of in, CLOCK_REALTIME ns: its slice's, or the
 * recording's start when it has no slices. */
static uint64_t row_time(const struct bprof_recording *r, const struct bprof_count *c)
{
	if (!r->slices.slice_ns)
		return r->meta.start_time_ns;
	return r->slices.origin_ns + (uint64_t)c->slice * r->slices.slice_ns;
}

static int cmp_triple(const void *x, const void *y)
{
	const struct triple *a = x, *b = y;

	if (a->slot != b->slot)
		return a->slot < b->slot ? -1 : 1;
	return a->entry < b->entry ? -1 : a->entry > b->entry;
}

/* Sum the triples of one (slot, stack): also on times, before they are
 * slots (equal times make equal slots), so that rows repeated file after
 * file take no more room than the page will. */
static void compact(struct hm *h)
{
	size_t n = 0;

	if (!h->nr)
		return;
	qsort(h->t, h->nr, sizeof(*h->t), cmp_triple);
	for (size_t i = 0; i < h->nr; i++) {
		if (n && h->t[n - 1].slot == h->t[i].slot && h->t[n - 1].entry == h->t[i].entry)
			h->t[n - 1].count += h->t[i].count;
		else
			h->t[n++] = h->t[i];
	}
	h->nr = n;
}

static int on_row(void *arg, const struct rep_input *in, const struct bprof_count *c, size_t entry)
{
	struct hm *h = arg;
	uint64_t t = row_time(in->rec, c);

	if (h->nr == h->cap) {
		compact(h);
		if (h->nr > h->cap / 2 || !h->cap) {
			size_t cap = h->cap ? h->cap * 2 : 4096;
			struct triple *n = realloc(h->t, cap * sizeof(*n));

			if (!n)
				return -ENOMEM;
			h->t = n;
			h->cap = cap;
		}
	}
	h->t[h->nr++] = (struct triple){ t, entry, c->count };
	return 0;
}

/* JSON into f with '<' escaped, so that no "</script>" can end the block
 * it is embedded in (names come from hostile files). */
static void put_json_escaped(FILE *f, const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '<')
			fputs("\\u003c", f);
		else
			fputc(s[i], f);
	}
}

/* The page's data (heatmap.html reads it): see the script there. */
static int write_data(FILE *f, const struct rep_agg *agg, const struct hm *h, size_t nr_in,
		      size_t unsliced, const struct rep_heatmap_opts *o)
{
	struct rep_map frames = {0};
	size_t nr_frames = 0, nr = rep_agg_nr(agg);
	char **names = NULL;
	size_t cap_names = 0;
	int err = 0;

	fputs("{\"title\":", f);
	rep_json_string(f, o && o->title ? o->title : "Heatmap");
	fprintf(f, ",\"files\":%zu,\"unsliced\":%zu,\"origin_ms\":%.3f,\"slice_ms\":%.6g,"
		   "\"rows_per_col\":%llu,\"nslots\":%llu,\"follow_ms\":%u,"
		   "\"view\":{\"inverted\":%s,\"min_width_px\":%.6g,\"min_width_pct\":%.6g},\"stacks\":[",
		nr_in, unsliced, (double)h->origin / 1e6, (double)h->slice_ns / 1e6,
		(unsigned long long)(h->slice_ns >= 1000000000ULL ? 1 : 1000000000ULL / h->slice_ns),
		(unsigned long long)(h->nr ? h->max_slot + 1 : 1), o ? o->follow_ms : 0,
		o && o->inverted ? "true" : "false",
		o && o->min_width >= 0 && !o->min_width_pct ? o->min_width : 0.1,
		o && o->min_width >= 0 && o->min_width_pct ? o->min_width : 0.0);
	for (size_t i = 0; i < nr && !err; i++) {
		const char *key = rep_agg_key(agg, i, NULL);

		fputs(i ? ",[" : "[", f);
		for (const char *p = key, *e; !err; p = e + 1) {
			e = strchr(p, ';');
			size_t len = e ? (size_t)(e - p) : strlen(p);
			uint64_t id = nr_frames;
			bool found;

			err = rep_map_get(&frames, p, len, &id, &found);
			if (err)
				break;
			if (!found) {
				if (nr_frames == cap_names) {
					size_t nc = cap_names ? cap_names * 2 : 1024;
					char **nn = realloc(names, nc * sizeof(*nn));

					if (!nn) {
						err = -ENOMEM;
						break;
					}
					names = nn;
					cap_names = nc;
				}
				if (!(names[nr_frames] = strndup(p, len))) {
					err = -ENOMEM;
					break;
				}
				nr_frames++;
			}
			fprintf(f, "%s%llu", p == key ? "" : ",", (unsigned long long)id);
			if (!e)
				break;
		}
		fputc(']', f);
	}
	fputs("],\"frames\":[", f);
	for (size_t i = 0; i < nr_frames && !err; i++) {
		if (i)
			fputc(',', f);
		rep_json_string(f, names[i]);
	}
	fputs("],\"samples\":[", f);
	for (size_t i = 0; i < h->nr && !err; i++)
		fprintf(f, "%s%llu,%llu,%llu", i ? "," : "", (unsigned long long)h->t[i].slot,
			(unsigned long long)h->t[i].entry, (unsigned long long)h->t[i].count);
	fputs("]}", f);
	for (size_t i = 0; i < nr_frames; i++)
		free(names[i]);
	free(names);
	rep_map_free(&frames);
	return err;
}

int rep_heatmap_create(struct rep_heatmap **out, const struct rep_config *cfg,
		       struct bsym_ctx *sym)
{
	struct rep_heatmap *x = calloc(1, sizeof(*x));
	int err;

	*out = NULL;
	if (!x)
		return -ENOMEM;
	x->cfg = *cfg;
	x->cfg.mode = REP_FOLDED;
	x->cfg.annotate = true;
	x->sym = sym;
	x->h.origin = UINT64_MAX;
	err = rep_agg_create(&x->agg);
	if (err) {
		free(x);
		return err;
	}
	rep_agg_set_row_hook(x->agg, on_row, &x->h);
	*out = x;
	return 0;
}

void rep_heatmap_destroy(struct rep_heatmap *x)
{
	if (!x)
		return;
	free(x->h.t);
	rep_agg_destroy(x->agg);
	free(x);
}

int rep_heatmap_add(struct rep_heatmap *x, const struct rep_input *in, struct rep_stats *st)
{
	const struct bprof_recording *r = in->rec;
	struct rep_stats local = {0};
	uint64_t t0;

	x->nr_in++;
	if (!r)
		return 0;
	/* the finest slices of the inputs, from the earliest start */
	if (r->slices.slice_ns) {
		if (!x->h.slice_ns || r->slices.slice_ns < x->h.slice_ns)
			x->h.slice_ns = r->slices.slice_ns;
		t0 = r->slices.origin_ns;
	} else {
		x->unsliced++;
		t0 = r->meta.start_time_ns;
	}
	if (t0 < x->h.origin)
		x->h.origin = t0;
	/* one input at a time: folding rows of several would lose their times */
	return rep_agg_add_input(x->agg, &x->cfg, x->sym, in, st ? st : &local);
}

int rep_heatmap_write(struct rep_heatmap *x, const char *path, const struct rep_heatmap_opts *o)
{
	struct hm *hp = &x->h, h;
	char *json = NULL;
	size_t json_len = 0;
	FILE *mem = NULL, *f = NULL;
	int err = 0;

	if (hp->origin == UINT64_MAX)
		hp->origin = 0;
	if (!hp->slice_ns)
		hp->slice_ns = 20000000; /* FlameScope's 50 rows a second */
	/* a column is a second: slices that do not divide one are drawn as
	 * the largest that do */
	if (hp->slice_ns < 1000000000ULL)
		while (1000000000ULL % hp->slice_ns)
			hp->slice_ns++;
	/* the rows' times as slots */
	hp->max_slot = 0;
	for (size_t i = 0; i < hp->nr; i++) {
		uint64_t t = hp->t[i].slot;
		uint64_t slot = t > hp->origin ? (t - hp->origin) / hp->slice_ns : 0;

		hp->t[i].slot = slot;
		if (slot > hp->max_slot)
			hp->max_slot = slot;
	}
	h = *hp;
	hp->nr = 0; /* written once: the times are gone */
	/* the page draws every slot: a span of years (a hostile file, or
	 * recordings far apart) would be an unusable page */
	if (h.max_slot >= 100000000ULL) {
		err = -EFBIG;
		goto out;
	}
	/* one triple per (slot, stack) */
	compact(&h);
	mem = open_memstream(&json, &json_len);
	if (!mem) {
		err = -errno;
		goto out;
	}
	err = write_data(mem, x->agg, &h, x->nr_in, x->unsliced, o);
	if (fclose(mem) != 0 && !err)
		err = -ENOMEM;
	mem = NULL;
	if (err)
		goto out;

	f = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
	if (!f) {
		err = -errno;
		goto out;
	}
	const char *page = (const char *)rep_heatmap_page, *at = strstr(page, "@DATA@");

	if (!at) {
		err = -EINVAL;
		goto out;
	}
	fwrite(page, 1, (size_t)(at - page), f);
	put_json_escaped(f, json, json_len);
	fputs(at + 6, f);
	fflush(f);
	if (ferror(f))
		err = -(errno ? errno : EIO);
out:
	if (f && f != stdout && fclose(f) != 0 && !err)
		err = -errno;
	free(json);
	return err;
}

int rep_heatmap_html(const char *path, const struct rep_config *cfg, struct bsym_ctx *sym,
		     const struct rep_input *in, size_t nr_in, const struct rep_heatmap_opts *o,
		     struct rep_stats *st)
{
	struct rep_heatmap *x = NULL;
	int err = rep_heatmap_create(&x, cfg, sym);

	for (size_t i = 0; i < nr_in && !err; i++)
		err = rep_heatmap_add(x, &in[i], st);
	if (!err)
		err = rep_heatmap_write(x, path, o);
	rep_heatmap_destroy(x);
	return err;
}
