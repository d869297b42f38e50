/* SPDX-License-Identifier: Apache-2.0 */
/*
 * jvm.c - HotSpot's line number tables decoded: the compressed stream a
 * ConstMethod keeps after its bytecodes, copied raw by the recorder
 * (SPEC.md 6.18), read here as hostile bytes: every read is bounded by
 * the table's length and every value by what a class file can hold.
 */
#include <stdint.h>

#include "bsym.h"

/* HotSpot's UNSIGNED5 (CompressedReadStream::read_int): bytes below 192
 * end a number, each a 6-bit step more significant; at most 5 bytes. */
static int jvm_read_u5(const uint8_t *b, uint32_t len, uint32_t *pos, uint32_t *out)
{
	uint64_t sum = 0;
	unsigned shift = 0;

	for (int i = 0; i < 5; i++) {
		uint32_t v;

		if (*pos >= len)
			return -1;
		v = b[(*pos)++];
		sum += (uint64_t)v << shift;
		if (v < 192 || i == 4) {
			*out = (uint32_t)sum;
			return 0;
		}
		shift += 6;
	}
	return -1;
}

int bsym_jvm_line(const uint8_t *lines, uint32_t len, uint32_t bci, uint32_t *line)
{
	int64_t cur_bci = 0, cur_line = 0, best = -1, best_bci = -1;
	uint32_t pos = 0;

	/* CompressedLineNumberReadStream: (bci delta << 3 | line delta) in a
	 * byte, or 0xff and two signed UNSIGNED5 deltas; 0 ends it.  The
	 * line of bci is the entry with the greatest start at or below it
	 * (the table is in bytecode order but for loops: keep the best). */
	while (lines && pos < len) {
		uint32_t b = lines[pos++], d1, d2;

		if (b == 0)
			break;
		if (b == 0xff) {
			if (jvm_read_u5(lines, len, &pos, &d1) || jvm_read_u5(lines, len, &pos, &d2))
				return -1;
			cur_bci += (int32_t)((d1 >> 1) ^ -(d1 & 1));
			cur_line += (int32_t)((d2 >> 1) ^ -(d2 & 1));
		} else {
			cur_bci += b >> 3;
			cur_line += b & 7;
		}
		if (cur_bci < 0 || cur_bci > 65535 || cur_line < 0 || cur_line > INT32_MAX)
			return -1;
		if (cur_bci <= bci && cur_bci >= best_bci) {
			best_bci = cur_bci;
			best = cur_line;
		}
	}
	if (best <= 0)
		return -1;
	*line = (uint32_t)best;
	return 0;
}

