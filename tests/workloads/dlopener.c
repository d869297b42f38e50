// SPDX-License-Identifier: Apache-2.0
/*
 * dlopener DURATION: burn ~1 s in main_work, then dlopen libdlwork.so (next
 * to this binary) and burn the rest of DURATION in its dl_work: the library
 * is mapped only after the recording started.  Seconds of the thread's CPU
 * time, not of wall time: a busy machine makes the run longer, not poorer
 * in samples.  With DLOPENER_GO=FILE, main_work runs until FILE exists
 * instead (the test says when the recording has started).
 */
#include <dlfcn.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>
#include "common.h"

NOINLINE unsigned long main_work(double secs, const char *go)
{
	double end = thread_cpu_s() + secs;
	unsigned long sink = 0;

	KEEP_FRAME();
	while (go ? access(go, F_OK) != 0 : thread_cpu_s() < end)
		sink += spin_units(20);
	return sink;
}

int main(int argc, char **argv)
{
	double dur = arg_seconds(argc, argv, 1, 5), start = thread_cpu_s();
	char path[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 32);
	unsigned long (*work)(double);
	void *h;

	if (n <= 0) {
		perror("dlopener: readlink");
		return 1;
	}
	path[n] = 0;
	strcpy(strrchr(path, '/') + 1, "libdlwork.so");
	main_work(dur < 1 ? dur : 1, getenv("DLOPENER_GO"));
	h = dlopen(path, RTLD_NOW);
	if (!h) {
		fprintf(stderr, "dlopener: %s\n", dlerror());
		return 1;
	}
	*(void **)&work = dlsym(h, "dl_work");
	if (!work) {
		fprintf(stderr, "dlopener: %s\n", dlerror());
		return 1;
	}
	work(dur - (thread_cpu_s() - start));
	return 0;
}
