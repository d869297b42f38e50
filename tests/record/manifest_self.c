/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The manifest on a process that is surely alive: this test itself.  Its
 * own executable must come out with its build-id and a mapping covering
 * the code being run; the kernel note parser is checked on a hand-made
 * note stream.
 */
#include "manifest/manifest.h"
#include "kernel.h"

#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The file offset /proc/self/maps gives address at, in a mapping of a
 * file (path begins with '/'); -1 when none maps it. */
static int64_t maps_offset(uint64_t at)
{
	FILE *f = fopen("/proc/self/maps", "r");
	unsigned long long start, end, off;
	char line[4608], path[4096];
	int64_t r = -1;

	cr_assert_not_null(f);
	while (fgets(line, sizeof(line), f)) {
		path[0] = 0;
		if (sscanf(line, "%llx-%llx %*s %llx %*s %*s %4095s", &start, &end, &off, path) >= 3 &&
		    at >= start && at < end && path[0] == '/') {
			r = (int64_t)(off + (at - start));
			break;
		}
	}
	fclose(f);
	return r;
}

static const struct bprof_process *self_process(struct bprof_recording *rec)
{
	for (uint64_t i = 0; i < rec->nr_processes; i++)
		if (rec->processes[i].pid == (uint32_t)getpid())
			return &rec->processes[i];
	return NULL;
}

Test(manifest, snapshot_of_self)
{
	struct manifest *m;
	struct bprof_recording *rec;
	const struct bprof_process *p;
	uint64_t lost = 99, here = (uint64_t)(uintptr_t)&self_process;
	bool found = false;
	unsigned checked = 0;

	cr_assert_eq(manifest_new(&m, -1, -1, 0), 0);
	cr_assert_eq(bprof_recording_create(&rec), 0);
	cr_assert_eq(manifest_event(m, getpid(), 1, getpid(), getppid(), 0, "manifest_self", true), 0);
	cr_assert_eq(manifest_want(m, getpid(), 1, "manifest_self", true, 0), 0);
	cr_assert_eq(manifest_emit(m, rec, &lost), 0);
	cr_expect_eq(lost, 0);
	p = self_process(rec);
	cr_assert_not_null(p);
	cr_expect_eq(p->exec_id, 1);
	cr_expect_gt(p->nr_mappings, 0);
	for (uint32_t i = 0; i < p->nr_mappings; i++) {
		const struct bprof_mapping *mp = &p->mappings[i];

		if (i)
			cr_expect_lt(p->mappings[i - 1].end, mp->start + 1, "sorted, no overlap");
		/* a file's mapping (not the [vdso]): the file offset of its
		 * first and last page exactly as the kernel says (issue 50:
		 * one page off passed) */
		int64_t first = maps_offset(mp->start), last = maps_offset(mp->end - 4096);

		if (mp->object_index != BPROF_NO_OBJECT && first >= 0) {
			cr_expect_eq(first, (int64_t)mp->file_offset, "%#llx: offset %#llx, maps %#llx",
				     (unsigned long long)mp->start, (unsigned long long)mp->file_offset,
				     (unsigned long long)first);
			cr_expect_eq(last, (int64_t)(mp->file_offset + (mp->end - 4096 - mp->start)),
				     "%#llx: last page", (unsigned long long)mp->start);
			checked++;
		}
		if (here >= mp->start && here < mp->end) {
			const struct bprof_object *o;

			cr_assert_neq(mp->object_index, BPROF_NO_OBJECT);
			o = &rec->objects[mp->object_index];
			/* map_files needs CAP_SYS_ADMIN: without it the object
			 * is known by path only */
			if (geteuid() == 0) {
				cr_expect(o->flags & BPROF_OBJ_HAS_BUILD_ID, "%s has a build-id", o->path);
				cr_expect_gt(o->build_id_len, 0);
			} else {
				cr_expect(o->flags & BPROF_OBJ_UNREADABLE);
			}
			found = true;
		}
	}
	cr_expect(found, "a mapping covers this function");
	/* this program, libc, ld.so, criterion at least */
	cr_expect_geq(checked, 3, "%u file mappings checked against /proc/self/maps", checked);
	bprof_recording_free(rec);
	manifest_free(m);
}

Test(manifest, gone_process_is_lost_unless_parent_known)
{
	struct manifest *m;
	struct bprof_recording *rec;
	uint64_t lost = 0;

	cr_assert_eq(manifest_new(&m, -1, -1, 0), 0);
	cr_assert_eq(bprof_recording_create(&rec), 0);
	/* pid 999999999 does not exist: its snapshot must be borrowed from
	 * its parent (this process, same exec_id: never exec'd) */
	cr_assert_eq(manifest_event(m, getpid(), 7, getpid(), getppid(), 0, "parent", true), 0);
	cr_assert_eq(manifest_event(m, 999999999, 7, 5, getpid(), 7, "child", true), 0);
	cr_assert_eq(manifest_want(m, 999999999, 7, "child", true, 0), 0);
	/* and this one exec'd (exec_id != parent_exec_id): lost */
	cr_assert_eq(manifest_event(m, 999999998, 8, 6, getpid(), 7, "execd", true), 0);
	cr_assert_eq(manifest_want(m, 999999998, 8, "execd", true, 0), 0);
	cr_assert_eq(manifest_emit(m, rec, &lost), 0);
	cr_expect_eq(lost, 1);
	cr_assert_eq(rec->nr_processes, 1);
	cr_expect_eq(rec->processes[0].pid, 999999999u);
	cr_expect_eq(rec->processes[0].ns_pid, 5u);
	cr_expect_gt(rec->processes[0].nr_mappings, 0);
	bprof_recording_free(rec);
	manifest_free(m);
}

Test(kernel, notes_build_id)
{
	/* a note we skip, then NT_GNU_BUILD_ID with a 20-byte id */
	unsigned char buf[64] = {0}, out[BPROF_BUILD_ID_MAX];
	uint32_t h1[3] = { 4, 4, 1 }, h2[3] = { 4, 20, 3 };

	memcpy(buf, h1, 12);
	memcpy(buf + 12, "Xen", 4);
	memcpy(buf + 20, h2, 12);
	memcpy(buf + 32, "GNU", 4);
	for (int i = 0; i < 20; i++)
		buf[36 + i] = i + 1;
	cr_assert_eq(notes_build_id(buf, 56, out), 20);
	cr_expect_eq(out[0], 1);
	cr_expect_eq(out[19], 20);
	cr_expect_eq(notes_build_id(buf, 40, out), 0, "truncated note is refused");
}

static int cmp_ksym_test(const void *a, const void *b)
{
	const struct bprof_ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* kernel_sort_ksyms gives qsort's order on what /proc/kallsyms looks like:
 * a run in address order with aliases in any name order, then symbols in
 * any order (some inside the run's range, some equal to its addresses). */
Test(kernel, sort_ksyms_is_qsort)
{
	enum { RUN = 3000, TAIL = 1500 };
	static char names[RUN + TAIL][16];
	static struct bprof_ksym a[RUN + TAIL], b[RUN + TAIL];
	uint64_t addr = 0xffffffff81000000ull;
	unsigned seed = 12345;

	for (int round = 0; round < 4; round++) {
		uint32_t n = round == 3 ? RUN : RUN + TAIL; /* the last: no tail */

		for (uint32_t i = 0; i < n; i++) {
			seed = seed * 1103515245u + 12345u;
			if (i < RUN) {
				if (seed % 4) /* one in four: an alias of the one before */
					addr += 16 + seed % 64;
			} else {
				addr = 0xffffffff81000000ull + (seed >> 8) % (RUN * 48);
				if (seed % 3 == 0)
					addr = 0xffffffffa0000000ull + seed % 100000;
			}
			snprintf(names[i], sizeof(names[i]), "f%u", (seed >> 4) % 997);
			a[i] = (struct bprof_ksym){ .addr = addr, .name = names[i] };
		}
		memcpy(b, a, n * sizeof(*a));
		cr_assert_eq(kernel_sort_ksyms(a, n), 0);
		qsort(b, n, sizeof(*b), cmp_ksym_test);
		for (uint32_t i = 0; i < n; i++)
			cr_assert(a[i].addr == b[i].addr && !strcmp(a[i].name, b[i].name),
				  "round %d: symbol %u differs", round, i);
		addr = 0xffffffff81000000ull;
	}
}
