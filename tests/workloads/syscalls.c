// SPDX-License-Identifier: Apache-2.0
/* syscalls DURATION: read /dev/zero, write /dev/null in a tight loop, so
 * most samples land in the kernel. */
#include <fcntl.h>
#include <unistd.h>
#include "common.h"

NOINLINE static void copy_loop(int in, int out, double deadline)
{
	static char buf[65536];
	unsigned n = 0;

	KEEP_FRAME();
	for (;;) {
		if (read(in, buf, sizeof(buf)) < 0 || write(out, buf, sizeof(buf)) < 0) {
			perror("syscalls");
			exit(1);
		}
		if (!(++n & 255) && now_s() >= deadline)
			break;
	}
}

int main(int argc, char **argv)
{
	double dur = arg_seconds(argc, argv, 1, 5);
	int in = open("/dev/zero", O_RDONLY), out = open("/dev/null", O_WRONLY);

	if (in < 0 || out < 0) {
		perror("syscalls: open");
		return 1;
	}
	copy_loop(in, out, now_s() + dur);
	return 0;
}
