// SPDX-License-Identifier: Apache-2.0
/*
 * share.c - which count rows the report takes (rep_row_selected): -p,
 * --comm, --on-cpu, --off-cpu and --min-share=PCT, the threads (the rows
 * of one process and comm, what every output's first frame names) whose
 * samples are below PCT % of all the samples the other filters select
 * left out.  A wall-clock recording (prof-record --wall) of a server counts
 * every idle worker for its whole life; this keeps the ones that matter.
 * Shares are taken over every input file together (both sides of a
 * --diff), in a first pass over the files' rows before the report reads
 * them again, so every output leaves out the same threads.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

struct share_ent {
	uint32_t pid;
	char comm[BPROF_COMM_LEN];
	uint64_t n;
};

struct rep_share {
	struct share_ent *v; /* after rep_share_select: the threads left out, sorted */
	size_t nr, cap;
	size_t threads;      /* threads seen */
	uint64_t total, dropped_samples;
};

static int cmp_ent(const void *x, const void *y)
{
	const struct share_ent *a = x, *b = y;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return strncmp(a->comm, b->comm, BPROF_COMM_LEN);
}

/* Sort and merge equal threads, adding their samples. */
static void merge(struct rep_share *s)
{
	size_t o = 0;

	qsort(s->v, s->nr, sizeof(*s->v), cmp_ent);
	for (size_t i = 0; i < s->nr; i++) {
		if (o && !cmp_ent(&s->v[o - 1], &s->v[i]))
			s->v[o - 1].n += s->v[i].n;
		else
			s->v[o++] = s->v[i];
	}
	s->nr = o;
}

static int add_row(struct rep_share *s, const struct bprof_count *c)
{
	/* full: merge the repeats first (bounded memory: one entry per
	 * thread), grow only if they were mostly distinct */
	if (s->nr == s->cap && s->cap)
		merge(s);
	if (!s->cap || s->nr * 2 > s->cap) {
		size_t nc = s->cap ? s->cap * 2 : 256;
		struct share_ent *nv = realloc(s->v, nc * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		s->v = nv;
		s->cap = nc;
	}
	s->v[s->nr].pid = c->pid;
	memcpy(s->v[s->nr].comm, c->comm, BPROF_COMM_LEN);
	s->v[s->nr].comm[BPROF_COMM_LEN - 1] = 0;
	s->v[s->nr].n = c->count;
	s->nr++;
	s->total += c->count;
	return 0;
}

int rep_share_select(struct rep_share **out, const struct rep_config *cfg, char *const *files,
		     size_t nr_files, double pct, struct rep_timesel *time, size_t second_set,
		     char *err, size_t errlen)
{
	struct rep_share *s = calloc(1, sizeof(*s));
	size_t o = 0;
	int ret = 0;

	*out = NULL;
	if (!s)
		return -ENOMEM;
	for (size_t f = 0; f < nr_files && !ret; f++) {
		struct bprof_recording *rec = NULL;
		struct bprof_error berr;

		ret = bprof_read_file(&rec, files[f], NULL, &berr);
		if (ret) {
			snprintf(err, errlen, "%s: %s", files[f], berr.message);
			break;
		}
		/* --from/--to as the report applies them (main.c) */
		if (time && time->active) {
			bool whole;

			if (f == 0 || (second_set && f == second_set))
				rep_timesel_new_set(time);
			rep_timesel_apply(time, rec, &whole);
		}
		for (uint64_t i = 0; i < rec->nr_counts && !ret; i++)
			if (rep_row_selected(cfg, &rec->counts[i]))
				ret = add_row(s, &rec->counts[i]);
		bprof_recording_free(rec);
		if (ret)
			snprintf(err, errlen, "%s", strerror(-ret));
	}
	if (ret) {
		rep_share_free(s);
		return ret;
	}
	merge(s);
	s->threads = s->nr;
	/* keep the ones below the share: what rep_share_dropped looks up */
	for (size_t i = 0; i < s->nr; i++)
		if ((double)s->v[i].n * 100.0 < pct * (double)s->total) {
			s->dropped_samples += s->v[i].n;
			s->v[o++] = s->v[i];
		}
	s->nr = o;
	*out = s;
	return 0;
}

bool rep_row_selected(const struct rep_config *cfg, const struct bprof_count *c)
{
	if (cfg->cpu_sel == REP_SEL_ON_CPU && c->state != BPROF_STATE_ON_CPU)
		return false;
	if (cfg->cpu_sel == REP_SEL_OFF_CPU && c->state == BPROF_STATE_ON_CPU)
		return false;
	return rep_pid_selected(cfg, c->pid) &&
	       !(cfg->comm && strncmp(cfg->comm, c->comm, BPROF_COMM_LEN) != 0) &&
	       !(cfg->share && rep_share_dropped(cfg->share, c));
}

bool rep_share_dropped(const struct rep_share *s, const struct bprof_count *c)
{
	struct share_ent k = { .pid = c->pid };

	if (!s || !s->nr)
		return false;
	memcpy(k.comm, c->comm, BPROF_COMM_LEN);
	k.comm[BPROF_COMM_LEN - 1] = 0;
	return bsearch(&k, s->v, s->nr, sizeof(*s->v), cmp_ent) != NULL;
}

void rep_share_counts(const struct rep_share *s, size_t *threads, size_t *dropped,
		      uint64_t *samples, uint64_t *dropped_samples)
{
	*threads = s ? s->threads : 0;
	*dropped = s ? s->nr : 0;
	*samples = s ? s->total : 0;
	*dropped_samples = s ? s->dropped_samples : 0;
}

void rep_share_free(struct rep_share *s)
{
	if (s) {
		free(s->v);
		free(s);
	}
}
