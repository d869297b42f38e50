/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: libsym's CPython location table decoder
 * (bsym_python_line) on hostile tables, as a .bprof's PYTHON section may
 * carry them.  Input: 4 bytes of first line, 4 of byte offset (signed),
 * then the table.  Invariants: it returns, in time linear in the table;
 * 0 comes with a line of -1 or one reachable from the first line; an
 * offset the table covers decodes the same every time; a negative offset
 * is the first line.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bsym.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int32_t first, off, line = 0, again = 0;
	int rc;

	if (size < 8)
		return 0;
	memcpy(&first, data, 4);
	memcpy(&off, data + 4, 4);
	rc = bsym_python_line(data + 8, size - 8, first, off, &line);
	if (rc != 0 && rc != -1)
		abort();
	if (off < 0 && (rc || line != first))
		abort();
	if (rc == 0 && bsym_python_line(data + 8, size - 8, first, off, &again) == 0 && again != line)
		abort();
	if (rc != 0 && line != -1)
		abort(); /* a failure leaves no line behind */
	return 0;
}
