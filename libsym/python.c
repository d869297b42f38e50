/* SPDX-License-Identifier: Apache-2.0 */
/*
 * python.c - CPython 3.11+ location tables (co_linetable), decoded
 * offline: a Python frame's line, as libsym gives a native frame's.  The
 * format is CPython's Objects/locations.md; a table comes from a hostile
 * file, so every read is bounded by its length and an entry that does not
 * start as one ends the decoding with an error, never a guess.
 */
#include <stddef.h>
#include <stdint.h>

#include "bsym.h"

/* The kinds of entry (the 4 bits after the entry's start bit). */
enum {
	LOC_SHORT_MAX = 9,   /* 0..9: same line, a column byte */
	LOC_ONE_LINE0 = 10,  /* 10..12: line + 0..2, two column bytes */
	LOC_ONE_LINE2 = 12,
	LOC_NO_COLUMNS = 13, /* a signed line delta */
	LOC_LONG = 14,       /* a signed line delta, end line, columns */
	LOC_NONE = 15,       /* no location */
};

/* A varint of 6-bit chunks, bit 6 set while more follow. */
static int varint(const uint8_t *t, size_t len, size_t *pos, uint64_t *out)
{
	uint64_t v = 0;
	unsigned shift = 0;

	for (;;) {
		uint8_t b;

		if (*pos >= len || shift > 60)
			return -1;
		b = t[(*pos)++];
		if (b & 0x80)
			return -1; /* the next entry's start: this one is cut short */
		v |= (uint64_t)(b & 0x3f) << shift;
		shift += 6;
		if (!(b & 0x40))
			break;
	}
	*out = v;
	return 0;
}

static int svarint(const uint8_t *t, size_t len, size_t *pos, int64_t *out)
{
	uint64_t u;

	if (varint(t, len, pos, &u))
		return -1;
	*out = u & 1 ? -(int64_t)(u >> 1) : (int64_t)(u >> 1);
	return 0;
}

static int skip(size_t len, size_t *pos, size_t n)
{
	if (len - *pos < n)
		return -1;
	*pos += n;
	return 0;
}

int bsym_python_line(const uint8_t *table, size_t len, int32_t firstlineno, int64_t offset,
		     int32_t *line)
{
	int64_t cur = firstlineno, addr = 0;
	size_t pos = 0;

	*line = -1;
	if (offset < 0) {
		/* before the first instruction (a frame just pushed): the
		 * def line, as CPython's PyCode_Addr2Line says */
		*line = firstlineno;
		return 0;
	}
	while (pos < len) {
		uint8_t first = table[pos++];
		unsigned code = (first >> 3) & 15;
		int64_t delta = 0, end;
		uint64_t ignore;

		if (!(first & 0x80))
			return -1;
		end = addr + 2 * ((first & 7) + 1);
		if (code == LOC_NONE) {
			delta = 0;
		} else if (code == LOC_LONG) {
			if (svarint(table, len, &pos, &delta) || varint(table, len, &pos, &ignore) ||
			    varint(table, len, &pos, &ignore) || varint(table, len, &pos, &ignore))
				return -1;
		} else if (code == LOC_NO_COLUMNS) {
			if (svarint(table, len, &pos, &delta))
				return -1;
		} else if (code >= LOC_ONE_LINE0 && code <= LOC_ONE_LINE2) {
			delta = code - LOC_ONE_LINE0;
			if (skip(len, &pos, 2))
				return -1;
		} else if (skip(len, &pos, 1)) {
			return -1;
		}
		if (delta > INT32_MAX || delta < -(int64_t)INT32_MAX)
			return -1;
		cur += delta;
		if (cur > INT32_MAX || cur < INT32_MIN)
			return -1;
		if (offset < end) {
			/* -1: an instruction without a line (CPython's too) */
			*line = code == LOC_NONE ? -1 : (int32_t)cur;
			return 0;
		}
		addr = end;
	}
	return -1; /* past the table's end */
}
