/* SPDX-License-Identifier: Apache-2.0 */
#include "fixtures.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *fx_strdup(const char *s)
{
	return s ? strdup(s) : NULL;
}

static void *xcalloc(size_t n, size_t sz)
{
	void *p = calloc(n ? n : 1, sz);

	if (!p)
		abort();
	return p;
}

struct bprof_recording *fx_empty(void)
{
	struct bprof_recording *r;

	return bprof_recording_create(&r) ? NULL : r;
}

static void set_meta(struct bprof_recording *r, const char *host)
{
	r->meta.hostname = fx_strdup(host);
	r->meta.kernel_release = fx_strdup("6.1.0-18-amd64");
	r->meta.arch = fx_strdup("x86_64");
	r->meta.recorder_version = fx_strdup("prof-record 0.1.0");
	r->meta.options = fx_strdup("prof-record -F 99 -o out.bprof -- sleep 1");
	r->meta.event = fx_strdup("cpu-clock");
	r->meta.start_time_ns = UINT64_C(1763750000123456789);
	r->meta.duration_ns = UINT64_C(1000000000);
	r->meta.sample_freq = 99;
	r->meta.sample_period = 0;
	r->meta.ncpus = 2;
	r->meta.flags = BPROF_META_USER_STACKS | BPROF_META_KERNEL_STACKS;
}

static void add_stack(struct bprof_recording *r, uint32_t id, uint32_t n, uint64_t base)
{
	struct bprof_stack s = { .id = id, .nr_ips = n, .ips = n ? xcalloc(n, 8) : NULL };

	for (uint32_t i = 0; i < n; i++)
		s.ips[i] = base + 0x10 * i;
	if (bprof_recording_add_stack(r, &s))
		abort();
}

static void add_count(struct bprof_recording *r, uint32_t pid, int32_t us, int32_t ks,
		      uint64_t kip, uint64_t count, const char *comm)
{
	struct bprof_count c = {
		.pid = pid, .tid = pid, .exec_id = 1, .user_stack_id = us, .kernel_stack_id = ks,
		.kernel_ip = kip, .count = count,
	};

	snprintf(c.comm, sizeof(c.comm), "%s", comm);
	if (bprof_recording_add_count(r, &c))
		abort();
}

struct bprof_recording *fx_typical_v10(void)
{
	struct bprof_recording *r = fx_empty();
	struct bprof_object o = { 0 };
	struct bprof_process p = { 0 };
	uint32_t idx;

	if (!r)
		return NULL;
	set_meta(r, "prod-host-1");
	r->losses = (struct bprof_losses){ 1, 2, 3, 4, 5, 6, 7, 8, 0 };

	add_stack(r, 0, 3, 0x401000);
	add_stack(r, 7, 5, 0xffffffff81000000ull);
	add_stack(r, 2, 1, 0x7f0000001000ull);
	add_count(r, 100, 0, 7, 0xffffffff81000123ull, 42, "worker");
	add_count(r, 100, 2, -14, 0, 17, "worker");
	add_count(r, 0, -14, 7, 0xffffffff81000456ull, 5, "swapper/0");
	add_count(r, 101, BPROF_STACK_NONE, -12, 0, 1, "sleepy-thread-n");

	o.path = fx_strdup("/usr/bin/worker");
	o.build_id_len = 20;
	for (int i = 0; i < 20; i++)
		o.build_id[i] = (uint8_t)(0xa0 + i);
	o.flags = BPROF_OBJ_HAS_BUILD_ID;
	o.size = 123456;
	o.mtime_ns = UINT64_C(1700000000000000000);
	o.dev = 0x803;
	o.inode = 4242;
	if (bprof_recording_add_object(r, &o, &idx))
		abort();
	memset(&o, 0, sizeof(o));
	o.path = fx_strdup("/opt/app/libnobuildid.so (deleted)");
	o.flags = BPROF_OBJ_FALLBACK_ID | BPROF_OBJ_DELETED;
	o.size = 8192;
	o.fallback_hash = UINT64_C(0x1234567890abcdef);
	if (bprof_recording_add_object(r, &o, &idx))
		abort();

	/* added out of order on purpose: validate sorts */
	p.pid = 101;
	p.ns_pid = 1;
	p.exec_id = 3;
	p.snapshot_ns = 500;
	snprintf(p.comm, sizeof(p.comm), "sleepy");
	p.nr_mappings = 0;
	if (bprof_recording_add_process(r, &p))
		abort();

	memset(&p, 0, sizeof(p));
	p.pid = 100;
	p.ns_pid = 100;
	p.exec_id = 1;
	p.snapshot_ns = 1000;
	snprintf(p.comm, sizeof(p.comm), "worker");
	p.nr_mappings = 3;
	p.mappings = xcalloc(3, sizeof(*p.mappings));
	p.mappings[0] = (struct bprof_mapping){ 0x400000, 0x420000, 0, 0, BPROF_MAP_READ, 0 };
	p.mappings[1] = (struct bprof_mapping){ 0x7f0000000000ull, 0x7f0000010000ull, 0x1000, 1,
						BPROF_MAP_READ, 0 };
	p.mappings[2] = (struct bprof_mapping){ 0x7f1000000000ull, 0x7f1000100000ull, 0,
						BPROF_NO_OBJECT, BPROF_MAP_ANON | BPROF_MAP_WRITE, 0 };
	p.perf_map = fx_strdup("7f1000000000 100 jitted_fn\n7f1000000100 80 other fn\n");
	p.perf_map_len = strlen(p.perf_map);
	if (bprof_recording_add_process(r, &p))
		abort();

	r->kernel.release = fx_strdup("6.1.0-18-amd64");
	r->kernel.build_id_len = 20;
	for (int i = 0; i < 20; i++)
		r->kernel.build_id[i] = (uint8_t)i;
	r->kernel.stext = 0xffffffff81000000ull;
	r->kernel.nr_modules = 2;
	r->kernel.modules = xcalloc(2, sizeof(*r->kernel.modules));
	r->kernel.modules[0] = (struct bprof_module){ .name = fx_strdup("ext4"),
						      .base = 0xffffffffc0000000ull,
						      .size = 0x100000,
						      .build_id_len = 20 };
	memset(r->kernel.modules[0].build_id, 0x5a, 20);
	r->kernel.modules[1] = (struct bprof_module){ .name = fx_strdup("nf_tables"),
						      .base = 0xffffffffc0200000ull,
						      .size = 0x40000 };
	r->kernel.nr_ksyms = 5;
	r->kernel.ksyms = xcalloc(5, sizeof(*r->kernel.ksyms));
	r->kernel.ksyms[0] = (struct bprof_ksym){ 0xffffffff81000000ull, fx_strdup("_stext"),
						  BPROF_NO_OBJECT };
	r->kernel.ksyms[1] = (struct bprof_ksym){ 0xffffffff81000100ull, fx_strdup("do_syscall_64"),
						  BPROF_NO_OBJECT };
	r->kernel.ksyms[2] = (struct bprof_ksym){ 0xffffffff81000100ull, fx_strdup("alias_sym"),
						  BPROF_NO_OBJECT };
	r->kernel.ksyms[3] = (struct bprof_ksym){ 0xffffffffc0000010ull, fx_strdup("ext4_read"), 0 };
	r->kernel.ksyms[4] = (struct bprof_ksym){ 0xffffffffc0200000ull, fx_strdup("nft_do_chain"),
						  1 };
	return r;
}

struct bprof_recording *fx_typical_v11(void)
{
	struct bprof_recording *r = fx_typical_v10();

	if (!r)
		return NULL;
	/* format 1.1: the unwinder's mode, counters and per-stack flags */
	r->losses.user_stack_before_table = 9;
	r->unwind.mode = BPROF_UNWIND_AUTO;
	r->unwind.flags = BPROF_UNWIND_WALKED;
	for (int i = 0; i <= BPROF_UNW_LOAD_NS; i++) /* the 27 counters of 1.1 */
		r->unwind.counters[i] = 100 + (uint64_t)i;
	add_stack(r, 0x60000003, 4, 0x401100);
	r->stacks[r->nr_stacks - 1].flags = BPROF_USTACK_LEAF_EXACT | BPROF_USTACK_COMPLETE;
	add_stack(r, 0x40000005, 2, 0x401200);
	r->stacks[r->nr_stacks - 1].flags = BPROF_USTACK_FALLBACK | BPROF_USTACK_TRUNCATED;
	add_stack(r, 0x40000001, 1, 0x401300); /* walked, flags 0: no entry */
	add_count(r, 100, 0x60000003, -14, 0, 30, "worker");
	add_count(r, 100, 0x40000005, 7, 0xffffffff81000123ull, 4, "worker");
	add_count(r, 100, 0x40000001, -14, 0, 1, "worker");
	/* and the bytes of an object no workstation has (a vdso's) */
	r->nr_images = 1;
	r->images = xcalloc(1, sizeof(*r->images));
	r->images[0].object_index = 1;
	r->images[0].len = 32;
	r->images[0].data = xcalloc(1, 32);
	memcpy(r->images[0].data, "\x7f" "ELF image bytes of object one!", 32);
	return r;
}

struct bprof_recording *fx_typical_v12(void)
{
	struct bprof_recording *r = fx_typical_v11();

	if (!r)
		return NULL;
	/* format 1.2: recorded by uid 1000 with CAP_BPF and CAP_PERFMON only;
	 * kallsyms readable, nothing else */
	r->access.present = 1;
	r->access.euid = 1000;
	r->access.flags = BPROF_ACCESS_KALLSYMS;
	r->access.capabilities = UINT64_C(1) << 38 | UINT64_C(1) << 39;
	r->access.counters[BPROF_ACC_OBJECTS_BY_PATH] = 40;
	r->access.counters[BPROF_ACC_OBJECTS_UNVERIFIED] = 2;
	r->access.counters[BPROF_ACC_OBJECTS_DENIED] = 3;
	r->access.counters[BPROF_ACC_PROCESSES_DENIED] = 12;
	return r;
}

struct bprof_recording *fx_typical_v13(void)
{
	struct bprof_recording *r = fx_typical_v12();
	struct bprof_process *p = NULL;

	if (!r)
		return NULL;
	/* format 1.3: worker (pid 100) unloaded the object at 0x7f0000000000
	 * and mapped object 0 there in generation 2; generation 4 was never
	 * seen; samples in generations 1 and 3 */
	for (uint64_t i = 0; i < r->nr_processes; i++)
		if (r->processes[i].pid == 100)
			p = &r->processes[i];
	if (!p)
		abort();
	p->has_gens = 1;
	p->mappings[0].birth = 0;
	p->mappings[1].birth = 2;
	p->mappings[2].birth = 3;
	p->nr_history = 2;
	p->history = xcalloc(2, sizeof(*p->history));
	p->history[0] = (struct bprof_mapping){ 0x7f0000000000ull, 0x7f0000008000ull, 0x2000, 1,
						BPROF_MAP_READ, 1 };
	p->history[1] = (struct bprof_mapping){ 0x7f0000000000ull, 0x7f0000010000ull, 0x1000, 0,
						BPROF_MAP_READ, 0 };
	p->nr_gaps = 1;
	p->gaps = xcalloc(1, sizeof(*p->gaps));
	p->gaps[0] = 4;
	r->counts[0].map_gen = 1;
	r->counts[1].map_gen = 3;
	return r;
}

struct bprof_recording *fx_typical(void)
{
	struct bprof_recording *r = fx_typical_v13();

	if (!r)
		return NULL;
	/* format 1.4: the counters of the memory budget, and two objects
	 * whose tables did not fit, one of them sampled */
	for (int i = BPROF_UNW_LOAD_NS + 1; i < BPROF_UNW_NR_COUNTERS; i++)
		r->unwind.counters[i] = 100 + (uint64_t)i;
	r->unwind.nr_misses = 2;
	r->unwind.misses = xcalloc(2, sizeof(*r->unwind.misses));
	r->unwind.misses[0] = (struct bprof_unwind_miss){ 0, BPROF_UNWIND_MISS_SAMPLED, 2500000 };
	r->unwind.misses[1] = (struct bprof_unwind_miss){ 1, 0, 31 };
	return r;
}

struct bprof_recording *fx_offcpu(void)
{
	struct bprof_recording *r = fx_typical();
	uint64_t n;

	if (!r)
		return NULL;
	n = r->nr_counts;
	r->offcpu = (struct bprof_offcpu){ BPROF_OFFCPU_WALL, 10101010, 7, 3, 123456789, 4, 1, 2 };
	for (uint32_t s = BPROF_STATE_S; s <= BPROF_STATE_MAX; s++) {
		struct bprof_count c = r->counts[s % n];

		c.state = s;
		c.kernel_ip = 0;
		c.blocked_ns = s * 1000000ull;
		c.count = s;
		if (bprof_recording_add_count(r, &c)) {
			bprof_recording_free(r);
			return NULL;
		}
	}
	return r;
}

struct bprof_recording *fx_slices(void)
{
	struct bprof_recording *r = fx_offcpu();
	struct bprof_count c;

	if (!r)
		return NULL;
	r->slices.slice_ns = 20000000;
	r->slices.origin_ns = r->meta.start_time_ns - 5000000;
	c = r->counts[r->nr_counts - 1]; /* an off-CPU row: rows stay in file order */
	c.count = 2;
	if (bprof_recording_add_count(r, &c)) {
		bprof_recording_free(r);
		return NULL;
	}
	for (uint64_t i = 0; i + 1 < r->nr_counts; i++)
		r->counts[i].slice = (uint32_t)(3 * i);
	r->counts[r->nr_counts - 1].slice = 1000;
	return r;
}

/* A location table of a 3-line function (CPython's format, SPEC.md 6.15):
 * 2 code units on the first line (short form), 3 one line down (one-line
 * form), 1 two lines down (no-columns form, delta +2). */
static const uint8_t fx_linetable[] = { 0x80 | 0 << 3 | 1, 0x05,
					0x80 | 11 << 3 | 2, 0x04, 0x09,
					0x80 | 13 << 3 | 0, 0x04 };

/* A line number table: (bci 0, line 20), (bci 4, line 21). */
static const uint8_t fx_jvm_lines[] = { 0xff, 0x00, 0x28, 0x21, 0x00 };

struct bprof_recording *fx_jvm(void)
{
	struct bprof_recording *r = fx_python();
	struct bprof_jvm *j;

	if (!r)
		return NULL;
	j = &r->jvm;
	j->present = 1;
	j->nr_counters = 12;
	for (uint32_t i = 0; i < j->nr_counters; i++)
		j->counters[i] = 2000 + i;
	j->nr_procs = 2;
	j->procs = xcalloc(2, sizeof(*j->procs));
	j->procs[0] = (struct bprof_jvm_proc){ 100, 1, BPROF_JVM_WALKED, fx_strdup("17.0.15+6") };
	j->procs[1] = (struct bprof_jvm_proc){ 300, 2, BPROF_JVM_UNKNOWN_VERSION, NULL };
	j->nr_frames = 4;
	j->frames = xcalloc(4, sizeof(*j->frames));
	j->frames[0] = (struct bprof_jvm_frame){
		.pid = 100, .exec_id = 1, .id = 1ull << 48 | 0x7f1000000100ull, .guard = 0x1234,
		.kind = BPROF_JVM_INTERPRETED, .klass = fx_strdup("app.Main"),
		.method = fx_strdup("run"), .signature = fx_strdup("()V"),
		.file = fx_strdup("Main.java"), .lines_len = sizeof(fx_jvm_lines),
	};
	j->frames[0].lines = xcalloc(1, sizeof(fx_jvm_lines));
	memcpy(j->frames[0].lines, fx_jvm_lines, sizeof(fx_jvm_lines));
	j->frames[1] = (struct bprof_jvm_frame){
		.pid = 100, .exec_id = 1, .id = 2ull << 48 | 0x7f2000000200ull, .guard = 77,
		.kind = BPROF_JVM_COMPILED, .level = 4, .klass = fx_strdup("app.M\xc3\xa9thode"),
		.method = fx_strdup("hot"), .signature = fx_strdup("(I)J"), .file = fx_strdup("M.java"),
	};
	{
		/* at pc offset 0x40: app.Main.run (bci 4) inlined into hot (bci 7) */
		static const uint8_t sc[] = {
			0x40, 0, 0, 0, 2, 0, 0, 0,
			0x00, 0x01, 0, 0, 0x10, 0x7f, 0, 0, 0x34, 0x12, 0, 0, 4, 0, 0, 0,
			0x00, 0x03, 0, 0, 0x30, 0x7f, 0, 0, 0xaa, 0x00, 0, 0, 7, 0, 0, 0,
		};
		j->frames[1].scopes_len = sizeof(sc);
		j->frames[1].scopes = xcalloc(1, sizeof(sc));
		memcpy(j->frames[1].scopes, sc, sizeof(sc));
	}
	j->frames[2] = (struct bprof_jvm_frame){
		.pid = 100, .exec_id = 1, .id = 2ull << 48 | 0x7f2000000300ull, .guard = 0,
		.kind = BPROF_JVM_STUB, .method = fx_strdup("StubRoutines (1)"),
	};
	/* the compiled method's own Method, named for its scopes */
	j->frames[3] = (struct bprof_jvm_frame){
		.pid = 100, .exec_id = 1, .id = 1ull << 48 | 0x7f3000000300ull, .guard = 0xaa,
		.kind = BPROF_JVM_INTERPRETED, .klass = fx_strdup("app.M\xc3\xa9thode"),
		.method = fx_strdup("hot"), .signature = fx_strdup("(I)J"), .file = fx_strdup("M.java"),
		.lines_len = sizeof(fx_jvm_lines),
	};
	j->frames[3].lines = xcalloc(1, sizeof(fx_jvm_lines));
	memcpy(j->frames[3].lines, fx_jvm_lines, sizeof(fx_jvm_lines));
	{
		static const uint64_t ips[] = {
			BPROF_JVM_TAG_ID | 2ull << 48 | 0x7f2000000200ull,
			BPROF_JVM_TAG_POS | 77ull << BPROF_JVM_GUARD_SHIFT | 0x40,
			BPROF_JVM_TAG_ID | 1ull << 48 | 0x7f1000000100ull,
			BPROF_JVM_TAG_POS | 0x1234ull << BPROF_JVM_GUARD_SHIFT | 5,
			BPROF_JVM_TAG_ID | 2ull << 48 | 0x7f2000000300ull,
			BPROF_JVM_TAG_POS | 0x10,
			0x401030,
		};
		struct bprof_stack st = { .id = 0x40000030, .nr_ips = 7, .ips = xcalloc(7, 8) };

		memcpy(st.ips, ips, sizeof(ips));
		if (bprof_recording_add_stack(r, &st))
			abort();
		add_count(r, 100, 0x40000030, -14, 0, 5, "java");
		/* on-CPU rows come before the off-CPU ones, as they read back */
		for (uint64_t k = 0; k + 1 < r->nr_counts; k++)
			if (r->counts[k].state != BPROF_STATE_ON_CPU) {
				struct bprof_count c = r->counts[r->nr_counts - 1];

				memmove(&r->counts[k + 1], &r->counts[k],
					(r->nr_counts - 1 - k) * sizeof(c));
				r->counts[k] = c;
				break;
			}
	}
	return r;
}

struct bprof_recording *fx_python(void)
{
	struct bprof_recording *r = fx_offcpu();
	struct bprof_python *py;

	if (!r)
		return NULL;
	py = &r->python;
	py->present = 1;
	py->nr_counters = BPROF_PY_NR_COUNTERS;
	for (uint32_t i = 0; i < py->nr_counters; i++)
		py->counters[i] = 1000 + i;
	py->nr_procs = 2;
	py->procs = xcalloc(2, sizeof(*py->procs));
	py->procs[0] = (struct bprof_python_proc){ 100, 1, 0x030b02f0, BPROF_PY_WALKED };
	py->procs[1] = (struct bprof_python_proc){ 200, 1, 0x030e00f0, BPROF_PY_UNKNOWN_VERSION };
	py->nr_codes = 2;
	py->codes = xcalloc(2, sizeof(*py->codes));
	for (int i = 0; i < 2; i++) {
		struct bprof_python_code *c = &py->codes[i];

		*c = (struct bprof_python_code){
			.pid = 100, .exec_id = 1, .code = 0x7f0000001000ull + 0x1000ull * i,
			.guard = 0xdeadbeef - i, .firstlineno = 10 + 10 * i, .code_offset = 184,
			.nr_units = 6, .linetable_len = sizeof(fx_linetable),
		};
		c->qualname = fx_strdup(i ? "Outer.method" : "inner");
		c->filename = fx_strdup(i ? "/srv/app/m\xc3\xa9thode.py" : "app.py");
		c->linetable = xcalloc(1, sizeof(fx_linetable));
		memcpy(c->linetable, fx_linetable, sizeof(fx_linetable));
	}
	/* a walked stack with both as frames: inner on its first line (unit
	 * 1), Outer.method one line down (unit 4), each before the native
	 * frame of the evaluation loop that ran it */
	{
		static const uint64_t ips[] = {
			0x401010,
			BPROF_PY_TAG_CODE | 0x7f0000001000ull,
			BPROF_PY_TAG_INSTR | (uint64_t)0xdeadbeef << BPROF_PY_GUARD_SHIFT | (184 + 2),
			0x401020,
			BPROF_PY_TAG_CODE | 0x7f0000002000ull,
			BPROF_PY_TAG_INSTR | (uint64_t)(0xdeadbeef - 1) << BPROF_PY_GUARD_SHIFT | (184 + 8),
			0x401030,
		};
		struct bprof_stack st = { .id = 0x40000020, .nr_ips = 7, .ips = xcalloc(7, 8) };

		memcpy(st.ips, ips, sizeof(ips));
		if (bprof_recording_add_stack(r, &st))
			abort();
		add_count(r, 100, 0x40000020, -14, 0, 3, "python");
		/* on-CPU rows come before the off-CPU ones, as they read back */
		for (uint64_t k = 0; k + 1 < r->nr_counts; k++)
			if (r->counts[k].state != BPROF_STATE_ON_CPU) {
				struct bprof_count c = r->counts[r->nr_counts - 1];

				memmove(&r->counts[k + 1], &r->counts[k],
					(r->nr_counts - 1 - k) * sizeof(c));
				r->counts[k] = c;
				break;
			}
	}
	return r;
}

struct bprof_recording *fx_odd_strings(void)
{
	struct bprof_recording *r = fx_typical();

	if (!r)
		return NULL;
	free(r->meta.hostname);
	r->meta.hostname = fx_strdup("h\xc3\xa9te \x01\x7f\xff\\ \"q\" \t\n end");
	free(r->meta.options);
	r->meta.options = fx_strdup("-o 'a b' --comm=\xe2\x98\x83 \r\n--");
	free(r->meta.event);
	r->meta.event = fx_strdup("");
	free(r->meta.arch);
	r->meta.arch = NULL; /* reads back as "" */
	free(r->objects[0].path);
	r->objects[0].path = fx_strdup("/tmp/dir with spaces/\xff\xfe\n.so");
	snprintf(r->counts[0].comm, BPROF_COMM_LEN, "a\x01\xff\t b");
	free(r->kernel.ksyms[1].name);
	r->kernel.ksyms[1].name = fx_strdup("sym.with.dots$and\x80high");
	return r;
}

/* xorshift64*: deterministic content for a given seed */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * UINT64_C(2685821657736338717);
}

struct bprof_recording *fx_large(unsigned nr_counts, unsigned nr_stacks, unsigned nr_ksyms,
				 unsigned seed)
{
	struct bprof_recording *r = fx_empty();
	uint64_t s = seed * UINT64_C(0x9e3779b97f4a7c15) + 1, addr = 0xffffffff81000000ull;

	if (!r)
		return NULL;
	set_meta(r, "big-host");
	for (unsigned i = 0; i < nr_stacks; i++)
		add_stack(r, i * 3 + 1, 1 + (unsigned)(rnd(&s) % 127), rnd(&s) & 0x7fffffffffffull);
	for (unsigned i = 0; i < nr_counts; i++) {
		int32_t us = nr_stacks ? (int32_t)(1 + 3 * (rnd(&s) % nr_stacks)) : -14;
		int32_t ks = (i % 3 == 0) ? -14 : us;
		char comm[16];

		snprintf(comm, sizeof(comm), "task-%u", i % 5000);
		add_count(r, 1000 + i % 777, us, ks, i % 3 ? addr + i : 0, 1 + rnd(&s) % 1000, comm);
	}
	r->kernel.release = fx_strdup("6.1.0-big");
	r->kernel.nr_modules = 3;
	r->kernel.modules = xcalloc(3, sizeof(*r->kernel.modules));
	for (unsigned i = 0; i < 3; i++) {
		char name[32];

		snprintf(name, sizeof(name), "mod%u", i);
		r->kernel.modules[i].name = fx_strdup(name);
		r->kernel.modules[i].base = 0xffffffffc0000000ull + i * 0x100000;
		r->kernel.modules[i].size = 0x100000;
	}
	r->kernel.nr_ksyms = nr_ksyms;
	r->kernel.ksyms = nr_ksyms ? xcalloc(nr_ksyms, sizeof(*r->kernel.ksyms)) : NULL;
	for (unsigned i = 0; i < nr_ksyms; i++) {
		char name[64];

		addr += rnd(&s) % 4096;
		snprintf(name, sizeof(name), "kernel_function_%u_%llx", i,
			 (unsigned long long)(rnd(&s) & 0xffff));
		r->kernel.ksyms[i].addr = addr;
		r->kernel.ksyms[i].name = fx_strdup(name);
		r->kernel.ksyms[i].module_index = i % 10 == 0 ? (uint32_t)(i / 10 % 3) : BPROF_NO_OBJECT;
	}
	return r;
}

/* ---- comparison ------------------------------------------------------- */

#define DIFF(...)                                       \
	do {                                            \
		snprintf(why, why_len, __VA_ARGS__);    \
		return false;                           \
	} while (0)

static bool streq0(const char *a, const char *b)
{
	return !strcmp(a ? a : "", b ? b : "");
}

bool fx_equal(const struct bprof_recording *a, const struct bprof_recording *b, char *why,
	      size_t why_len)
{
	const struct bprof_meta *ma = &a->meta, *mb = &b->meta;

	if (!streq0(ma->hostname, mb->hostname) || !streq0(ma->kernel_release, mb->kernel_release) ||
	    !streq0(ma->arch, mb->arch) || !streq0(ma->recorder_version, mb->recorder_version) ||
	    !streq0(ma->options, mb->options) || !streq0(ma->event, mb->event))
		DIFF("meta strings differ");
	if (ma->start_time_ns != mb->start_time_ns || ma->duration_ns != mb->duration_ns ||
	    ma->sample_freq != mb->sample_freq || ma->sample_period != mb->sample_period ||
	    ma->ncpus != mb->ncpus || ma->flags != mb->flags)
		DIFF("meta numbers differ");
	if (memcmp(&a->losses, &b->losses, sizeof(a->losses)))
		DIFF("losses differ");
	if (a->unwind.mode != b->unwind.mode || a->unwind.flags != b->unwind.flags ||
	    memcmp(a->unwind.counters, b->unwind.counters, sizeof(a->unwind.counters)) ||
	    a->unwind.nr_misses != b->unwind.nr_misses)
		DIFF("unwind differs");
	for (uint32_t i = 0; i < a->unwind.nr_misses; i++)
		if (a->unwind.misses[i].object_index != b->unwind.misses[i].object_index ||
		    a->unwind.misses[i].flags != b->unwind.misses[i].flags ||
		    a->unwind.misses[i].rows != b->unwind.misses[i].rows)
			DIFF("unwind miss %u differs", i);
	/* field by field: the struct has padding */
	if (a->access.present != b->access.present || a->access.flags != b->access.flags ||
	    a->access.euid != b->access.euid || a->access.capabilities != b->access.capabilities ||
	    memcmp(a->access.counters, b->access.counters, sizeof(a->access.counters)))
		DIFF("access differs");
	if (a->nr_images != b->nr_images)
		DIFF("image counts differ");
	for (uint64_t i = 0; i < a->nr_images; i++)
		if (a->images[i].object_index != b->images[i].object_index ||
		    a->images[i].len != b->images[i].len ||
		    memcmp(a->images[i].data, b->images[i].data, a->images[i].len))
			DIFF("image %llu differs", (unsigned long long)i);
	if (a->nr_counts != b->nr_counts || a->nr_stacks != b->nr_stacks ||
	    a->nr_objects != b->nr_objects || a->nr_processes != b->nr_processes)
		DIFF("table sizes differ: %llu/%llu %llu/%llu %llu/%llu %llu/%llu",
		     (unsigned long long)a->nr_counts, (unsigned long long)b->nr_counts,
		     (unsigned long long)a->nr_stacks, (unsigned long long)b->nr_stacks,
		     (unsigned long long)a->nr_objects, (unsigned long long)b->nr_objects,
		     (unsigned long long)a->nr_processes, (unsigned long long)b->nr_processes);
	for (uint64_t i = 0; i < a->nr_counts; i++) {
		const struct bprof_count *x = &a->counts[i], *y = &b->counts[i];

		if (x->pid != y->pid || x->tid != y->tid || x->exec_id != y->exec_id ||
		    x->user_stack_id != y->user_stack_id || x->kernel_stack_id != y->kernel_stack_id ||
		    x->kernel_ip != y->kernel_ip || x->count != y->count ||
		    x->map_gen != y->map_gen || strncmp(x->comm, y->comm, BPROF_COMM_LEN) ||
		    x->state != y->state || x->blocked_ns != y->blocked_ns || x->slice != y->slice)
			DIFF("count %llu differs", (unsigned long long)i);
	}
	if (memcmp(&a->slices, &b->slices, sizeof(a->slices)))
		DIFF("slices differ");
	if (memcmp(&a->offcpu, &b->offcpu, sizeof(a->offcpu)))
		DIFF("off-CPU header differs");
	if (a->python.present != b->python.present || a->python.nr_counters != b->python.nr_counters ||
	    memcmp(a->python.counters, b->python.counters, sizeof(a->python.counters)) ||
	    a->python.nr_procs != b->python.nr_procs || a->python.nr_codes != b->python.nr_codes ||
	    (a->python.nr_procs &&
	     memcmp(a->python.procs, b->python.procs, a->python.nr_procs * sizeof(*a->python.procs))))
		DIFF("python section differs");
	if (a->jit.present != b->jit.present || a->jit.mono_minus_real_ns != b->jit.mono_minus_real_ns ||
	    memcmp(a->jit.counters, b->jit.counters, sizeof(a->jit.counters)) ||
	    a->jit.nr_dumps != b->jit.nr_dumps)
		DIFF("jit section differs");
	for (uint64_t i = 0; i < a->jit.nr_dumps; i++) {
		const struct bprof_jitdump *x = &a->jit.dumps[i], *y = &b->jit.dumps[i];

		if (x->pid != y->pid || x->exec_id != y->exec_id || x->len != y->len ||
		    memcmp(x->data, y->data, (size_t)x->len))
			DIFF("jitdump %llu differs", (unsigned long long)i);
	}
	if (a->v8.present != b->v8.present || a->v8.nr_counters != b->v8.nr_counters ||
	    memcmp(a->v8.counters, b->v8.counters, sizeof(a->v8.counters)) ||
	    a->v8.nr_procs != b->v8.nr_procs || a->v8.nr_sfis != b->v8.nr_sfis ||
	    (a->v8.nr_procs && memcmp(a->v8.procs, b->v8.procs, a->v8.nr_procs * sizeof(*a->v8.procs))))
		DIFF("v8 section differs");
	for (uint64_t i = 0; i < a->v8.nr_sfis; i++) {
		const struct bprof_v8_sfi *x = &a->v8.sfis[i], *y = &b->v8.sfis[i];

		if (x->pid != y->pid || x->exec_id != y->exec_id || x->sfi != y->sfi ||
		    x->guard != y->guard || x->line != y->line || !streq0(x->name, y->name) ||
		    !streq0(x->script, y->script) || x->nr_pos != y->nr_pos)
			DIFF("v8 SFI %llu differs", (unsigned long long)i);
		for (uint32_t j = 0; j < x->nr_pos; j++) {
			if (x->pos[j].code_offset != y->pos[j].code_offset ||
			    x->pos[j].nr_frames != y->pos[j].nr_frames)
				DIFF("v8 SFI %llu row %u differs", (unsigned long long)i, j);
			for (uint32_t k = 0; k < x->pos[j].nr_frames; k++)
				if (x->pos[j].frames[k].line != y->pos[j].frames[k].line ||
				    !streq0(x->pos[j].frames[k].name, y->pos[j].frames[k].name) ||
				    !streq0(x->pos[j].frames[k].script, y->pos[j].frames[k].script))
					DIFF("v8 SFI %llu row %u frame %u differs", (unsigned long long)i, j, k);
		}
	}
	if (a->jvm.present != b->jvm.present || a->jvm.nr_counters != b->jvm.nr_counters ||
	    memcmp(a->jvm.counters, b->jvm.counters, sizeof(a->jvm.counters)) ||
	    a->jvm.nr_procs != b->jvm.nr_procs || a->jvm.nr_frames != b->jvm.nr_frames)
		DIFF("jvm section differs");
	for (uint64_t i = 0; i < a->jvm.nr_procs; i++) {
		const struct bprof_jvm_proc *x = &a->jvm.procs[i], *y = &b->jvm.procs[i];

		if (x->pid != y->pid || x->exec_id != y->exec_id || x->status != y->status ||
		    !x->version != !y->version || (x->version && strcmp(x->version, y->version)))
			DIFF("jvm process %llu differs", (unsigned long long)i);
	}
#define FX_STREQ(p, q) (!(p) == !(q) && (!(p) || !strcmp((p), (q))))
	for (uint64_t i = 0; i < a->jvm.nr_frames; i++) {
		const struct bprof_jvm_frame *x = &a->jvm.frames[i], *y = &b->jvm.frames[i];

		if (x->pid != y->pid || x->exec_id != y->exec_id || x->id != y->id ||
		    x->guard != y->guard || x->kind != y->kind || x->level != y->level ||
		    !FX_STREQ(x->klass, y->klass) || !FX_STREQ(x->method, y->method) ||
		    !FX_STREQ(x->signature, y->signature) || !FX_STREQ(x->file, y->file) ||
		    x->lines_len != y->lines_len ||
		    (x->lines_len && memcmp(x->lines, y->lines, x->lines_len)) ||
		    x->scopes_len != y->scopes_len ||
		    (x->scopes_len && memcmp(x->scopes, y->scopes, x->scopes_len)))
			DIFF("jvm frame %llu differs", (unsigned long long)i);
	}
#undef FX_STREQ
	for (uint64_t i = 0; i < a->python.nr_codes; i++) {
		const struct bprof_python_code *x = &a->python.codes[i], *y = &b->python.codes[i];

		if (x->pid != y->pid || x->exec_id != y->exec_id || x->code != y->code ||
		    x->guard != y->guard || x->firstlineno != y->firstlineno ||
		    x->code_offset != y->code_offset || x->nr_units != y->nr_units ||
		    strcmp(x->qualname, y->qualname) || strcmp(x->filename, y->filename) ||
		    x->linetable_len != y->linetable_len ||
		    memcmp(x->linetable, y->linetable, x->linetable_len))
			DIFF("python code %llu differs", (unsigned long long)i);
	}
	for (uint64_t i = 0; i < a->nr_stacks; i++) {
		const struct bprof_stack *x = &a->stacks[i], *y = &b->stacks[i];

		if (x->id != y->id || x->nr_ips != y->nr_ips || x->flags != y->flags ||
		    (x->nr_ips && memcmp(x->ips, y->ips, x->nr_ips * 8)))
			DIFF("stack %llu differs", (unsigned long long)i);
	}
	for (uint64_t i = 0; i < a->nr_objects; i++) {
		const struct bprof_object *x = &a->objects[i], *y = &b->objects[i];

		if (!streq0(x->path, y->path) || x->build_id_len != y->build_id_len ||
		    memcmp(x->build_id, y->build_id, x->build_id_len) || x->flags != y->flags ||
		    x->size != y->size || x->mtime_ns != y->mtime_ns || x->dev != y->dev ||
		    x->inode != y->inode || x->fallback_hash != y->fallback_hash)
			DIFF("object %llu differs", (unsigned long long)i);
	}
	for (uint64_t i = 0; i < a->nr_processes; i++) {
		const struct bprof_process *x = &a->processes[i], *y = &b->processes[i];

		if (x->pid != y->pid || x->ns_pid != y->ns_pid || x->exec_id != y->exec_id ||
		    x->nr_mappings != y->nr_mappings || x->snapshot_ns != y->snapshot_ns ||
		    strncmp(x->comm, y->comm, BPROF_COMM_LEN) || x->perf_map_len != y->perf_map_len ||
		    (x->perf_map_len && memcmp(x->perf_map, y->perf_map, x->perf_map_len)))
			DIFF("process %llu differs", (unsigned long long)i);
		for (uint32_t j = 0; j < x->nr_mappings; j++)
			if (memcmp(&x->mappings[j], &y->mappings[j], sizeof(x->mappings[j])))
				DIFF("process %llu mapping %u differs", (unsigned long long)i, j);
		if (x->has_gens != y->has_gens || x->nr_history != y->nr_history ||
		    x->nr_gaps != y->nr_gaps ||
		    (x->nr_gaps && memcmp(x->gaps, y->gaps, x->nr_gaps * sizeof(*x->gaps))))
			DIFF("process %llu generations differ", (unsigned long long)i);
		for (uint32_t j = 0; j < x->nr_history; j++)
			if (memcmp(&x->history[j], &y->history[j], sizeof(x->history[j])))
				DIFF("process %llu history mapping %u differs", (unsigned long long)i, j);
	}
	{
		const struct bprof_kernel *x = &a->kernel, *y = &b->kernel;

		if (!streq0(x->release, y->release) || x->build_id_len != y->build_id_len ||
		    memcmp(x->build_id, y->build_id, x->build_id_len) || x->flags != y->flags ||
		    x->stext != y->stext || x->nr_modules != y->nr_modules ||
		    x->nr_ksyms != y->nr_ksyms)
			DIFF("kernel differs");
		for (uint32_t i = 0; i < x->nr_modules; i++) {
			const struct bprof_module *m = &x->modules[i], *n = &y->modules[i];

			if (!streq0(m->name, n->name) || m->base != n->base || m->size != n->size ||
			    m->build_id_len != n->build_id_len ||
			    memcmp(m->build_id, n->build_id, m->build_id_len))
				DIFF("module %u differs", i);
		}
		for (uint32_t i = 0; i < x->nr_ksyms; i++)
			if (x->ksyms[i].addr != y->ksyms[i].addr ||
			    x->ksyms[i].module_index != y->ksyms[i].module_index ||
			    !streq0(x->ksyms[i].name, y->ksyms[i].name))
				DIFF("ksym %u differs", i);
	}
	return true;
}

struct bprof_recording *fx_jit(void)
{
	struct bprof_recording *r = fx_python();
	struct bprof_jit *j;
	/* a jitdump header (magic, version 1, size 40, ...) and a load of
	 * "f" with its code stripped: opaque bytes to the format */
	static const uint8_t dump[] = {
		0x44, 0x54, 0x69, 0x4a, 1, 0, 0, 0, 40, 0, 0, 0, 62, 0, 0, 0,
		0, 0, 0, 0, 100, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		0, 0, 0, 0, 58, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 100, 0, 0, 0, 100, 0, 0, 0,
		0, 0x10, 0, 0, 0, 0, 0, 0, 0, 0x10, 0, 0, 0, 0, 0, 0, 0x40, 0, 0, 0, 0, 0, 0, 0,
		1, 0, 0, 0, 0, 0, 0, 0, 'f', 0,
	};

	if (!r)
		return NULL;
	j = &r->jit;
	j->present = 1;
	j->mono_minus_real_ns = -1764000000000000000LL;
	for (int i = 0; i < BPROF_JIT_NR_COUNTERS; i++)
		j->counters[i] = 2000 + (uint64_t)i;
	j->nr_dumps = 2;
	j->dumps = xcalloc(2, sizeof(*j->dumps));
	j->dumps[0] = (struct bprof_jitdump){ .pid = 100, .exec_id = 1, .len = sizeof(dump) };
	j->dumps[0].data = xcalloc(1, sizeof(dump));
	memcpy(j->dumps[0].data, dump, sizeof(dump));
	j->dumps[1] = (struct bprof_jitdump){ .pid = 200, .exec_id = 1, .len = 3 };
	j->dumps[1].data = xcalloc(1, 3);
	memcpy(j->dumps[1].data, "\xff\x00x", 3); /* any bytes: libsym judges them */
	return r;
}

struct bprof_recording *fx_v8(void)
{
	struct bprof_recording *r = fx_jit();
	struct bprof_v8 *v;

	if (!r)
		return NULL;
	v = &r->v8;
	v->present = 1;
	/* the four counters of the section's first writer (the golden
	 * files keep them; later counters are read as absent) */
	v->nr_counters = FX_V8_COUNTERS;
	for (int i = 0; i < FX_V8_COUNTERS; i++)
		v->counters[i] = 3000 + (uint64_t)i;
	v->nr_procs = 2;
	v->procs = xcalloc(2, sizeof(*v->procs));
	v->procs[0] = (struct bprof_v8_proc){ 100, 1, BPROF_V8_WALKED };
	v->procs[1] = (struct bprof_v8_proc){ 200, 1, BPROF_V8_NO_OFFSETS };
	v->nr_sfis = 2;
	v->sfis = xcalloc(2, sizeof(*v->sfis));
	v->sfis[0] = (struct bprof_v8_sfi){ .pid = 100, .exec_id = 1, .sfi = 0x3f0000001001ull,
					    .guard = 0xcafef00d, .line = 12,
					    .name = fx_strdup("leaf"), .script = fx_strdup("/app/hot.js") };
	/* an anonymous function of an unknown script, run as optimized code
	 * with "leaf" inlined into it from offset 0x40 on */
	v->sfis[1] = (struct bprof_v8_sfi){ .pid = 100, .exec_id = 1, .sfi = 0x3f0000002001ull,
					    .guard = 7, .line = 0,
					    .name = fx_strdup(""), .script = fx_strdup("") };
	v->sfis[1].nr_pos = 2;
	v->sfis[1].pos = xcalloc(2, sizeof(*v->sfis[1].pos));
	v->sfis[1].pos[0] = (struct bprof_v8_pos){ .code_offset = 0, .nr_frames = 1,
						   .frames = xcalloc(1, sizeof(struct bprof_v8_frame)) };
	v->sfis[1].pos[0].frames[0] = (struct bprof_v8_frame){ 3, fx_strdup(""), fx_strdup("") };
	v->sfis[1].pos[1] = (struct bprof_v8_pos){ .code_offset = 0x40, .nr_frames = 2,
						   .frames = xcalloc(2, sizeof(struct bprof_v8_frame)) };
	v->sfis[1].pos[1].frames[0] = (struct bprof_v8_frame){ 4, fx_strdup(""), fx_strdup("") };
	v->sfis[1].pos[1].frames[1] = (struct bprof_v8_frame){ 13, fx_strdup("leaf"),
							       fx_strdup("/app/hot.js") };
	{
		uint64_t ips[] = {
			BPROF_V8_TAG_SFI | 0x3f0000001001ull,
			BPROF_V8_TAG_POS | (uint64_t)0xcafef00d << BPROF_V8_GUARD_SHIFT | 1ull << 22 | 53,
			BPROF_V8_TAG_SFI | 0x3f0000002001ull,
			BPROF_V8_TAG_POS | (uint64_t)7 << BPROF_V8_GUARD_SHIFT | 2ull << 22 | 0x44,
			0x401040,
		};
		struct bprof_stack st = { .id = 0x40000030, .nr_ips = 5, .ips = xcalloc(5, 8) };

		memcpy(st.ips, ips, sizeof(ips));
		if (bprof_recording_add_stack(r, &st))
			abort();
		add_count(r, 100, 0x40000030, -14, 0, 4, "node");
		for (uint64_t k = 0; k + 1 < r->nr_counts; k++)
			if (r->counts[k].state != BPROF_STATE_ON_CPU) {
				struct bprof_count c = r->counts[r->nr_counts - 1];

				memmove(&r->counts[k + 1], &r->counts[k],
					(r->nr_counts - 1 - k) * sizeof(c));
				r->counts[k] = c;
				break;
			}
	}
	return r;
}
