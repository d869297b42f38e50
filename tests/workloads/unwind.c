// SPDX-License-Identifier: Apache-2.0
/*
 * unwind SECONDS MODE...: stack shapes a frame-pointer walk cannot follow,
 * for the .eh_frame unwinder's end-to-end test (tests/report/unwind.sh).
 * Built several ways (tests/workloads/CMakeLists.txt): gcc and clang with
 * -O2 -fomit-frame-pointer as distros build, a static PIE, and a
 * frame-pointer build.  Each MODE runs SECONDS of the process's CPU time
 * (not of wall time: a busy machine makes the run longer, not poorer in
 * samples) in a function named after it, so the report can check each
 * chain (the two threads of "threads" share its SECONDS):
 *
 *   qsort    main;mode_qsort;qsort (libc, no frame pointers);cmp_u64
 *   recurse  main;mode_recurse;recurse x RECURSE_DEPTH;recurse_leaf
 *   threads  start_thread;thread_main;thread_spin (two threads)
 *   signal   main;mode_signal;signal_wait;__restore_rt;on_alarm;handler_spin
 *   plt      main;mode_plt;plt_loop;strtoul (through the PLT)
 *   dlopen   main;mode_dlopen;uw_dl_work;uw_dl_leaf (libuwdl.so, opened late)
 *   leaf     main;mode_leaf;leaf_caller;leaf_fn (a leaf that sets up no frame)
 *   deep     main;mode_deep;deep_a;deep_rec x DEEP_DEPTH;deep_leaf, then the
 *            same under deep_b: two stacks that differ only ~200 frames
 *            below their leaf (tests/report/deep_stacks.sh)
 *   churn    main;mode_churn;churn_outer;churn_inner;churn_leaf while a
 *            second thread maps, re-protects and unmaps anonymous
 *            executable pages (a JIT's code churn) thousands of times a
 *            second (tests/record/churn.sh); it prints its count of
 *            changes on stderr at the end
 *
 * Every named function is kept out of line and out of interprocedural
 * cloning, so the names in the stacks are exactly these.
 */
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>
#include "common.h"

#ifdef __clang__
#define KEEP __attribute__((noinline))
#else
#define KEEP __attribute__((noipa))
#endif

#define RECURSE_DEPTH 40

static volatile unsigned long sink;

/* ---- qsort: the comparison runs under libc's frameless sort ---- */

KEEP static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

KEEP static void mode_qsort(double secs)
{
	enum { N = 4096 };
	static uint64_t v[N];
	double end = process_cpu_s() + secs;
	uint64_t seed = 88172645463325252ull;

	while (process_cpu_s() < end) {
		for (int i = 0; i < N; i++) {
			seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
			v[i] = seed;
		}
		qsort(v, N, sizeof(v[0]), cmp_u64);
	}
	sink += v[0];
}

/* ---- recurse: 40 frames deep, none with a frame pointer ---- */

KEEP static unsigned long recurse_leaf(double end)
{
	unsigned long acc = 0;

	while (process_cpu_s() < end)
		acc += spin_units(20);
	return acc;
}

KEEP static unsigned long recurse(int depth, double end)
{
	unsigned long r;

	r = depth ? recurse(depth - 1, end) : recurse_leaf(end);
	sink += r; /* work after the calls: no tail call, no loop */
	return r + 1;
}

KEEP static void mode_recurse(double secs)
{
	double end = process_cpu_s() + secs;

	while (process_cpu_s() < end)
		recurse(RECURSE_DEPTH - 1, end);
}

/* ---- deep: two chains that differ only at their root end ---- */

#define DEEP_DEPTH 200

KEEP static unsigned long deep_leaf(double end)
{
	unsigned long acc = 0;

	while (process_cpu_s() < end)
		acc += spin_units(20);
	return acc;
}

KEEP static unsigned long deep_rec(int depth, double end)
{
	unsigned long r;

	r = depth ? deep_rec(depth - 1, end) : deep_leaf(end);
	sink += r; /* no tail call, no loop */
	return r + 1;
}

KEEP static void deep_a(double end)
{
	while (process_cpu_s() < end)
		sink += deep_rec(DEEP_DEPTH - 1, end);
}

KEEP static void deep_b(double end) /* not deep_a's code: never folded into it */
{
	while (process_cpu_s() < end)
		sink ^= deep_rec(DEEP_DEPTH - 1, end);
}

KEEP static void mode_deep(double secs)
{
	double half = process_cpu_s() + secs / 2;

	deep_a(half);
	deep_b(half + secs / 2);
	sink++; /* no tail call: both chains equally long, only their root differs */
}

/* ---- threads: stacks that start in clone3/start_thread ---- */

KEEP static unsigned long thread_spin(double end)
{
	unsigned long acc = 0;

	while (process_cpu_s() < end)
		acc += spin_units(20);
	return acc;
}

KEEP static void *thread_main(void *arg)
{
	sink += thread_spin(*(double *)arg);
	return NULL;
}

KEEP static void mode_threads(double secs)
{
	double end = process_cpu_s() + secs;
	pthread_t t[2];

	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, thread_main, &end)) {
			fprintf(stderr, "unwind: pthread_create failed\n");
			exit(1);
		}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
}

/* ---- signal: work in a handler, below the kernel's signal frame ---- */

KEEP static void handler_spin(void)
{
	double end = now_s() + 0.001; /* a millisecond of the wall: one tick */

	while (now_s() < end)
		sink += spin_units(5);
}

KEEP static void on_alarm(int sig)
{
	(void)sig;
	handler_spin();
}

KEEP static void signal_wait(double end)
{
	while (process_cpu_s() < end) /* a system call: not too often */
		sink += spin_units(50);
}

KEEP static void mode_signal(double secs)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	struct itimerval it = { { 0, 2000 }, { 0, 2000 } }, off = { 0 };

	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	signal_wait(process_cpu_s() + secs);
	setitimer(ITIMER_REAL, &off, NULL);
	signal(SIGALRM, SIG_DFL);
}

/* ---- plt: a libc function called through its PLT stub, in a loop ---- */

KEEP static void plt_loop(double end)
{
	char buf[32];

	while (process_cpu_s() < end)
		for (int i = 0; i < 1000; i++) {
			snprintf(buf, sizeof(buf), "%d", i);
			sink += strtoul(buf, NULL, 10);
		}
}

KEEP static void mode_plt(double secs)
{
	plt_loop(process_cpu_s() + secs);
}

/* ---- dlopen: a library mapped after the recording started ---- */

KEEP static void mode_dlopen(double secs)
{
#ifdef UNWIND_STATIC
	/* a static executable cannot load a shared library: run the leaf */
	(void)secs;
	fprintf(stderr, "unwind: dlopen mode needs a dynamic executable\n");
	exit(2);
#else
	char path[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 32);
	unsigned long (*work)(double);
	void *h;

	if (n <= 0) {
		perror("unwind: readlink");
		exit(1);
	}
	path[n] = 0;
	strcpy(strrchr(path, '/') + 1, "libuwdl.so");
	h = dlopen(path, RTLD_NOW);
	if (!h || !(*(void **)&work = dlsym(h, "uw_dl_work"))) {
		fprintf(stderr, "unwind: %s\n", dlerror());
		exit(1);
	}
	sink += work(process_cpu_s() + secs);
#endif
}

/* ---- leaf: a function that calls nothing and so sets up no frame ---- */

KEEP static unsigned long leaf_fn(unsigned long x)
{
	for (int i = 0; i < 1000; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	return x;
}

KEEP static void leaf_caller(double end)
{
	unsigned long x = 1;

	while (process_cpu_s() < end)
		for (int i = 0; i < 100; i++)
			x = leaf_fn(x);
	sink += x;
}

KEEP static void mode_leaf(double secs)
{
	leaf_caller(process_cpu_s() + secs);
}

/* ---- churn: a known chain while another thread churns code mappings ---- */

#include <sys/mman.h>

static volatile int churn_stop;
static unsigned long churn_changes;

/* maps an executable page, maps one writable and makes it executable
 * (a JIT's two ways), unmaps both: two executable mappings made a round */
static void *churn_mapper(void *arg)
{
	long page = sysconf(_SC_PAGESIZE);

	(void)arg;
	while (!churn_stop) {
		void *x = mmap(NULL, (size_t)page, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		unsigned char *w = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (x == MAP_FAILED || w == MAP_FAILED) {
			perror("unwind: churn mmap");
			exit(1);
		}
		w[0] = 0xc3; /* ret */
		if (mprotect(w, (size_t)page, PROT_READ | PROT_EXEC)) {
			perror("unwind: churn mprotect");
			exit(1);
		}
		churn_changes += 2;
		munmap(x, (size_t)page);
		munmap(w, (size_t)page);
		usleep(300);
	}
	return NULL;
}

KEEP static unsigned long churn_leaf(unsigned long x)
{
	for (int i = 0; i < 2000; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	return x;
}

KEEP static unsigned long churn_inner(unsigned long x)
{
	for (int i = 0; i < 10; i++)
		x = churn_leaf(x) ^ (x >> 7);
	return x;
}

KEEP static void churn_outer(double end)
{
	unsigned long x = 1;

	while (thread_cpu_s() < end)
		x = churn_inner(x) + 1;
	sink += x;
}

KEEP static void mode_churn(double secs)
{
	pthread_t t;
	int err;

	if ((err = pthread_create(&t, NULL, churn_mapper, NULL))) {
		fprintf(stderr, "unwind: pthread_create: %s\n", strerror(err));
		exit(1);
	}
	churn_outer(thread_cpu_s() + secs);
	churn_stop = 1;
	pthread_join(t, NULL);
	fprintf(stderr, "unwind: churn: %lu executable mappings made\n", churn_changes);
}

static const struct {
	const char *name;
	void (*run)(double);
} modes[] = {
	{ "qsort", mode_qsort },     { "recurse", mode_recurse }, { "threads", mode_threads },
	{ "signal", mode_signal },   { "plt", mode_plt },         { "dlopen", mode_dlopen },
	{ "leaf", mode_leaf },       { "deep", mode_deep },       { "churn", mode_churn },
};

int main(int argc, char **argv)
{
	double secs = arg_seconds(argc, argv, 1, 1);

	if (argc < 3) {
		fprintf(stderr, "usage: %s SECONDS MODE...\nmodes:", argv[0]);
		for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++)
			fprintf(stderr, " %s", modes[m].name);
		fputc('\n', stderr);
		return 2;
	}
	for (int i = 2; i < argc; i++) {
		size_t m = 0;

		while (m < sizeof(modes) / sizeof(modes[0]) && strcmp(modes[m].name, argv[i]))
			m++;
		if (m == sizeof(modes) / sizeof(modes[0])) {
			fprintf(stderr, "%s: unknown mode '%s'\n", argv[0], argv[i]);
			return 2;
		}
		modes[m].run(secs);
	}
	return (int)(sink & 0);
}
