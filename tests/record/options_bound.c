// SPDX-License-Identifier: Apache-2.0
/*
 * options_bound.c - opts_samples_bound (record/options.c): the bound that
 * sizes the per-sample maps must hold every sample a file can count, and
 * must be 0 (no bound: the defaults) whenever the length is unknown.
 */
#include "options.h"
#include <criterion/criterion.h>
#include <unistd.h>

static int parse(struct env *env, char **argv)
{
	int argc = 0;

	while (argv[argc])
		argc++;
	return opts_parse(env, argc, argv);
}

Test(options_bound, duration_on_one_cpu)
{
	struct env env;
	char *argv[] = { "prof-record", "-F", "99", "-C", "0", "10", NULL };

	cr_assert_eq(parse(&env, argv), 0);
	/* 99 Hz x (10 + 2) s x 1 CPU = 1188, plus a quarter, plus 1024 */
	cr_assert_eq(opts_samples_bound(&env), 1188 + 297 + 1024);
	cr_assert_geq(opts_samples_bound(&env), 99 * 10);
}

Test(options_bound, every_cpu)
{
	struct env env;
	char *argv[] = { "prof-record", "-F", "999", "30", NULL };
	long cpus = sysconf(_SC_NPROCESSORS_CONF);

	cr_assert_eq(parse(&env, argv), 0);
	cr_assert_geq(opts_samples_bound(&env), 999 * 32 * cpus);
}

Test(options_bound, rotate_interval_not_duration)
{
	struct env env;
	char *argv[] = { "prof-record", "-F", "99", "-C", "1", "--rotate=5", "-o", "d", "600",
			 NULL };

	cr_assert_eq(parse(&env, argv), 0);
	/* per file: the interval, not the whole recording */
	cr_assert_eq(opts_samples_bound(&env), 99 * 7 + 99 * 7 / 4 + 1024);
}

Test(options_bound, unbounded)
{
	struct env env;
	char *cmd[] = { "prof-record", "-F", "99", "--", "true", NULL };
	char *sig[] = { "prof-record", "-F", "99", NULL };

	cr_assert_eq(parse(&env, cmd), 0);
	cr_assert_eq(opts_samples_bound(&env), 0, "a command runs as long as it runs");
	cr_assert_eq(parse(&env, sig), 0);
	cr_assert_eq(opts_samples_bound(&env), 0, "until a signal");
	env.duration = 10;
	env.period = 1000000;
	cr_assert_eq(opts_samples_bound(&env), 0, "a period, not a frequency");
	env.period = 0;
	env.freq = 1L << 40;
	cr_assert_eq(opts_samples_bound(&env), 0, "overflow is no bound");
}
