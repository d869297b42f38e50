// SPDX-License-Identifier: Apache-2.0
/*
 * record/perfmap.c on this very process: its /tmp/perf-PID.map written,
 * grown, capped, replaced and planted by the test, and a jitdump it maps
 * executable as a JIT does.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "perfmap.h"

static char path[64];

static void setup(void)
{
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", getpid());
	unlink(path);
}

static void teardown(void)
{
	unlink(path);
}

static void append(const char *text)
{
	FILE *f = fopen(path, "a");

	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
}

static struct perfmap_dirs *dirs(size_t per_image, size_t total)
{
	struct perfmap_limits lim = { per_image, total, 4 };
	struct perfmap_dirs *d;

	cr_assert_eq(perfmap_dirs_new(&d, &lim), 0);
	return d;
}

static bool kept(const struct perfmap_copy *c, const char *want)
{
	return c->len == strlen(want) && !memcmp(c->text, want, c->len);
}

TestSuite(perfmap, .init = setup, .fini = teardown);

Test(perfmap, reads_only_new_complete_lines_then_the_rest_at_the_end)
{
	struct perfmap_dirs *d = dirs(1 << 20, 1 << 20);
	struct perfmap_copy c = { 0 };
	struct perfmap_stats st;

	cr_assert_eq(perfmap_update(d, &c, getpid(), 0, false), 0);
	cr_assert_eq(c.len, 0, "no file yet: nothing, no error");
	append("1000 10 a\n2000 10 b\n3000 10 par");
	cr_assert_eq(perfmap_update(d, &c, getpid(), 0, false), 0);
	cr_assert(kept(&c, "1000 10 a\n2000 10 b\n"), "a line being written waits");
	append("tial\n4000 10 d");
	cr_assert_eq(perfmap_update(d, &c, getpid(), 0, false), 0);
	cr_assert(kept(&c, "1000 10 a\n2000 10 b\n3000 10 partial\n"));
	/* the image ends: everything, terminated, and never again */
	cr_assert_eq(perfmap_update(d, &c, getpid(), 0, true), 0);
	cr_assert(kept(&c, "1000 10 a\n2000 10 b\n3000 10 partial\n4000 10 d\n"));
	append("\n5000 10 e\n");
	cr_assert_eq(perfmap_update(d, &c, getpid(), 0, false), 0);
	cr_assert_eq(perfmap_update(d, &c, getpid(), 0, true), 0);
	cr_assert(kept(&c, "1000 10 a\n2000 10 b\n3000 10 partial\n4000 10 d\n"));
	perfmap_stats(d, &st);
	cr_assert_eq(st.final, 1);
	cr_assert_eq(st.bytes, c.len);
	perfmap_copy_release(d, &c);
	perfmap_stats(d, &st);
	cr_assert_eq(st.bytes, 0);
	perfmap_dirs_free(d);
}

Test(perfmap, read_through_the_kept_tmp_after_the_path_is_gone)
{
	struct perfmap_dirs *d = dirs(1 << 20, 1 << 20);
	struct perfmap_copy c = { 0 };

	append("1000 10 a\n");
	cr_assert_eq(perfmap_update(d, &c, getpid(), 0, false), 0);
	cr_assert_neq(c.dir, 0, "the process's /tmp is kept open");
	append("2000 10 b\n");
	/* a pid that is not ours: the path through /proc would fail, the
	 * kept directory does not need it */
	cr_assert_eq(perfmap_update(d, &c, 0x7ffffff0, getpid(), true), 0);
	cr_assert(kept(&c, "1000 10 a\n2000 10 b\n"));
	perfmap_copy_release(d, &c);
	perfmap_dirs_free(d);
}

Test(perfmap, caps_per_image_and_in_all_cut_at_a_line)
{
	struct perfmap_dirs *d = dirs(25, 40);
	struct perfmap_copy a = { 0 }, b = { 0 };
	struct perfmap_stats st;

	append("1000 10 aaaa\n2000 10 bbbb\n3000 10 cccc\n"); /* 3 x 13 bytes */
	cr_assert_eq(perfmap_update(d, &a, getpid(), 0, false), 0);
	cr_assert(kept(&a, "1000 10 aaaa\n"), "25 bytes hold one line of 13, not two");
	cr_assert(a.capped);
	perfmap_stats(d, &st);
	cr_assert_eq(st.capped, 1);
	cr_assert_eq(st.dropped, 26);
	append("4000 10 dddd\n");
	cr_assert_eq(perfmap_update(d, &a, getpid(), 0, false), 0);
	perfmap_stats(d, &st);
	cr_assert_eq(st.dropped, 39, "growth past the cap is counted once");
	cr_assert_eq(st.capped, 1);
	/* a second image: 40 in all leaves 27, two lines */
	cr_assert_eq(perfmap_update(d, &b, getpid(), 0, false), 0);
	cr_assert(kept(&b, "1000 10 aaaa\n"), "per image cap first (25)");
	perfmap_stats(d, &st);
	cr_assert_eq(st.bytes, 26);
	perfmap_copy_release(d, &a);
	perfmap_copy_release(d, &b);
	perfmap_dirs_free(d);
}

Test(perfmap, refuses_links_fifos_and_stale_files)
{
	struct perfmap_dirs *d = dirs(1 << 20, 1 << 20);
	struct perfmap_copy c = { 0 }, c2 = { 0 }, c3 = { 0 };
	struct perfmap_stats st;
	struct timespec old[2] = { { 946684800, 0 }, { 946684800, 0 } }; /* 2000-01-01 */

	cr_assert_eq(symlink("/etc/hostname", path), 0);
	cr_assert_eq(perfmap_update(d, &c, getpid(), 0, false), 0);
	cr_assert_eq(c.len, 0, "a symlink in /tmp is not followed");
	unlink(path);
	cr_assert_eq(mkfifo(path, 0600), 0);
	cr_assert_eq(perfmap_update(d, &c2, getpid(), 0, false), 0);
	cr_assert_eq(c2.len, 0, "a FIFO is not read (nor waited on)");
	unlink(path);
	append("1000 10 left_by_an_earlier_process\n");
	cr_assert_eq(utimensat(AT_FDCWD, path, old, 0), 0);
	cr_assert_eq(perfmap_update(d, &c3, getpid(), 0, false), 0);
	cr_assert_eq(c3.len, 0, "older than the process: not its map");
	/* another user's file, where this process is root's */
	struct perfmap_copy c4 = { 0 };
	unlink(path);
	append("1000 10 planted\n");
	if (geteuid() == 0) {
		cr_assert_eq(chown(path, 12345, 12345), 0);
		cr_assert_eq(perfmap_update(d, &c4, getpid(), 0, false), 0);
		cr_assert_eq(c4.len, 0, "owned by neither the process's user nor root");
	}
	perfmap_stats(d, &st);
	cr_assert_eq(st.refused, geteuid() == 0 ? 4 : 3);
	perfmap_copy_release(d, &c4);
	/* a fresh file is taken */
	unlink(path);
	append("1000 10 mine\n");
	cr_assert_eq(perfmap_update(d, &c3, getpid(), 0, false), 0);
	cr_assert(kept(&c3, "1000 10 mine\n"));
	perfmap_copy_release(d, &c);
	perfmap_copy_release(d, &c2);
	perfmap_copy_release(d, &c3);
	perfmap_dirs_free(d);
}

Test(perfmap, a_replaced_file_is_appended_not_swapped)
{
	struct perfmap_dirs *d = dirs(1 << 20, 1 << 20);
	struct perfmap_copy c = { 0 };
	struct perfmap_stats st;

	append("1000 10 first\n2000 10 second\n");
	cr_assert_eq(perfmap_update(d, &c, getpid(), 0, false), 0);
	unlink(path);
	append("3000 10 third\n");
	cr_assert_eq(perfmap_update(d, &c, getpid(), 0, false), 0);
	cr_assert(kept(&c, "1000 10 first\n2000 10 second\n3000 10 third\n"));
	perfmap_stats(d, &st);
	cr_assert_eq(st.replaced, 1);
	/* rewritten in place, longer than before (as jcmd Compiler.perfmap
	 * does): not taken for growth */
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs("4000 10 fourth\n5000 10 fifth\n6000 10 sixth\n", f);
	fclose(f);
	cr_assert_eq(perfmap_update(d, &c, getpid(), 0, false), 0);
	cr_assert(kept(&c, "1000 10 first\n2000 10 second\n3000 10 third\n"
			   "4000 10 fourth\n5000 10 fifth\n6000 10 sixth\n"));
	perfmap_stats(d, &st);
	cr_assert_eq(st.replaced, 2);
	/* and plain growth is still growth */
	append("7000 10 seventh\n");
	cr_assert_eq(perfmap_update(d, &c, getpid(), 0, false), 0);
	perfmap_stats(d, &st);
	cr_assert_eq(st.replaced, 2);
	cr_assert_eq(c.len, strlen("1000 10 first\n2000 10 second\n3000 10 third\n4000 10 fourth\n"
				   "5000 10 fifth\n6000 10 sixth\n7000 10 seventh\n"));
	perfmap_copy_release(d, &c);
	perfmap_dirs_free(d);
}

/* ---- jitdump ---- */

static void w32(int fd, uint32_t v) { cr_assert_eq(write(fd, &v, 4), 4); }
static void w64(int fd, uint64_t v) { cr_assert_eq(write(fd, &v, 8), 8); }

static void load(int fd, uint64_t ts, uint64_t addr, const char *name, size_t code)
{
	size_t nl = strlen(name) + 1;
	char cc[256];

	memset(cc, 0xcc, sizeof(cc));
	w32(fd, 0);
	w32(fd, (uint32_t)(16 + 40 + nl + code));
	w64(fd, ts);
	w32(fd, 1);
	w32(fd, 1);
	w64(fd, addr);
	w64(fd, addr);
	w64(fd, 0x100);
	w64(fd, 1);
	cr_assert_eq(write(fd, name, nl), (ssize_t)nl);
	cr_assert_eq(write(fd, cc, code), (ssize_t)code);
}

Test(perfmap, jitdump_found_by_its_mapping_read_as_it_grows_code_stripped)
{
	struct perfmap_dirs *d = dirs(1 << 20, 1 << 20);
	struct perfmap_dump j = { 0 };
	struct perfmap_stats st;
	char jp[64];
	int fd;
	void *m;

	snprintf(jp, sizeof(jp), "/tmp/jit-%d.dump", getpid());
	cr_assert(perfmap_is_jitdump(jp));
	cr_assert_not(perfmap_is_jitdump("/tmp/jit-.dump"));
	cr_assert_not(perfmap_is_jitdump("/tmp/jit-12.dump.old"));
	fd = open(jp, O_RDWR | O_CREAT | O_TRUNC, 0600);
	cr_assert_geq(fd, 0);
	cr_assert_eq(ftruncate(fd, 4096), 0); /* room to map, as V8 maps it first */
	m = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	cr_assert_neq(m, MAP_FAILED);
	cr_assert_eq(ftruncate(fd, 0), 0);
	/* found before its header is written: waits for it */
	cr_assert_eq(perfmap_dump_found(d, &j, getpid(), (uintptr_t)m, (uintptr_t)m + 4096, jp), 0);
	cr_assert(j.open);
	cr_assert_eq(j.len, 0);
	w32(fd, 0x4A695444);
	w32(fd, 1);
	w32(fd, 40);
	w32(fd, 62);
	w32(fd, 0);
	w32(fd, (uint32_t)getpid());
	w64(fd, 1);
	w64(fd, 0);
	load(fd, 10, 0x1000, "f", 200);
	w32(fd, 0); /* a record still being written */
	w32(fd, 16 + 40 + 2 + 100);
	cr_assert_eq(perfmap_dump_update(d, &j, false), 0);
	cr_assert_eq(j.len, 40 + 16 + 40 + 2, "header and f's load without its code");
	cr_assert_eq(j.data[44], 16 + 40 + 2, "total_size says what is kept");
	w64(fd, 20);
	w32(fd, 1);
	w32(fd, 1);
	w64(fd, 0x2000);
	w64(fd, 0x2000);
	w64(fd, 0x100);
	w64(fd, 2);
	cr_assert_eq(write(fd, "g", 2), 2);
	char code[100];
	memset(code, 0xcc, sizeof(code));
	cr_assert_eq(write(fd, code, sizeof(code)), (ssize_t)sizeof(code));
	w32(fd, 4); /* unwinding info: not kept */
	w32(fd, 16 + 24);
	w64(fd, 30);
	w64(fd, 0);
	w64(fd, 0);
	w64(fd, 0);
	cr_assert_eq(perfmap_dump_update(d, &j, true), 0);
	cr_assert_eq(j.len, 40 + 2 * (16 + 40 + 2));
	cr_assert_not(j.open);
	perfmap_stats(d, &st);
	cr_assert_eq(st.jd_stripped, 300);
	cr_assert_eq(st.jd_bytes, j.len);
	perfmap_dump_release(d, &j);
	munmap(m, 4096);
	close(fd);
	unlink(jp);
	perfmap_dirs_free(d);
}

Test(perfmap, jitdump_with_a_foreign_magic_is_refused)
{
	struct perfmap_dirs *d = dirs(1 << 20, 1 << 20);
	struct perfmap_dump j = { 0 };
	struct perfmap_stats st;
	char jp[64];
	int fd;

	snprintf(jp, sizeof(jp), "/tmp/jit-%d.dump", getpid());
	fd = open(jp, O_RDWR | O_CREAT | O_TRUNC, 0600);
	cr_assert_geq(fd, 0);
	for (int i = 0; i < 20; i++)
		w32(fd, 0x44546949); /* byte-swapped magic and junk */
	cr_assert_eq(perfmap_dump_found(d, &j, getpid(), 1, 2, jp), 0);
	cr_assert_eq(perfmap_dump_update(d, &j, false), 0);
	cr_assert_not(j.open);
	cr_assert_eq(j.len, 0);
	perfmap_stats(d, &st);
	cr_assert_eq(st.jd_refused, 1);
	perfmap_dump_release(d, &j);
	close(fd);
	unlink(jp);
	perfmap_dirs_free(d);
}
