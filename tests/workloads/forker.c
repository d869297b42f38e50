// SPDX-License-Identifier: Apache-2.0
/*
 * forker DURATION: fork short-lived children (~20 ms of CPU in child_work)
 * one after the other; every third child execs forker-helper (found next to
 * this binary) instead, which burns ~20 ms in helper_work.  Process churn for
 * the manifest tests.  Prints the number of children on stdout.
 */
#include <limits.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "common.h"

NOINLINE unsigned long child_work(double secs)
{
	double end = now_s() + secs;
	unsigned long sink = 0;

	KEEP_FRAME();
	while (now_s() < end)
		sink += spin_units(10);
	return sink;
}

int main(int argc, char **argv)
{
	double deadline = now_s() + arg_seconds(argc, argv, 1, 5);
	char helper[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", helper, sizeof(helper) - 32);
	unsigned long children = 0;

	if (n <= 0) {
		perror("forker: readlink");
		return 1;
	}
	helper[n] = 0;
	strcpy(strrchr(helper, '/') + 1, "forker-helper");
	while (now_s() < deadline) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("forker: fork");
			return 1;
		}
		if (pid == 0) {
			if (children % 3 == 2) {
				execl(helper, "forker-helper", "0.02", (char *)NULL);
				perror("forker: exec forker-helper");
				_exit(127);
			}
			child_work(0.02);
			_exit(0);
		}
		waitpid(pid, NULL, 0);
		children++;
	}
	printf("%lu\n", children);
	return 0;
}
