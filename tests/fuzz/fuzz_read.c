/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: bprof_read_buffer() on arbitrary bytes.  Limits are
 * small so that a claimed size can never make an input slow or big; any
 * recording that is accepted is written again and must read back.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "bprof.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bprof_read_opts opts = {
		.sz = sizeof(opts),
		.max_decompressed = 4 << 20,
		.max_window_log = 20,
	};
	struct bprof_recording *rec = NULL, *again = NULL;
	struct bprof_error err;
	void *buf = NULL;
	size_t len = 0;

	if (bprof_read_buffer(&rec, data, size, &opts, &err) != 0) {
		if (rec || err.code >= 0 || !err.message[0])
			abort(); /* failure must clear *out and say why */
		return 0;
	}
	/* What the reader accepts from a minor-0 file, the writer (minor 0)
	 * must accept and round-trip; newer minors may carry bits it refuses. */
	if (bprof_write_buffer(rec, &buf, &len, NULL, &err) != 0) {
		if (size >= 12 && data[10] == 0 && data[11] == 0)
			abort();
		bprof_recording_free(rec);
		return 0;
	}
	if (bprof_read_buffer(&again, buf, len, NULL, &err) != 0)
		abort();
	if (again->nr_counts != rec->nr_counts || again->nr_stacks != rec->nr_stacks ||
	    again->nr_objects != rec->nr_objects || again->nr_processes != rec->nr_processes ||
	    again->kernel.nr_ksyms != rec->kernel.nr_ksyms)
		abort();
	free(buf);
	bprof_recording_free(again);
	bprof_recording_free(rec);
	return 0;
}
