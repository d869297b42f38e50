/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_perfmap.c - libFuzzer target: perf map text is hostile input.
 * Built only with -DBPROF_FUZZ=ON (clang). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "bsym.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bsym_opts o = { .sz = sizeof(o), .flags = BSYM_NO_SYSTEM_DEBUG | BSYM_NO_DEBUGINFOD };
	struct bsym_ctx *ctx;
	if (bsym_create(&ctx, &o))
		return 0;
	uint32_t id;
	if (bsym_perfmap_register(ctx, (const char *)data, size, &id) == 0) {
		uint64_t a = 0;
		for (size_t i = 0; i < 64; i++) {
			const struct bsym_result *r;
			if (size >= 8)
				memcpy(&a, data + (i * 8) % (size - 7), 8);
			else
				a = a * 31 + i;
			bsym_symbolize_perfmap(ctx, id, a, &r);
		}
	}
	bsym_destroy(ctx);
	return 0;
}
