/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target for the whole report path, as prof-report runs it:
 *   bytes -> bprof_read_buffer (small decompression cap) -> rep_input_adopt
 *   (bsym: no debuginfod, no /usr/lib/debug, a debug dir that does not
 *   exist; recorded paths opened under "/") -> rep_agg_add_input in several
 *   configurations (multi-line and folded; -a, -d, -U, -K, --addresses, a
 *   pid and a comm filter) -> rep_print, rep_print_diff and rep_print_info
 *   into memory streams, whose text must satisfy fuzz_report_common.h.
 *
 * Built twice: fuzz_report takes whole files (seeds: real recordings and
 * the golden valid files); fuzz_report_content (FUZZ_REPORT_CONTENT) takes
 * the decompressed content and frames it itself, since random bytes rarely
 * survive the zstd checksum (as fuzz_read_content does).  There the first
 * byte picks the minor version.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "bprof.h"
#include "report.h"
#include "fuzz_report_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#ifdef FUZZ_REPORT_CONTENT
/* The file around content bytes (SPEC.md sections 3-5). */
static uint8_t *frame(const uint8_t *data, size_t size, size_t *out_len)
{
	static const uint8_t magic[8] = { 0x89, 'B', 'P', 'R', 'O', 'F', '\r', '\n' };
	uint64_t csize = size - 1;
	size_t bound = ZSTD_compressBound(csize) + 24, n;
	uint8_t *file = malloc(bound);
	ZSTD_CCtx *cc;

	if (!file)
		abort();
	memcpy(file, magic, 8);
	file[8] = 1;
	file[9] = 0;
	file[10] = data[0] & 1;
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
	*out_len = 24 + n;
	return file;
}
#endif

static void run_configs(struct bsym_ctx *sym, const struct rep_input *in)
{
	static uint32_t pids[] = { 0, 1, 100, 4242 };
	const struct rep_config cfgs[] = {
		{ .mode = REP_MULTILINE },
		{ .mode = REP_FOLDED },
		{ .mode = REP_FOLDED, .annotate = true, .delimited = true },
		{ .mode = REP_MULTILINE, .annotate = true, .delimited = true, .addresses = true },
		{ .mode = REP_FOLDED, .user_only = true, .addresses = true },
		{ .mode = REP_FOLDED, .kernel_only = true, .annotate = true },
		{ .mode = REP_FOLDED, .pids = pids, .nr_pids = 4, .comm = "worker" },
		{ .mode = REP_FOLDED, .threads = true, .annotate = true },
		{ .mode = REP_MULTILINE, .threads = true },
	};
	struct rep_agg *agg[sizeof(cfgs) / sizeof(cfgs[0])] = { 0 };
	struct fz_out o;

	for (size_t i = 0; i < sizeof(cfgs) / sizeof(cfgs[0]); i++) {
		struct rep_stats st = { 0 };

		if (rep_agg_create(&agg[i]) != 0)
			abort();
		if (rep_agg_add_input(agg[i], &cfgs[i], sym, in, &st) != 0)
			continue; /* only -ENOMEM is possible; the caps keep us far from it */
		if (rep_print(fz_open(&o), agg[i], &cfgs[i]) != 0)
			abort();
		fz_close(&o);
		if (cfgs[i].mode == REP_FOLDED)
			fz_check_folded(o.buf, o.len, 1, NULL);
		else
			fz_check_text(o.buf, o.len);
		free(o.buf);
	}
	/* --diff between two folded renderings, plain and normalized */
	for (int n = 0; n < 2; n++) {
		if (rep_print_diff(fz_open(&o), agg[1], agg[2], n) != 0)
			abort();
		fz_close(&o);
		fz_check_folded(o.buf, o.len, 2, NULL);
		free(o.buf);
	}
	for (size_t i = 0; i < sizeof(cfgs) / sizeof(cfgs[0]); i++)
		rep_agg_destroy(agg[i]);

	/* --info: runs always; its text is checked only with
	 * BPROF_FUZZ_STRICT_INFO=1, because rep_print_info() prints recorded
	 * strings raw today (tests/hardening/hostile_strings.sh holds that bug)
	 * and every seed with an odd string would stop the fuzzing there. */
	if (rep_print_info(fz_open(&o), sym, in) != 0)
		abort();
	fz_close(&o);
	if (getenv("BPROF_FUZZ_STRICT_INFO"))
		fz_check_text(o.buf, o.len);
	free(o.buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bprof_read_opts ropts = { .sz = sizeof(ropts), .max_decompressed = 8 << 20,
					 .max_window_log = 23 };
	struct bprof_recording *rec = NULL;
	struct bprof_error err;
	struct rep_input in;
	char errbuf[512];
	const uint8_t *file = data;
	size_t len = size;
	int ret;

#ifdef FUZZ_REPORT_CONTENT
	uint8_t *framed;
	if (size < 1)
		return 0;
	framed = frame(data, size, &len);
	file = framed;
#endif
	ret = bprof_read_buffer(&rec, file, len, &ropts, &err);
#ifdef FUZZ_REPORT_CONTENT
	free(framed);
#endif
	if (ret != 0) {
		if (rec || err.code >= 0 || !err.message[0])
			abort();
		return 0;
	}

	struct bsym_ctx *sym = fz_sym(0);
	errbuf[0] = 0;
	if (rep_input_adopt(&in, sym, rec, "fuzz.bprof", errbuf, sizeof(errbuf)) != 0) {
		/* the recording is freed by rep_input_adopt; a reason is given */
		if (!errbuf[0])
			abort();
		bsym_destroy(sym);
		return 0;
	}
	run_configs(sym, &in);
	rep_input_close(&in);
	bsym_destroy(sym);
	return 0;
}
