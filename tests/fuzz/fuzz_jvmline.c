/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: libsym's HotSpot line number table decoder
 * (bsym_jvm_line) on hostile tables, as a .bprof's JVM section may carry
 * them.  Input: 4 bytes of bci, then the table.  Invariants: it returns 0
 * or -1, in time linear in the table; 0 comes with a line of at least 1;
 * the same input decodes the same every time; a failure leaves *line as
 * it was.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bsym.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t bci, line = 0, again = 0;
	int rc;

	if (size < 4 || size - 4 > UINT32_MAX)
		return 0;
	memcpy(&bci, data, 4);
	rc = bsym_jvm_line(data + 4, (uint32_t)(size - 4), bci, &line);
	if (rc != 0 && rc != -1)
		abort();
	if (rc == 0 && line < 1)
		abort();
	if (rc != 0 && line != 0)
		abort();
	if (bsym_jvm_line(data + 4, (uint32_t)(size - 4), bci, &again) != rc || (rc == 0 && again != line))
		abort();
	return 0;
}
