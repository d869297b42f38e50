/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pyoff.h - where CPython keeps what the Python frame walk reads: per
 * version tables for 3.11 and 3.12 (checked against each version's
 * internal headers by tests/record/test_pyoff_*), and 3.13's own
 * _Py_DebugOffsets, which the interpreter carries at the start of
 * _PyRuntime.  Pure functions: no I/O.
 */
#ifndef BPROF_RECORD_PYOFF_H
#define BPROF_RECORD_PYOFF_H

#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

#include "python/python.h"

/* What the recorder reads besides the walk's offsets: the names. */
struct pyoff {
	struct python_offsets walk;
	uint16_t uni_state;        /* PyASCIIObject.state (kind, compact, ascii bits) */
	uint16_t uni_length;       /* PyASCIIObject.length (code points) */
	uint16_t uni_ascii_data;   /* sizeof(PyASCIIObject): a compact ASCII string's bytes */
	uint16_t uni_compact_data; /* sizeof(PyCompactUnicodeObject): other compact strings' */
	uint16_t bytes_size;       /* PyBytesObject.ob_size */
	uint16_t bytes_sval;       /* PyBytesObject.ob_sval */
};

/* Bytes of _PyRuntime that pyoff_debug() reads (3.13's _Py_DebugOffsets). */
#define PYOFF_DEBUG_LEN 584

/* The major.minor of a PY_VERSION_HEX. */
#define PYOFF_MINOR(v) (((v) >> 16) & 0xffffu)

/*
 * Offsets for version (PY_VERSION_HEX) from the tables: 0; -ENOENT for a
 * version that has none (3.13 and later: use pyoff_debug).
 */
int pyoff_table(uint32_t version, struct pyoff *out);

/*
 * Offsets from the first PYOFF_DEBUG_LEN bytes of 3.13's _PyRuntime: 0;
 * -ENOENT (not 3.13: another layout), -EINVAL (no cookie, a version that
 * is not version's, or offsets the walk's reads cannot hold: *why says),
 * -ENOTSUP (a free-threaded build).
 */
int pyoff_debug(const uint8_t *b, size_t len, uint32_t version, struct pyoff *out,
		const char **why);

#endif /* BPROF_RECORD_PYOFF_H */
