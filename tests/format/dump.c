/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bprof-dump's output is a contract (end-to-end tests parse it): the dump
 * of each golden file must match tests/data/format/valid/NAME.dump byte
 * for byte, and errors and usage must go to stderr with exit 1 and 2.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#ifndef BPROF_DUMP_PATH
#error "BPROF_DUMP_PATH must name the bprof-dump binary"
#endif

static char *run(const char *args, int *status)
{
	char cmd[8192], *out = NULL;
	size_t len = 0, cap = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "'%s' %s", BPROF_DUMP_PATH, args);
	p = popen(cmd, "r");
	cr_assert_not_null(p);
	for (;;) {
		if (len + 4096 > cap) {
			cap = cap ? cap * 2 : 65536;
			out = realloc(out, cap);
		}
		size_t n = fread(out + len, 1, cap - len - 1, p);

		if (n == 0)
			break;
		len += n;
	}
	out[len] = '\0';
	*status = pclose(p);
	return out;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	cr_assert_not_null(f, "%s", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void expect_dump(const char *name, const char *flags)
{
	const char *data = getenv("BPROF_TEST_DATA");
	char args[4096], path[4096];
	char *got, *want;
	int status;

	cr_assert_not_null(data);
	snprintf(args, sizeof(args), "%s '%s/format/valid/%s.bprof'", flags, data, name);
	snprintf(path, sizeof(path), "%s/format/valid/%s.dump", data, name);
	got = run(args, &status);
	want = slurp(path);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: status %d", name, status);
	cr_assert_str_eq(got, want, "%s: dump differs from %s", name, path);
	free(got);
	free(want);
}

Test(dump, typical_with_ksyms)
{
	expect_dump("typical", "--ksyms");
}

Test(dump, odd_strings_are_escaped)
{
	expect_dump("odd-strings", "");
}

Test(dump, empty)
{
	expect_dump("empty", "");
}

Test(dump, error_goes_to_stderr_exit_1)
{
	const char *data = getenv("BPROF_TEST_DATA");
	char args[4096], want[4096];
	char *got;
	int status;

	snprintf(args, sizeof(args), "'%s/format/invalid/dangling-user-stack-id.bprof' 2>&1 >/dev/null",
		 data);
	got = run(args, &status);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 1, "status %d", status);
	snprintf(want, sizeof(want),
		 "bprof-dump: %s/format/invalid/dangling-user-stack-id.bprof: counts section at offset 502: count 0: user stack id 3 does not exist\n",
		 data);
	cr_assert_str_eq(got, want);
	free(got);
}

Test(dump, usage_exit_2)
{
	int status;
	char *got = run("2>&1", &status);

	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 2);
	cr_assert_neq(strstr(got, "usage:"), NULL);
	free(got);
	got = run("--bogus x 2>&1", &status);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 2);
	free(got);
}
