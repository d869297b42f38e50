// SPDX-License-Identifier: Apache-2.0
/*
 * dlswap MODE DURATION [DIR]: code replaced at one address while it runs,
 * for the mapping-generation tests (issue 27).  Every 100 ms of the
 * process's CPU time one phase ends and the next begins (CPU time, not wall
 * time, here and for DURATION: on a busy machine the run takes longer, but
 * its phases get the samples, and the shares, of an idle one):
 *
 *   swap     dlopen libswapa.so, run swap_a_work, dlclose; the same with
 *            libswapb.so (same layout, other name), which the loader puts
 *            where libswapa.so was;
 *   replace  the same through one path, DIR/libswap.so, whose file is
 *            replaced (rename) by the other library before each dlopen;
 *   memfd    libswapa.so from its file, then libswapb.so's bytes from a
 *            memfd (no file a symbolizer could open);
 *   jit      libswapa.so, then anonymous memory mapped where its code was,
 *            made executable with mprotect, running a spin loop at
 *            swap_a_work's address (named jit_spin in /tmp/perf-PID.map);
 *   thread   a thread runs swap_a_work for the whole DURATION while the
 *            main thread opens and closes libswapa.so (the thread's handle
 *            keeps it mapped) and runs libswapb.so, mapped elsewhere.
 *
 * Each phase's code is called from a_phase or b_phase, so the tests can
 * tell which phase a sample was taken in whatever the leaf is named.
 * Prints "base NAME 0xADDR" for each library loaded (load address), and in
 * jit mode "perfmap PATH" (the perf map it writes, for the test to remove)
 * and "jit 0xADDR" where the JIT code ran.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include "common.h"

typedef unsigned long (*work_fn)(double);

static char dir[PATH_MAX - 64]; /* room for a file name after it */

static void die(const char *what)
{
	fprintf(stderr, "dlswap: %s: %s\n", what, dlerror() ? dlerror() : strerror(errno));
	exit(1);
}

NOINLINE unsigned long a_phase(work_fn fn, double secs)
{
	KEEP_FRAME();
	return fn(secs);
}

NOINLINE unsigned long b_phase(work_fn fn, double secs)
{
	KEEP_FRAME();
	return fn(secs);
}

/* dlopen path and find sym; prints the load address. */
static void *open_lib(const char *path, const char *sym, work_fn *fn)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	struct link_map *lm;

	if (!h)
		die(path);
	*(void **)fn = dlsym(h, sym);
	if (!*fn)
		die(sym);
	if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0)
		printf("base %s 0x%lx\n", sym, (unsigned long)lm->l_addr);
	return h;
}

static void lib_path(char *out, const char *name)
{
	snprintf(out, PATH_MAX, "%s/%s", dir, name);
}

static void copy_file(const char *from, const char *to)
{
	char tmp[PATH_MAX + 8], buf[65536];
	int in = open(from, O_RDONLY), out;
	ssize_t n;

	snprintf(tmp, sizeof(tmp), "%s.tmp", to);
	out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	if (in < 0 || out < 0)
		die("copy");
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n)
			die("write");
	close(in);
	close(out);
	/* a new inode at the same path: what a package upgrade does */
	if (rename(tmp, to))
		die("rename");
}

/* A spin loop in machine code: mov rcx, N; 1: dec rcx; jnz 1b; ret. */
static const unsigned char spin_code[] = {
	0x48, 0xb9, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, /* mov $0x100000, %rcx */
	0x48, 0xff, 0xc9,                                           /* dec %rcx */
	0x75, 0xfb,                                                 /* jnz -5 */
	0xc3,                                                       /* ret */
};

static int perf_map_fd = -1;

/* Map anonymous memory over [base, base + len) (free now: the library is
 * unloaded), put the spin loop at code, make it executable, run it for
 * secs, unmap. */
NOINLINE void jit_phase(unsigned long base, size_t len, unsigned long code, double secs)
{
	double end = process_cpu_s() + secs;
	unsigned char *p = mmap((void *)base, len, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	void (*fn)(void);

	KEEP_FRAME();
	if (p == MAP_FAILED)
		die("mmap");
	memcpy((void *)code, spin_code, sizeof(spin_code));
	if (mprotect(p, len, PROT_READ | PROT_EXEC))
		die("mprotect");
	*(void **)&fn = (void *)code;
	if (perf_map_fd >= 0) {
		dprintf(perf_map_fd, "%lx %zx jit_spin\n", code, sizeof(spin_code));
		close(perf_map_fd);
		perf_map_fd = -2;
		printf("jit 0x%lx\n", code);
	}
	while (process_cpu_s() < end)
		fn();
	munmap(p, len);
}

struct thread_arg {
	work_fn fn;
	double secs;
};

static void *thread_main(void *p)
{
	struct thread_arg *a = p;

	prctl(PR_SET_NAME, "dlswap-a");
	a_phase(a->fn, a->secs);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "swap";
	double dur = arg_seconds(argc, argv, 2, 4), start = process_cpu_s(), slice = 0.1;
	char a[PATH_MAX], b[PATH_MAX], path[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", dir, sizeof(dir) - 32);
	work_fn fa, fb;
	void *h;

	if (n <= 0)
		die("readlink");
	dir[n] = 0;
	*strrchr(dir, '/') = 0;
	lib_path(a, "libswapa.so");
	lib_path(b, "libswapb.so");
	setvbuf(stdout, NULL, _IOLBF, 0);

	if (!strcmp(mode, "thread")) {
		struct thread_arg ta;
		pthread_t t;
		void *h1 = open_lib(a, "swap_a_work", &ta.fn);

		ta.secs = dur;
		if (pthread_create(&t, NULL, thread_main, &ta))
			die("pthread_create");
		while (process_cpu_s() - start < dur) {
			/* open and close the library the thread runs: the
			 * thread's handle keeps it mapped */
			h = open_lib(a, "swap_a_work", &fa);
			dlclose(h);
			h = open_lib(b, "swap_b_work", &fb);
			b_phase(fb, slice / 2);
			dlclose(h);
		}
		pthread_join(t, NULL);
		dlclose(h1);
		return 0;
	}
	if (!strcmp(mode, "replace")) {
		if (argc < 4)
			die("replace needs DIR");
		snprintf(path, sizeof(path), "%s/libswap.so", argv[3]);
	}
	if (!strcmp(mode, "jit")) {
		char pm[64];

		snprintf(pm, sizeof(pm), "/tmp/perf-%d.map", getpid());
		perf_map_fd = open(pm, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		printf("perfmap %s\n", pm); /* the test removes it */
	}
	while (process_cpu_s() - start < dur) {
		if (!strcmp(mode, "replace")) {
			copy_file(a, path);
			h = open_lib(path, "swap_a_work", &fa);
		} else {
			h = open_lib(a, "swap_a_work", &fa);
		}
		a_phase(fa, slice);
		if (!strcmp(mode, "jit")) {
			struct link_map *lm;
			Dl_info di;
			unsigned long base, code = (unsigned long)fa;
			size_t len;

			if (dlinfo(h, RTLD_DI_LINKMAP, &lm) || !dladdr((void *)fa, &di))
				die("dlinfo");
			/* from the library's first page to the page of its code
			 * (free once it is unloaded) */
			base = (unsigned long)di.dli_fbase;
			len = ((code - base) + sizeof(spin_code) + 4095) & ~4095UL;
			dlclose(h);
			jit_phase(base, len, code, slice);
			continue;
		}
		dlclose(h);
		if (!strcmp(mode, "replace")) {
			copy_file(b, path);
			h = open_lib(path, "swap_b_work", &fb);
		} else if (!strcmp(mode, "memfd")) {
			int fd = memfd_create("swapb", MFD_CLOEXEC), in = open(b, O_RDONLY);
			char buf[65536], fdpath[64];

			if (fd < 0 || in < 0)
				die("memfd");
			while ((n = read(in, buf, sizeof(buf))) > 0)
				if (write(fd, buf, n) != n)
					die("memfd write");
			close(in);
			snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", fd);
			h = open_lib(fdpath, "swap_b_work", &fb);
			close(fd);
		} else {
			h = open_lib(b, "swap_b_work", &fb);
		}
		b_phase(fb, slice);
		dlclose(h);
	}
	return 0;
}
