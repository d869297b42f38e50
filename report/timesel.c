// SPDX-License-Identifier: Apache-2.0
/*
 * timesel.c - --from/--to: a time range of the recordings (report.h).
 *
 * The range is applied to each recording as it is read, before anything
 * else sees it: rows outside it are dropped, so every output (text,
 * folded, diff, the exports, the heatmap) shows the same samples without
 * knowing of time.  A row is in the range when the slice its samples fell
 * in (SPEC.md 6.14) starts in it: the range is as fine as the recording's
 * slices.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "report.h"

/* "12", "1.5", "90s", "2m": seconds from the start. */
static int parse_rel(const char *s, int64_t *ns)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !isfinite(v) || v < 0)
		return -EINVAL;
	if (*end == 's')
		end++;
	else if (*end == 'm') {
		v *= 60;
		end++;
	}
	if (*end || v > 1e9)
		return -EINVAL;
	*ns = (int64_t)(v * 1e9 + 0.5);
	return 0;
}

/* ".123" after the seconds: nanoseconds; *s moves past it. */
static int parse_frac(const char **s, int64_t *ns)
{
	int64_t mult = 100000000;

	*ns = 0;
	if (**s != '.')
		return 0;
	(*s)++;
	if (!isdigit((unsigned char)**s))
		return -EINVAL;
	for (; isdigit((unsigned char)**s); (*s)++) {
		*ns += (**s - '0') * mult;
		mult /= 10;
	}
	return 0;
}

int rep_time_parse(const char *s, struct rep_time_point *p)
{
	struct tm tm = {0};
	const char *rest;
	int64_t frac;
	bool utc;
	size_t len = strlen(s);

	memset(p, 0, sizeof(*p));
	if (!len)
		return -EINVAL;
	utc = s[len - 1] == 'Z';
	if (s[0] == '@') { /* seconds since the epoch: integer and fraction
			     * apart, a double would round the nanoseconds */
		const char *q = s + 1;
		char *end;
		unsigned long long sec;

		if (!isdigit((unsigned char)*q))
			return -EINVAL;
		errno = 0;
		sec = strtoull(q, &end, 10);
		q = end;
		if (errno || sec > 100000000000ULL || parse_frac(&q, &frac) || *q)
			return -EINVAL;
		p->kind = REP_TIME_ABS;
		p->ns = (int64_t)sec * 1000000000LL + frac;
		return 0;
	}
	/* 2026-11-26T16:20:00[.5][Z] (or a space for the T) */
	rest = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	if (!rest)
		rest = strptime(s, "%Y-%m-%d %H:%M:%S", &tm);
	if (rest) {
		if (parse_frac(&rest, &frac) || (*rest && !(rest[0] == 'Z' && !rest[1])))
			return -EINVAL;
		tm.tm_isdst = -1;
		time_t t = utc ? timegm(&tm) : mktime(&tm);
		if (t == (time_t)-1 || t < 0)
			return -EINVAL;
		p->kind = REP_TIME_ABS;
		p->ns = (int64_t)t * 1000000000LL + frac;
		return 0;
	}
	/* 16:20[:05][.5][Z]: a time of the recording's day */
	memset(&tm, 0, sizeof(tm));
	rest = strptime(s, "%H:%M:%S", &tm);
	if (!rest) {
		memset(&tm, 0, sizeof(tm));
		rest = strptime(s, "%H:%M", &tm);
		if (rest && *rest == '.')
			return -EINVAL;
	}
	if (rest && strchr(s, ':')) {
		if (parse_frac(&rest, &frac) || (*rest && !(rest[0] == 'Z' && !rest[1])))
			return -EINVAL;
		p->kind = utc ? REP_TIME_DAY_UTC : REP_TIME_DAY_LOCAL;
		p->ns = ((int64_t)tm.tm_hour * 3600 + tm.tm_min * 60 + tm.tm_sec) * 1000000000LL + frac;
		return 0;
	}
	if (parse_rel(s, &p->ns))
		return -EINVAL;
	p->kind = REP_TIME_REL;
	return 0;
}

/* Point p as CLOCK_REALTIME ns, given the start of the set's first
 * recording. */
static uint64_t resolve(const struct rep_time_point *p, uint64_t base)
{
	if (p->kind == REP_TIME_ABS)
		return (uint64_t)p->ns;
	if (p->kind == REP_TIME_REL)
		return base + (uint64_t)p->ns;
	/* a time of day: on the day of base (in that zone), or the next day
	 * when that is more than 12 hours before base (a recording across
	 * midnight) */
	time_t bt = (time_t)(base / 1000000000ULL);
	struct tm tm;

	if (p->kind == REP_TIME_DAY_UTC)
		gmtime_r(&bt, &tm);
	else
		localtime_r(&bt, &tm);
	tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
	tm.tm_isdst = -1;
	time_t day = p->kind == REP_TIME_DAY_UTC ? timegm(&tm) : mktime(&tm);
	uint64_t t = (uint64_t)day * 1000000000ULL + (uint64_t)p->ns;

	if (t + 43200ULL * 1000000000ULL < base)
		t += 86400ULL * 1000000000ULL;
	return t;
}

void rep_timesel_new_set(struct rep_timesel *t)
{
	t->base_set = false;
}

int rep_timesel_apply(struct rep_timesel *t, struct bprof_recording *rec, bool *whole)
{
	*whole = false;
	if (!t || !t->active)
		return 0;
	if (!t->base_set) {
		t->base = rec->meta.start_time_ns;
		t->base_set = true;
		t->lo = t->has_from ? resolve(&t->from, t->base) : 0;
		t->hi = t->has_to ? resolve(&t->to, t->base) : UINT64_MAX;
	}
	uint64_t lo = t->lo, hi = t->hi, n = 0;
	uint64_t start = rec->meta.start_time_ns, end = start + rec->meta.duration_ns;

	if (!rec->slices.slice_ns) {
		/* no slices: the file is taken whole or not at all */
		if (end <= lo || start >= hi)
			rec->nr_counts = 0;
		else if (start < lo || end > hi)
			*whole = true;
		return 0;
	}
	for (uint64_t i = 0; i < rec->nr_counts; i++) {
		const struct bprof_count *c = &rec->counts[i];
		uint64_t at = rec->slices.origin_ns + (uint64_t)c->slice * rec->slices.slice_ns;

		if (at >= lo && at < hi)
			rec->counts[n++] = *c;
	}
	rec->nr_counts = n;
	/* what the exports say of the recording's span: the range's part */
	if (start < lo)
		start = lo < end ? lo : end;
	if (end > hi)
		end = hi > start ? hi : start;
	rec->meta.start_time_ns = start;
	rec->meta.duration_ns = end - start;
	return 0;
}
