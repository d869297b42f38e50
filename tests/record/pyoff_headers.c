/* SPDX-License-Identifier: Apache-2.0 */
/*
 * record/python/pyoff.c's offsets against offsetof() in the internal
 * headers of the CPython this file is compiled with (Py_BUILD_CORE; the
 * build compiles it once per version it finds: Debian's python3.11-dev,
 * the pyenv versions).  For 3.11 and 3.12 the tables must equal the
 * headers; for 3.13 a _Py_DebugOffsets filled the way CPython fills its
 * own (from offsetof) must read back, through pyoff_debug(), as the
 * headers' offsets.
 */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <internal/pycore_code.h>
#include <internal/pycore_frame.h>
#include <internal/pycore_interp.h>
#include <internal/pycore_runtime.h>
#include <stddef.h>
#include <string.h>

#include <criterion/criterion.h>

#include "pyoff.h"

#define EQ(got, want) cr_expect_eq((got), (want), "%s: %u, headers say %zu", #got, \
				   (unsigned)(got), (size_t)(want))

Test(pyoff, matches_the_headers)
{
	struct pyoff o;
	int rc;

#if PY_VERSION_HEX < 0x030d0000
	cr_assert_eq(pyoff_table(PY_VERSION_HEX, &o), 0, "no table for %s", PY_VERSION);
	EQ(o.walk.runtime_interp, offsetof(_PyRuntimeState, interpreters.main));
	EQ(o.walk.ts_cframe, offsetof(PyThreadState, cframe));
	EQ(o.walk.cframe_current, offsetof(_PyCFrame, current_frame));
	EQ(o.walk.fr_code, offsetof(_PyInterpreterFrame, f_code));
	EQ(o.walk.fr_instr, offsetof(_PyInterpreterFrame, prev_instr));
#if PY_VERSION_HEX < 0x030c0000
	EQ(o.walk.fr_is_entry, offsetof(_PyInterpreterFrame, is_entry));
	EQ(o.walk.entry, PYTHON_ENTRY_IS_ENTRY);
#else
	EQ(o.walk.fr_is_entry, PYTHON_OFF_NONE);
	EQ(o.walk.entry, PYTHON_ENTRY_CSTACK);
	EQ(PYTHON_OWNED_BY_CSTACK, FRAME_OWNED_BY_CSTACK);
#endif
	EQ(o.uni_ascii_data, sizeof(PyASCIIObject));
	EQ(o.uni_compact_data, sizeof(PyCompactUnicodeObject));
	rc = 0;
#else
	/* 3.13: the interpreter's own table, as _Py_DebugOffsets_INIT fills it */
	_Py_DebugOffsets d;
	const char *why;

	memset(&d, 0, sizeof(d));
	memcpy(d.cookie, "xdebugpy", 8);
	d.version = PY_VERSION_HEX;
	d.runtime_state.interpreters_head = offsetof(_PyRuntimeState, interpreters.head);
	d.interpreter_state.threads_head = offsetof(PyInterpreterState, threads.head);
	d.thread_state.next = offsetof(PyThreadState, next);
	d.thread_state.current_frame = offsetof(PyThreadState, current_frame);
	d.thread_state.native_thread_id = offsetof(PyThreadState, native_thread_id);
	d.interpreter_frame.previous = offsetof(_PyInterpreterFrame, previous);
	d.interpreter_frame.executable = offsetof(_PyInterpreterFrame, f_executable);
	d.interpreter_frame.instr_ptr = offsetof(_PyInterpreterFrame, instr_ptr);
	d.interpreter_frame.owner = offsetof(_PyInterpreterFrame, owner);
	d.code_object.filename = offsetof(PyCodeObject, co_filename);
	d.code_object.qualname = offsetof(PyCodeObject, co_qualname);
	d.code_object.linetable = offsetof(PyCodeObject, co_linetable);
	d.code_object.firstlineno = offsetof(PyCodeObject, co_firstlineno);
	d.code_object.co_code_adaptive = offsetof(PyCodeObject, co_code_adaptive);
	d.bytes_object.ob_size = offsetof(PyBytesObject, ob_base.ob_size);
	d.bytes_object.ob_sval = offsetof(PyBytesObject, ob_sval);
	d.unicode_object.state = offsetof(PyASCIIObject, state);
	d.unicode_object.length = offsetof(PyASCIIObject, length);
	d.unicode_object.asciiobject_size = sizeof(PyASCIIObject);
	cr_assert_eq(sizeof(d), PYOFF_DEBUG_LEN);
	rc = pyoff_debug((const uint8_t *)&d, sizeof(d), PY_VERSION_HEX, &o, &why);
	cr_assert_eq(rc, 0, "%s", why ? why : "?");
	EQ(o.walk.runtime_interp, offsetof(_PyRuntimeState, interpreters.head));
	EQ(o.walk.ts_current_frame, offsetof(PyThreadState, current_frame));
	EQ(o.walk.fr_code, offsetof(_PyInterpreterFrame, f_executable));
	EQ(o.walk.fr_instr, offsetof(_PyInterpreterFrame, instr_ptr));
	EQ(o.uni_compact_data, sizeof(PyCompactUnicodeObject));
	EQ(PYTHON_OWNED_BY_CSTACK, FRAME_OWNED_BY_CSTACK);
	/* a free-threaded build and a foreign version are refused */
	d.free_threaded = 1;
	cr_expect_eq(pyoff_debug((const uint8_t *)&d, sizeof(d), PY_VERSION_HEX, &o, &why), -ENOTSUP);
	d.free_threaded = 0;
	cr_expect_eq(pyoff_debug((const uint8_t *)&d, sizeof(d), 0x030c01f0, &o, &why), -ENOENT);
	d.cookie[0] = 'X';
	cr_expect_eq(pyoff_debug((const uint8_t *)&d, sizeof(d), PY_VERSION_HEX, &o, &why), -EINVAL);
#endif
	(void)rc;
	EQ(o.walk.interp_threads, offsetof(PyInterpreterState, threads.head));
	EQ(o.walk.ts_next, offsetof(PyThreadState, next));
	EQ(o.walk.ts_native_tid, offsetof(PyThreadState, native_thread_id));
	EQ(o.walk.fr_previous, offsetof(_PyInterpreterFrame, previous));
	EQ(o.walk.fr_owner, offsetof(_PyInterpreterFrame, owner));
	EQ(o.walk.co_size, offsetof(PyVarObject, ob_size));
	EQ(o.walk.co_firstlineno, offsetof(PyCodeObject, co_firstlineno));
	EQ(o.walk.co_filename, offsetof(PyCodeObject, co_filename));
	EQ(o.walk.co_qualname, offsetof(PyCodeObject, co_qualname));
	EQ(o.walk.co_linetable, offsetof(PyCodeObject, co_linetable));
	EQ(o.walk.co_adaptive, offsetof(PyCodeObject, co_code_adaptive));
	EQ(o.uni_state, offsetof(PyASCIIObject, state));
	EQ(o.uni_length, offsetof(PyASCIIObject, length));
	EQ(o.bytes_size, offsetof(PyVarObject, ob_size));
	EQ(o.bytes_sval, offsetof(PyBytesObject, ob_sval));
	/* what the walk reads at once holds every field it takes */
	cr_expect_leq(o.walk.fr_owner, PYTHON_FRAME_READ - 1);
	cr_expect_leq(o.walk.co_linetable, PYTHON_CODE_READ - 8);
}
