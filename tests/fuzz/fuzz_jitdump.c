/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: libsym's jitdump parser and lookup (bsym_jitdump_*) on
 * hostile bytes, as a .bprof's JIT section may carry them (SPEC.md 6.16).
 * Input: 16 bytes of time window (t0, t1), then the jitdump.  Invariants:
 * registering returns 0 or -EINVAL (never anything else, -EINVAL exactly
 * when the header is not a version 1 little-endian jitdump); lookups at
 * the addresses the input holds return 0 with a result whose frames are
 * there exactly when it is BSYM_OK, of kind JIT, with an offset below the
 * address; the same lookup twice gives the same answer.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bsym.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bsym_opts o = { .sz = sizeof(o), .flags = BSYM_NO_DEMANGLE };
	struct bsym_ctx *ctx;
	uint64_t t0, t1;
	uint32_t id;
	int rc;

	if (size < 16)
		return 0;
	memcpy(&t0, data, 8);
	memcpy(&t1, data + 8, 8);
	data += 16;
	size -= 16;
	if (bsym_create(&ctx, &o))
		return 0;
	rc = bsym_jitdump_register(ctx, data, size, &id);
	if (rc != 0 && rc != -EINVAL)
		abort();
	if (rc == 0) {
		/* every 8-byte value of the input is a plausible address */
		for (size_t i = 0; i + 8 <= size && i < 1024; i += 4) {
			uint64_t a;
			const struct bsym_result *r, *r2;

			memcpy(&a, data + i, 8);
			for (int d = 0; d < 2; d++, a += 3) {
				if (bsym_symbolize_jitdump(ctx, id, a, t0, t1, &r) || !r)
					abort();
				if ((r->reason == BSYM_OK) != (r->nr_frames == 1))
					abort();
				if (r->nr_frames && (r->frames[0].kind != BSYM_FRAME_JIT ||
						     r->frames[0].offset > a || !r->frames[0].name))
					abort();
				if (r->reason != BSYM_OK && r->reason != BSYM_R_JIT &&
				    r->reason != BSYM_R_JIT_AMBIGUOUS)
					abort();
				if (bsym_symbolize_jitdump(ctx, id, a, t0, t1, &r2) || r2 != r)
					abort();
			}
		}
	}
	bsym_destroy(ctx);
	return 0;
}
