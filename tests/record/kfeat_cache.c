// SPDX-License-Identifier: Apache-2.0
/*
 * record/kfeat.c's kept answers: what one start writes the next reads
 * back whole, and nothing else is taken: another boot's or kernel's file,
 * a version it does not know, a line cut short or with more after it, a
 * feature bit it does not have, negative ids, a file or directory others
 * may write, a symbolic link.  The ownership checks need root, as
 * prof-record does.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include "kfeat.h"

static char dir[64], path[128];

static void setup(void)
{
	if (geteuid() != 0)
		cr_skip_test("needs root: the kept answers are root's only");
	snprintf(dir, sizeof(dir), "/tmp/bprof-kfeat.XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/kfeat", dir);
}

static void teardown(void)
{
	char tmp[160];

	snprintf(tmp, sizeof(tmp), "rm -rf '%s'", dir);
	if (dir[0] && system(tmp))
		fprintf(stderr, "cannot remove %s\n", dir);
}

static const struct kfeat some = { .has = { true, false, true, true, false, true, true, false } };
static const struct kfeat_extra extra = { .ids = { 120575, 64275, 16279, 0 }, .fexit_ok = true };

/* path's line with its fields as this boot writes them */
static void boot_line(char *out, size_t size)
{
	struct kfeat kf;
	struct kfeat_extra x;

	cr_assert_eq(kfeat_cache_write(path, &some, &extra), 0);
	FILE *f = fopen(path, "r");
	cr_assert_not_null(f);
	cr_assert_not_null(fgets(out, (int)size, f));
	fclose(f);
	cr_assert(kfeat_cache_read(path, &kf, &x));
}

static void put(const char *text)
{
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
	chmod(path, 0644);
}

static bool taken(void)
{
	struct kfeat kf;
	struct kfeat_extra x;

	return kfeat_cache_read(path, &kf, &x);
}

TestSuite(kfeat_cache, .init = setup, .fini = teardown);

Test(kfeat_cache, round_trip)
{
	struct kfeat kf;
	struct kfeat_extra x;

	cr_assert_eq(kfeat_cache_write(path, &some, &extra), 0);
	cr_assert(kfeat_cache_read(path, &kf, &x));
	cr_assert_arr_eq(kf.has, some.has, sizeof(some.has));
	cr_assert_arr_eq(x.ids, extra.ids, sizeof(extra.ids));
	cr_assert(x.fexit_ok);
}

Test(kfeat_cache, missing_file)
{
	cr_assert_not(taken());
}

Test(kfeat_cache, another_boot_or_kernel)
{
	char line[512], bad[1100], *boot, *rel;

	boot_line(line, sizeof(line));
	/* "bprof-kfeat 1 BOOT RELEASE ..." */
	boot = strchr(strchr(line, ' ') + 1, ' ') + 1;
	rel = strchr(boot, ' ') + 1;
	snprintf(bad, sizeof(bad), "%.*s00000000-0000-0000-0000-000000000000 %s", (int)(boot - line), line, rel);
	put(bad);
	cr_assert_not(taken(), "another boot's: %s", bad);
	snprintf(bad, sizeof(bad), "%.*s0.0.1-other %s", (int)(rel - line), line, strchr(rel, ' ') + 1);
	put(bad);
	cr_assert_not(taken(), "another kernel's: %s", bad);
}

Test(kfeat_cache, malformed)
{
	char line[512], bad[1100];
	size_t n;

	boot_line(line, sizeof(line));
	n = strlen(line);
	/* cut short, field by field */
	for (size_t cut = 0; cut + 1 < n; cut++) {
		snprintf(bad, sizeof(bad), "%.*s\n", (int)cut, line);
		put(bad);
		cr_assert_not(taken(), "cut at %zu: %s", cut, bad);
	}
	/* no newline; more after it */
	snprintf(bad, sizeof(bad), "%.*s", (int)(n - 1), line);
	put(bad);
	cr_assert_not(taken());
	snprintf(bad, sizeof(bad), "%s%s", line, line);
	put(bad);
	cr_assert_not(taken());
	snprintf(bad, sizeof(bad), "%.*s 7\n", (int)(n - 1), line);
	put(bad);
	cr_assert_not(taken());
	/* another version, an unknown feature bit, a negative id */
	snprintf(bad, sizeof(bad), "bprof-kfeat 2%s", strchr(line + 12, ' '));
	put(bad);
	cr_assert_not(taken());
	put("garbage\n");
	cr_assert_not(taken());
	put("");
	cr_assert_not(taken());
}

Test(kfeat_cache, fields_out_of_range)
{
	struct kfeat_extra neg = extra;
	struct kfeat all = { 0 };
	char line[512], bad[1100], *p;
	int field = 0;

	neg.ids[1] = -5;
	cr_assert_eq(kfeat_cache_write(path, &all, &neg), 0);
	cr_assert_not(taken(), "a negative id");
	boot_line(line, sizeof(line));
	/* the feature bits (field 5) with one it does not know */
	for (p = line; *p && field < 4; p++)
		field += *p == ' ';
	snprintf(bad, sizeof(bad), "%.*s%x%s", (int)(p - line), line, 1u << KFEAT_NR, strchr(p, ' '));
	put(bad);
	cr_assert_not(taken(), "an unknown feature bit: %s", bad);
	/* fexit (field 6) neither 0 nor 1 */
	p = strchr(p, ' ') + 1;
	snprintf(bad, sizeof(bad), "%.*s2%s", (int)(p - line), line, strchr(p, ' '));
	put(bad);
	cr_assert_not(taken(), "fexit 2: %s", bad);
}

Test(kfeat_cache, others_may_write)
{
	char line[512];

	boot_line(line, sizeof(line));
	chmod(path, 0666);
	cr_assert_not(taken(), "a file others may write");
	chmod(path, 0644);
	cr_assert(taken());
	chmod(dir, 0777);
	cr_assert_not(taken(), "in a directory others may write");
	chmod(dir, 0700);
	cr_assert(taken());
	cr_assert_eq(chown(path, 65534, 65534), 0);
	cr_assert_not(taken(), "another user's file");
}

Test(kfeat_cache, symlink)
{
	char line[512], real[160];

	boot_line(line, sizeof(line));
	snprintf(real, sizeof(real), "%s/real", dir);
	cr_assert_eq(rename(path, real), 0);
	cr_assert_eq(symlink(real, path), 0);
	cr_assert_not(taken(), "a symbolic link");
}

Test(kfeat_cache, none_and_path)
{
	setenv("BPROF_KFEAT_CACHE", "none", 1);
	cr_assert_null(kfeat_cache_path());
	setenv("BPROF_KFEAT_CACHE", path, 1);
	cr_assert_str_eq(kfeat_cache_path(), path);
	unsetenv("BPROF_KFEAT_CACHE");
	cr_assert_str_eq(kfeat_cache_path(), KFEAT_CACHE_PATH);
}
