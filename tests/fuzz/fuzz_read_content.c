/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target for the section parser.  Random bytes almost never
 * survive the zstd checksum, so fuzz_read alone rarely gets past the frame;
 * here the input is the decompressed *content* (SPEC.md section 5), framed
 * properly before bprof_read_buffer() sees it.  The first input byte picks
 * the minor version (bit 0: ours or the next) to exercise the tolerant newer-minor
 * path too.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "bprof.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t magic[8] = { 0x89, 'B', 'P', 'R', 'O', 'F', '\r', '\n' };
	struct bprof_read_opts opts = { .sz = sizeof(opts), .max_decompressed = 4 << 20 };
	struct bprof_recording *rec = NULL, *again = NULL;
	struct bprof_error err;
	ZSTD_CCtx *cc;
	uint8_t *file;
	size_t bound, n, len;
	void *buf;
	uint64_t csize;

	if (size < 1)
		return 0;
	csize = size - 1;
	bound = ZSTD_compressBound(csize) + 24;
	file = malloc(bound);
	if (!file)
		return 0;
	memcpy(file, magic, 8);
	file[8] = 1;
	file[9] = 0;
	file[10] = (uint8_t)(BPROF_FORMAT_MINOR + (data[0] & 1));
	file[11] = 0;
	memset(file + 12, 0, 4);
	for (int i = 0; i < 8; i++)
		file[16 + i] = (uint8_t)(csize >> (8 * i));
	cc = ZSTD_createCCtx();
	ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, 1);
	ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 1);
	n = ZSTD_compress2(cc, file + 24, bound - 24, data + 1, csize);
	ZSTD_freeCCtx(cc);
	if (ZSTD_isError(n))
		abort();

	if (bprof_read_buffer(&rec, file, 24 + n, &opts, &err) != 0) {
		if (rec || err.code >= 0 || !err.message[0])
			abort();
		free(file);
		return 0;
	}
	free(file);
	/* What the reader accepts from a file of our minor, the writer must
	 * accept and round-trip; newer minors may carry bits it refuses. */
	if (bprof_write_buffer(rec, &buf, &len, NULL, &err) != 0) {
		if ((data[0] & 1) == 0)
			abort();
		bprof_recording_free(rec);
		return 0;
	}
	if (bprof_read_buffer(&again, buf, len, NULL, &err) != 0)
		abort();
	if (again->nr_counts != rec->nr_counts || again->nr_stacks != rec->nr_stacks ||
	    again->nr_objects != rec->nr_objects || again->nr_processes != rec->nr_processes ||
	    again->kernel.nr_ksyms != rec->kernel.nr_ksyms ||
	    /* field by field: misses is a pointer (format 1.4) */
	    again->unwind.mode != rec->unwind.mode || again->unwind.flags != rec->unwind.flags ||
	    memcmp(again->unwind.counters, rec->unwind.counters, sizeof(rec->unwind.counters)) ||
	    again->unwind.nr_misses != rec->unwind.nr_misses ||
	    (rec->unwind.nr_misses &&
	     memcmp(again->unwind.misses, rec->unwind.misses,
		    rec->unwind.nr_misses * sizeof(*rec->unwind.misses))) ||
	    memcmp(&again->slices, &rec->slices, sizeof(rec->slices)) ||
	    again->python.present != rec->python.present ||
	    again->python.nr_codes != rec->python.nr_codes ||
	    again->python.nr_procs != rec->python.nr_procs ||
	    again->nr_images != rec->nr_images || again->access.present != rec->access.present ||
	    again->access.flags != rec->access.flags || again->access.euid != rec->access.euid ||
	    again->access.capabilities != rec->access.capabilities ||
	    memcmp(again->access.counters, rec->access.counters, sizeof(rec->access.counters)))
		abort();
	/* (the unwind struct holds a pointer: compared field by field) */
	for (uint64_t i = 0; i < rec->nr_counts; i++)
		if (again->counts[i].slice != rec->counts[i].slice)
			abort();
	free(buf);
	bprof_recording_free(again);
	bprof_recording_free(rec);
	return 0;
}
