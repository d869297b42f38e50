/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pyoff.c - CPython's layouts (pyoff.h).  The 3.11 and 3.12 tables are
 * offsetof() of the internal structures on x86-64, from the headers of
 * Debian's 3.11.2 and of 3.11.7 and 3.12.1 built from source (the same
 * within a minor version: its internal layout is part of what a minor
 * release freezes).  tests/record/test_pyoff.c compiles offsetof() against
 * every version's headers it finds and compares.
 */
#include <errno.h>
#include <string.h>

#include "pyoff.h"

static const struct pyoff py311 = {
	.walk = {
		.runtime_interp = 48,   /* interpreters.main */
		.interp_threads = 16,
		.ts_next = 8,
		.ts_native_tid = 160,
		.ts_cframe = 56,
		.cframe_current = 8,
		.ts_current_frame = PYTHON_OFF_NONE,
		.fr_previous = 48,
		.fr_code = 32,
		.fr_instr = 56,         /* prev_instr */
		.fr_owner = 69,
		.fr_is_entry = 68,
		.co_size = 16,
		.co_firstlineno = 72,
		.co_filename = 112,
		.co_qualname = 128,
		.co_linetable = 136,
		.co_adaptive = 184,
		.entry = PYTHON_ENTRY_IS_ENTRY,
	},
	.uni_state = 32, .uni_length = 16, .uni_ascii_data = 48, .uni_compact_data = 72,
	.bytes_size = 16, .bytes_sval = 32,
};

static const struct pyoff py312 = {
	.walk = {
		.runtime_interp = 48,
		.interp_threads = 72,
		.ts_next = 8,
		.ts_native_tid = 144,
		.ts_cframe = 56,
		.cframe_current = 0,
		.ts_current_frame = PYTHON_OFF_NONE,
		.fr_previous = 8,
		.fr_code = 0,
		.fr_instr = 56,
		.fr_owner = 70,
		.fr_is_entry = PYTHON_OFF_NONE,
		.co_size = 16,
		.co_firstlineno = 68,
		.co_filename = 112,
		.co_qualname = 128,
		.co_linetable = 136,
		.co_adaptive = 192,
		.entry = PYTHON_ENTRY_CSTACK,
	},
	.uni_state = 32, .uni_length = 16, .uni_ascii_data = 40, .uni_compact_data = 56,
	.bytes_size = 16, .bytes_sval = 32,
};

int pyoff_table(uint32_t version, struct pyoff *out)
{
	switch (PYOFF_MINOR(version)) {
	case 0x030b:
		*out = py311;
		return 0;
	case 0x030c:
		*out = py312;
		return 0;
	}
	return -ENOENT;
}

static uint64_t le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* Where 3.13's _Py_DebugOffsets keeps each field (its layout is fixed
 * within 3.13; 3.14 changed it, so only 3.13 is read this way). */
enum {
	DO_VERSION = 8, DO_FREE_THREADED = 16,
	DO_INTERPRETERS_HEAD = 40, DO_THREADS_HEAD = 72,
	DO_TS_NEXT = 168, DO_TS_CURRENT_FRAME = 184, DO_TS_NATIVE_TID = 200,
	DO_FR_PREVIOUS = 232, DO_FR_EXECUTABLE = 240, DO_FR_INSTR_PTR = 248, DO_FR_OWNER = 264,
	DO_CO_FILENAME = 280, DO_CO_QUALNAME = 296, DO_CO_LINETABLE = 304,
	DO_CO_FIRSTLINENO = 312, DO_CO_ADAPTIVE = 344,
	DO_BYTES_SIZE = 520, DO_BYTES_SVAL = 528,
	DO_UNI_STATE = 544, DO_UNI_LENGTH = 552, DO_UNI_ASCII_SIZE = 560,
};

int pyoff_debug(const uint8_t *b, size_t len, uint32_t version, struct pyoff *out,
		const char **why)
{
	struct pyoff o = { 0 };
	uint64_t v[] = {
		le64(b + DO_INTERPRETERS_HEAD), le64(b + DO_THREADS_HEAD), le64(b + DO_TS_NEXT),
		le64(b + DO_TS_CURRENT_FRAME), le64(b + DO_TS_NATIVE_TID),
		le64(b + DO_FR_PREVIOUS), le64(b + DO_FR_EXECUTABLE), le64(b + DO_FR_INSTR_PTR),
		le64(b + DO_FR_OWNER), le64(b + DO_CO_FILENAME), le64(b + DO_CO_QUALNAME),
		le64(b + DO_CO_LINETABLE), le64(b + DO_CO_FIRSTLINENO), le64(b + DO_CO_ADAPTIVE),
		le64(b + DO_BYTES_SIZE), le64(b + DO_BYTES_SVAL), le64(b + DO_UNI_STATE),
		le64(b + DO_UNI_LENGTH), le64(b + DO_UNI_ASCII_SIZE),
	};

	*why = NULL;
	if (PYOFF_MINOR(version) != 0x030d)
		return -ENOENT;
	if (len < PYOFF_DEBUG_LEN || memcmp(b, "xdebugpy", 8)) {
		*why = "no _Py_DebugOffsets cookie at _PyRuntime";
		return -EINVAL;
	}
	if ((le64(b + DO_VERSION) >> 16) != (version >> 16)) {
		*why = "_Py_DebugOffsets is of another version";
		return -EINVAL;
	}
	if (le64(b + DO_FREE_THREADED)) {
		*why = "a free-threaded build";
		return -ENOTSUP;
	}
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		if (v[i] >= PYTHON_OFF_NONE) {
			*why = "an offset out of range";
			return -EINVAL;
		}
	/* the walk reads a frame and a code object's header at once */
	if (v[5] > PYTHON_FRAME_READ - 8 || v[6] > PYTHON_FRAME_READ - 8 ||
	    v[7] > PYTHON_FRAME_READ - 8 || v[8] > PYTHON_FRAME_READ - 1 ||
	    v[9] > PYTHON_CODE_READ - 8 || v[10] > PYTHON_CODE_READ - 8 ||
	    v[11] > PYTHON_CODE_READ - 8 || v[12] > PYTHON_CODE_READ - 4) {
		*why = "offsets beyond what the walk reads";
		return -EINVAL;
	}
	o.walk.runtime_interp = (uint16_t)v[0];
	o.walk.interp_threads = (uint16_t)v[1];
	o.walk.ts_next = (uint16_t)v[2];
	o.walk.ts_current_frame = (uint16_t)v[3];
	o.walk.ts_native_tid = (uint16_t)v[4];
	o.walk.ts_cframe = PYTHON_OFF_NONE;
	o.walk.cframe_current = PYTHON_OFF_NONE;
	o.walk.fr_previous = (uint16_t)v[5];
	o.walk.fr_code = (uint16_t)v[6];
	o.walk.fr_instr = (uint16_t)v[7];
	o.walk.fr_owner = (uint16_t)v[8];
	o.walk.fr_is_entry = PYTHON_OFF_NONE;
	o.walk.co_size = 16; /* PyVarObject.ob_size: the same in every version */
	o.walk.co_filename = (uint16_t)v[9];
	o.walk.co_qualname = (uint16_t)v[10];
	o.walk.co_linetable = (uint16_t)v[11];
	o.walk.co_firstlineno = (uint16_t)v[12];
	o.walk.co_adaptive = (uint16_t)v[13];
	o.walk.entry = PYTHON_ENTRY_CSTACK;
	o.bytes_size = (uint16_t)v[14];
	o.bytes_sval = (uint16_t)v[15];
	o.uni_state = (uint16_t)v[16];
	o.uni_length = (uint16_t)v[17];
	o.uni_ascii_data = (uint16_t)v[18];
	/* PyCompactUnicodeObject: PyASCIIObject, utf8_length, utf8 */
	o.uni_compact_data = (uint16_t)(v[18] + 16);
	*out = o;
	return 0;
}
