/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The in-memory API: appenders, validate, lookups, error strings, the
 * fallback hash.  bprof.h is included first so it is known to compile
 * on its own.
 */
#include "bprof.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixtures.h"

/* ---- appenders ---------------------------------------------------------- */

Test(api, appenders_grow_and_copy)
{
	struct bprof_recording *r;
	uint32_t idx = 99;

	cr_assert_eq(bprof_recording_create(&r), 0);
	for (uint32_t i = 0; i < 10000; i++) {
		struct bprof_count c = { .pid = i, .count = i + 1, .user_stack_id = -14,
					   .kernel_stack_id = BPROF_STACK_NONE };
		struct bprof_object o = { .size = i };

		cr_assert_eq(bprof_recording_add_count(r, &c), 0);
		cr_assert_eq(bprof_recording_add_object(r, &o, &idx), 0);
		cr_assert_eq(idx, i);
	}
	cr_assert_eq(r->nr_counts, 10000);
	for (uint32_t i = 0; i < 10000; i++) {
		cr_assert_eq(r->counts[i].pid, i);
		cr_assert_eq(r->objects[i].size, i);
	}
	cr_assert_eq(bprof_recording_validate(r, NULL), 0);
	bprof_recording_free(r);
}

Test(api, appenders_on_caller_allocated_arrays)
{
	struct bprof_recording *r;
	struct bprof_stack s = { .id = 9 };

	cr_assert_eq(bprof_recording_create(&r), 0);
	/* an exact-size array from the caller must not be overrun */
	r->stacks = calloc(3, sizeof(*r->stacks));
	r->stacks[0].id = 1;
	r->stacks[1].id = 2;
	r->stacks[2].id = 3;
	r->nr_stacks = 3;
	cr_assert_eq(bprof_recording_add_stack(r, &s), 0);
	cr_assert_eq(r->nr_stacks, 4);
	cr_assert_eq(r->stacks[3].id, 9);
	bprof_recording_free(r);
}

Test(api, appenders_reject_null)
{
	struct bprof_recording *r;

	cr_assert_eq(bprof_recording_create(&r), 0);
	cr_assert_eq(bprof_recording_add_count(r, NULL), BPROF_E_INVAL);
	cr_assert_eq(bprof_recording_add_stack(NULL, NULL), BPROF_E_INVAL);
	cr_assert_eq(bprof_recording_add_process(r, NULL), BPROF_E_INVAL);
	cr_assert_eq(bprof_recording_add_object(r, NULL, NULL), BPROF_E_INVAL);
	bprof_recording_free(r);
	bprof_recording_free(NULL);
}

/* ---- validate ----------------------------------------------------------- */

Test(api, validate_sorts)
{
	struct bprof_recording *r = fx_typical();
	struct bprof_mapping *m;

	/* reverse the mappings of the pid 100 snapshot (index 1 before sort) */
	m = r->processes[1].mappings;
	{
		struct bprof_mapping t = m[0];

		m[0] = m[2];
		m[2] = t;
	}
	cr_assert_eq(bprof_recording_validate(r, NULL), 0);
	cr_assert_eq(r->stacks[1].id, 2);
	cr_assert_eq(r->processes[0].pid, 100);
	cr_assert_lt(r->processes[0].mappings[0].start, r->processes[0].mappings[1].start);
	bprof_recording_free(r);
}

Test(api, validate_sorts_ksyms)
{
	struct bprof_recording *r = fx_typical();
	struct bprof_ksym t = r->kernel.ksyms[0];

	r->kernel.ksyms[0] = r->kernel.ksyms[4];
	r->kernel.ksyms[4] = t;
	cr_assert_eq(bprof_recording_validate(r, NULL), 0);
	for (uint32_t i = 1; i < r->kernel.nr_ksyms; i++)
		cr_assert_leq(r->kernel.ksyms[i - 1].addr, r->kernel.ksyms[i].addr);
	bprof_recording_free(r);
}

struct breakage {
	const char *what;
	void (*apply)(struct bprof_recording *r);
	int code;
};

static void dangling_stack(struct bprof_recording *r) { r->counts[0].kernel_stack_id = 3; }
static void duplicate_stack(struct bprof_recording *r) { r->stacks[2].id = 0; }
static void stack_id_big(struct bprof_recording *r) { r->stacks[0].id = 0x80000000u; }
static void start_after_end(struct bprof_recording *r) { r->processes[1].mappings[0].start = 0x430000; }
static void overlap(struct bprof_recording *r) { r->processes[1].mappings[1].start = 0x410000; }
static void bad_object(struct bprof_recording *r) { r->processes[1].mappings[0].object_index = 7; }
static void bid_long(struct bprof_recording *r) { r->objects[0].build_id_len = 65; }
static void bid_flag(struct bprof_recording *r) { r->objects[1].flags |= BPROF_OBJ_HAS_BUILD_ID; }
static void comm_full(struct bprof_recording *r) { memset(r->counts[0].comm, 'x', BPROF_COMM_LEN); }
static void dup_proc(struct bprof_recording *r) { r->processes[0].pid = 100; r->processes[0].exec_id = 1; }
static void meta_flags(struct bprof_recording *r) { r->meta.flags |= 1u << 20; }
static void map_flags(struct bprof_recording *r) { r->processes[1].mappings[0].flags |= 1u << 20; }
static void ksym_module(struct bprof_recording *r) { r->kernel.ksyms[0].module_index = 2; }
static void kbid_long(struct bprof_recording *r) { r->kernel.build_id_len = 100; }
static void mod_overflow(struct bprof_recording *r) { r->kernel.modules[0].size = UINT64_MAX; }
static void no_ips(struct bprof_recording *r) { free(r->stacks[0].ips); r->stacks[0].ips = NULL; }
static void deep(struct bprof_recording *r) { r->stacks[0].nr_ips = 70000; }
static void access_flags(struct bprof_recording *r) { r->access.flags |= 1u << 5; }
static void access_present_2(struct bprof_recording *r) { r->access.present = 2; }
static void access_absent_flags(struct bprof_recording *r) { r->access.present = 0; }
static void access_absent_counter(struct bprof_recording *r)
{
	memset(&r->access, 0, sizeof(r->access));
	r->access.counters[BPROF_ACC_PROCESSES_DENIED] = 1;
}

static const struct breakage breakages[] = {
	{ "dangling stack id", dangling_stack, BPROF_E_INVAL },
	{ "duplicate stack id", duplicate_stack, BPROF_E_INVAL },
	{ "stack id > INT32_MAX", stack_id_big, BPROF_E_INVAL },
	{ "mapping start > end", start_after_end, BPROF_E_INVAL },
	{ "overlapping mappings", overlap, BPROF_E_INVAL },
	{ "object index out of range", bad_object, BPROF_E_INVAL },
	{ "build-id too long", bid_long, BPROF_E_INVAL },
	{ "build-id flag without bytes", bid_flag, BPROF_E_INVAL },
	{ "comm without NUL", comm_full, BPROF_E_INVAL },
	{ "duplicate process snapshot", dup_proc, BPROF_E_INVAL },
	{ "undefined meta flag", meta_flags, BPROF_E_INVAL },
	{ "undefined mapping flag", map_flags, BPROF_E_INVAL },
	{ "ksym module out of range", ksym_module, BPROF_E_INVAL },
	{ "kernel build-id too long", kbid_long, BPROF_E_INVAL },
	{ "module base + size overflows", mod_overflow, BPROF_E_INVAL },
	{ "stack without ips array", no_ips, BPROF_E_INVAL },
	{ "stack deeper than the limit", deep, BPROF_E_INVAL },
	{ "undefined access flag", access_flags, BPROF_E_INVAL },
	{ "access.present neither 0 nor 1", access_present_2, BPROF_E_INVAL },
	{ "access data without access.present", access_absent_flags, BPROF_E_INVAL },
	{ "access counter without access.present", access_absent_counter, BPROF_E_INVAL },
};

Test(api, validate_refuses_broken_recordings)
{
	for (size_t i = 0; i < sizeof(breakages) / sizeof(breakages[0]); i++) {
		struct bprof_recording *r = fx_typical();
		struct bprof_error err = { 0 };
		void *buf = (void *)1;
		size_t len;

		breakages[i].apply(r);
		cr_assert_eq(bprof_recording_validate(r, &err), breakages[i].code, "%s: %d %s",
			     breakages[i].what, err.code, err.message);
		cr_assert_neq(err.message[0], '\0');
		/* and the writer refuses it too */
		cr_assert_eq(bprof_write_buffer(r, &buf, &len, NULL, &err), breakages[i].code, "%s",
			     breakages[i].what);
		cr_assert_null(buf);
		if (breakages[i].apply == deep)
			r->stacks[0].nr_ips = 3;
		bprof_recording_free(r);
	}
}

Test(api, validate_null)
{
	cr_assert_eq(bprof_recording_validate(NULL, NULL), BPROF_E_INVAL);
}

/* ---- lookups ------------------------------------------------------------ */

Test(api, stack_lookup)
{
	struct bprof_recording *r = fx_typical();

	cr_assert_eq(bprof_recording_validate(r, NULL), 0);
	cr_assert_eq(bprof_recording_stack(r, 0)->nr_ips, 3);
	cr_assert_eq(bprof_recording_stack(r, 2)->nr_ips, 1);
	cr_assert_eq(bprof_recording_stack(r, 7)->nr_ips, 5);
	cr_assert_null(bprof_recording_stack(r, 1));
	cr_assert_null(bprof_recording_stack(r, 8));
	cr_assert_null(bprof_recording_stack(r, -14));
	cr_assert_null(bprof_recording_stack(r, BPROF_STACK_NONE));
	cr_assert_null(bprof_recording_stack(NULL, 0));
	bprof_recording_free(r);
}

Test(api, process_lookup)
{
	struct bprof_recording *r;
	const struct bprof_process *p;
	struct bprof_process snap[] = {
		{ .pid = 5, .exec_id = 1, .snapshot_ns = 10 },
		{ .pid = 5, .exec_id = 3, .snapshot_ns = 30 },
		{ .pid = 5, .exec_id = 2, .snapshot_ns = 20 },
		{ .pid = 7, .exec_id = 1, .snapshot_ns = 5 },
		{ .pid = 2, .exec_id = 9, .snapshot_ns = 1 },
	};

	cr_assert_eq(bprof_recording_create(&r), 0);
	for (size_t i = 0; i < 5; i++)
		cr_assert_eq(bprof_recording_add_process(r, &snap[i]), 0);
	cr_assert_eq(bprof_recording_validate(r, NULL), 0);
	p = bprof_recording_process(r, 5, 2);
	cr_assert(p && p->exec_id == 2);
	p = bprof_recording_process(r, 5, 1);
	cr_assert(p && p->exec_id == 1);
	/* unknown exec_id: the latest snapshot of the pid */
	p = bprof_recording_process(r, 5, 77);
	cr_assert(p && p->exec_id == 3);
	p = bprof_recording_process(r, 2, 0);
	cr_assert(p && p->exec_id == 9);
	cr_assert_null(bprof_recording_process(r, 6, 1));
	cr_assert_null(bprof_recording_process(r, 1, 1));
	cr_assert_null(bprof_recording_process(r, 8, 1));
	bprof_recording_free(r);
}

/* ---- errors ------------------------------------------------------------- */

Test(api, strerror_covers_every_code)
{
	for (int code = 0; code >= BPROF_E_INVAL; code--) {
		const char *s = bprof_strerror(code);

		cr_assert_not_null(s);
		cr_assert_str_neq(s, "unknown error", "code %d", code);
	}
	cr_assert_str_eq(bprof_strerror(-1000), "unknown error");
	cr_assert_str_eq(bprof_strerror(12), "unknown error");
}

Test(api, read_buffer_arguments)
{
	struct bprof_recording *r = (void *)1;
	struct bprof_read_opts o = { .sz = sizeof(o), .max_window_log = 40 };
	struct bprof_error err;

	cr_assert_eq(bprof_read_buffer(NULL, "x", 1, NULL, &err), BPROF_E_INVAL);
	cr_assert_eq(bprof_read_buffer(&r, NULL, 5, NULL, &err), BPROF_E_INVAL);
	cr_assert_null(r);
	cr_assert_eq(bprof_read_buffer(&r, NULL, 0, NULL, &err), BPROF_E_NOT_BPROF);
	cr_assert_eq(bprof_read_buffer(&r, "x", 1, &o, &err), BPROF_E_INVAL);
	/* a forgotten sz is refused, not read as "no options" */
	{
		struct bprof_read_opts zero = { .max_decompressed = 10 };
		struct bprof_write_opts wzero = { .flags = BPROF_WRITE_NO_CLOBBER };
		struct bprof_recording *e = fx_empty();
		void *buf = (void *)1;
		size_t len;

		cr_assert_eq(bprof_read_buffer(&r, "x", 1, &zero, &err), BPROF_E_INVAL);
		cr_assert_eq(bprof_read_file(&r, "/nonexistent", &zero, &err), BPROF_E_INVAL);
		cr_assert_eq(bprof_write_buffer(e, &buf, &len, &wzero, &err), BPROF_E_INVAL);
		cr_assert_null(buf);
		cr_assert_eq(bprof_write_file(e, "/tmp/bprof-never-written", &wzero, &err),
			     BPROF_E_INVAL);
		bprof_recording_free(e);
	}
	/* no error struct is fine */
	cr_assert_eq(bprof_read_buffer(&r, "nope", 4, NULL, NULL), BPROF_E_NOT_BPROF);
}

Test(api, version_message_names_both_versions)
{
	struct bprof_recording *r = fx_empty(), *back;
	struct bprof_error err = { 0 };
	uint8_t *buf;
	size_t len;

	cr_assert_eq(bprof_write_buffer(r, (void **)&buf, &len, NULL, &err), 0);
	buf[8] = 3; /* major 3 */
	buf[10] = 7; /* minor 7 */
	cr_assert_eq(bprof_read_buffer(&back, buf, len, NULL, &err), BPROF_E_VERSION);
	cr_assert_neq(strstr(err.message, "3.7"), NULL, "%s", err.message);
	char ours[16];

	snprintf(ours, sizeof(ours), "%d.%d", BPROF_FORMAT_MAJOR, BPROF_FORMAT_MINOR);
	cr_assert_neq(strstr(err.message, ours), NULL, "%s", err.message);
	free(buf);
	bprof_recording_free(r);
}

Test(api, access_counter_names)
{
	static const char *const want[] = { "objects_by_path", "objects_unverified",
					     "objects_denied", "processes_denied" };

	cr_assert_eq(BPROF_ACC_NR_COUNTERS, 4);
	for (unsigned i = 0; i < BPROF_ACC_NR_COUNTERS; i++)
		cr_assert_str_eq(bprof_access_counter_name(i), want[i]);
	cr_assert_null(bprof_access_counter_name(BPROF_ACC_NR_COUNTERS));
	cr_assert_null(bprof_access_counter_name(~0u));
}

/* The writer writes ACCESS only when present: a recording without it
 * reads back without it, and with it, as it was. */
Test(api, access_written_only_when_present)
{
	struct bprof_recording *r = fx_typical(), *back;
	struct bprof_error err = { 0 };
	void *buf;
	size_t len, with;

	cr_assert_eq(bprof_write_buffer(r, &buf, &len, NULL, &err), 0, "%s", err.message);
	cr_assert_eq(bprof_read_buffer(&back, buf, len, NULL, &err), 0, "%s", err.message);
	cr_assert_eq(back->access.present, 1);
	cr_assert_eq(back->access.euid, 1000);
	cr_assert_eq(back->access.capabilities, UINT64_C(3) << 38);
	cr_assert_eq(back->access.counters[BPROF_ACC_PROCESSES_DENIED], 12);
	bprof_recording_free(back);
	free(buf);
	with = len;
	memset(&r->access, 0, sizeof(r->access));
	cr_assert_eq(bprof_write_buffer(r, &buf, &len, NULL, &err), 0, "%s", err.message);
	cr_assert_eq(bprof_read_buffer(&back, buf, len, NULL, &err), 0, "%s", err.message);
	cr_assert_eq(back->access.present, 0);
	cr_assert_lt(len, with);
	bprof_recording_free(back);
	free(buf);
	bprof_recording_free(r);
}

/* ---- fallback hash (SPEC.md section 10 test vectors) ---------------------- */

static uint64_t hash_of(const void *data, size_t len)
{
	char path[] = "/tmp/bprof-hash-XXXXXX";
	int fd = mkstemp(path);
	uint64_t h = 0;

	cr_assert_geq(fd, 0);
	unlink(path);
	cr_assert_eq(write(fd, data, len), (ssize_t)len);
	cr_assert_eq(bprof_fallback_hash(fd, &h), 0);
	close(fd);
	return h;
}

Test(api, fallback_hash_vectors)
{
	uint8_t *big = malloc(10000);

	for (int i = 0; i < 10000; i++)
		big[i] = (uint8_t)(i % 251);
	cr_assert_eq(hash_of("", 0), UINT64_C(0xa8c7f832281a39c5));
	cr_assert_eq(hash_of("hello\n", 6), UINT64_C(0x537a5d0a2f2846cf));
	cr_assert_eq(hash_of(big, 10000), UINT64_C(0xecd43e297fbac4b8));
	/* the middle does not count: only size, head and tail */
	big[5000] ^= 1;
	cr_assert_eq(hash_of(big, 10000), UINT64_C(0xecd43e297fbac4b8));
	big[9999] ^= 1;
	cr_assert_neq(hash_of(big, 10000), UINT64_C(0xecd43e297fbac4b8));
	free(big);
}

Test(api, fallback_hash_refuses_non_regular)
{
	uint64_t h;
	int fds[2];
	int fd = open("/tmp", O_RDONLY | O_DIRECTORY);

	cr_assert_eq(bprof_fallback_hash(fd, &h), BPROF_E_IO);
	close(fd);
	cr_assert_eq(pipe(fds), 0);
	cr_assert_eq(bprof_fallback_hash(fds[0], &h), BPROF_E_IO);
	close(fds[0]);
	close(fds[1]);
	cr_assert_eq(bprof_fallback_hash(-1, &h), BPROF_E_IO);
	cr_assert_eq(errno, EBADF);
}

/* SPEC.md 6.12: a frame resolves against the mapping of the greatest birth
 * <= its generation; a gap after that birth, an unknown generation or two
 * disagreeing mappings of one birth make it unknowable. */
Test(api, mapping_at_generation)
{
	struct bprof_recording *r = fx_typical();
	const struct bprof_process *p;
	const struct bprof_mapping *m;
	const uint64_t lib = 0x7f0000000100ull;

	cr_assert_eq(bprof_recording_validate(r, NULL), 0);
	p = bprof_recording_process(r, 100, 1);
	cr_assert_not_null(p);
	cr_assert(p->has_gens);
	/* generation 0: the object that was there first (history, birth 0) */
	cr_assert_eq(bprof_process_mapping_at(p, lib, 0, &m), 1);
	cr_assert_eq(m->object_index, 0);
	/* 1: the one mapped over its first half in generation 1 */
	cr_assert_eq(bprof_process_mapping_at(p, lib, 1, &m), 1);
	cr_assert_eq(m->object_index, 1);
	cr_assert_eq(m->file_offset, 0x2000);
	/* ... whose second half was still the first object */
	cr_assert_eq(bprof_process_mapping_at(p, 0x7f0000009000ull, 1, &m), 1);
	cr_assert_eq(m->object_index, 0);
	/* 2 and 3: the snapshot's */
	cr_assert_eq(bprof_process_mapping_at(p, lib, 3, &m), 1);
	cr_assert_eq(m->object_index, 1);
	cr_assert_eq(m->file_offset, 0x1000);
	/* the JIT region began in generation 3: nothing there before */
	cr_assert_eq(bprof_process_mapping_at(p, 0x7f1000000010ull, 2, &m), 0);
	cr_assert_null(m);
	cr_assert_eq(bprof_process_mapping_at(p, 0x7f1000000010ull, 3, &m), 1);
	/* generation 4 was never seen: whatever it mapped may be anywhere */
	cr_assert_eq(bprof_process_mapping_at(p, lib, 4, &m), -1);
	cr_assert_eq(bprof_process_mapping_at(p, lib, 9, &m), -1);
	cr_assert_eq(bprof_process_mapping_at(p, lib, BPROF_GEN_UNKNOWN, &m), -1);
	/* unmapped stays unmapped */
	cr_assert_eq(bprof_process_mapping_at(p, 0x10, 3, &m), 0);
	/* two mappings of one birth that disagree: unknowable */
	((struct bprof_process *)p)->history[0].birth = 2;
	cr_assert_eq(bprof_process_mapping_at(p, lib, 2, &m), -1);
	/* ... and that agree (same object, same offset at the address): fine */
	((struct bprof_process *)p)->history[0].file_offset = 0x1000;
	cr_assert_eq(bprof_process_mapping_at(p, lib, 2, &m), 1);
	/* a process without generations: its mappings, whatever the number */
	p = bprof_recording_process(r, 101, 3);
	cr_assert_not_null(p);
	cr_assert_eq(bprof_process_mapping_at(p, lib, 7, &m), 0);
	bprof_recording_free(r);
}
