// SPDX-License-Identifier: Apache-2.0
/*
 * runtimes.c - which language runtimes' frames a recording walks
 * (runtimes.h says why it matters: the verifier's time at every start).
 *
 * The test errs towards walking: whatever cannot be read, a script, a
 * program that runs others, a whole system, walks every runtime.  What it
 * can miss is an ELF program that is no runtime and yet starts one (a C
 * program calling system("java ...")): -v says what was decided, and
 * --runtimes walks them all.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtimes.h"

/* Programs that start other programs: what they run is not known here. */
static const char *const launchers[] = {
	"sh", "bash", "dash", "zsh", "ksh", "fish", "busybox", "env", "timeout", "nice",
	"nohup", "sudo", "su", "runuser", "setsid", "taskset", "chrt", "ionice", "numactl",
	"stdbuf", "time", "xargs", "parallel", "make", "gmake", "ninja", "strace", "ltrace",
	"valgrind", "gdb", "perf", "unshare", "nsenter", "chroot", "flock", "watch", "systemd-run",
	"script", "tini", "dumb-init", "catatonit", "s6-svscan", "runsv", "supervisord",
};

static bool is_launcher(const char *base)
{
	for (size_t i = 0; i < sizeof(launchers) / sizeof(launchers[0]); i++)
		if (!strcmp(base, launchers[i]))
			return true;
	return false;
}

static bool starts_with(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

/* The runtimes a library or symbol name stands for. */
static unsigned runtimes_of_name(const char *n)
{
	unsigned r = 0;

	if (starts_with(n, "libpython") || !strcmp(n, "_PyRuntime") || !strcmp(n, "Py_BytesMain"))
		r |= RUNTIME_PYTHON;
	if (starts_with(n, "libnode.so") || starts_with(n, "v8dbg_"))
		r |= RUNTIME_V8;
	if (starts_with(n, "libjli.so") || starts_with(n, "libjvm.so") || !strcmp(n, "JLI_Launch") ||
	    !strcmp(n, "JNI_CreateJavaVM"))
		r |= RUNTIME_JVM;
	return r;
}

/* The runtimes a program's file name says it is (python3.11, node, java). */
static unsigned runtimes_of_base(const char *base)
{
	unsigned r = 0;

	if (starts_with(base, "python") || starts_with(base, "pypy"))
		r |= RUNTIME_PYTHON;
	if (!strcmp(base, "node") || starts_with(base, "nodejs"))
		r |= RUNTIME_V8;
	if (!strcmp(base, "java") || !strcmp(base, "javaw"))
		r |= RUNTIME_JVM;
	return r;
}

unsigned runtimes_of_elf(const char *path)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	unsigned r = runtimes_of_base(base);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf_Scn *scn = NULL;
	Elf *elf;

	if (fd < 0)
		return r;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	/* DT_NEEDED names and the dynamic symbols (imported or exported):
	 * tiny sections next to the code, read whatever the file's size */
	while (elf && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_DYNAMIC && sh.sh_type != SHT_DYNSYM))
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !sh.sh_entsize)
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			const char *n = NULL;

			if (sh.sh_type == SHT_DYNAMIC) {
				GElf_Dyn dyn;

				if (gelf_getdyn(d, (int)i, &dyn) && dyn.d_tag == DT_NEEDED)
					n = elf_strptr(elf, sh.sh_link, dyn.d_un.d_val);
			} else {
				GElf_Sym sym;

				if (gelf_getsym(d, (int)i, &sym))
					n = elf_strptr(elf, sh.sh_link, sym.st_name);
			}
			if (n)
				r |= runtimes_of_name(n);
		}
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return r;
}

/* The command's program as execvp(3) finds it; 0 or -ENOENT. */
static int find_program(const char *name, char *out, size_t len)
{
	const char *path = getenv("PATH");

	if (strchr(name, '/')) {
		snprintf(out, len, "%s", name);
		return access(out, X_OK) ? -ENOENT : 0;
	}
	for (const char *p = path ? path : "/usr/local/bin:/usr/bin:/bin"; *p;) {
		const char *e = strchr(p, ':');
		size_t n = e ? (size_t)(e - p) : strlen(p);

		snprintf(out, len, "%.*s/%s", (int)n, n ? p : ".", name);
		if (!access(out, X_OK))
			return 0;
		p += n + (e ? 1 : 0);
	}
	return -ENOENT;
}

/* What the command may run: its program's runtimes, or all of them. */
static unsigned of_command(const char *name, char *why, size_t len)
{
	char path[PATH_MAX], magic[4] = { 0 };
	const char *base;
	unsigned r;
	int fd;

	if (find_program(name, path, sizeof(path))) {
		snprintf(why, len, "the command's program %s not found", name);
		return RUNTIME_ALL;
	}
	base = strrchr(path, '/') + 1;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || read(fd, magic, sizeof(magic)) != (ssize_t)sizeof(magic) ||
	    memcmp(magic, ELFMAG, SELFMAG)) {
		if (fd >= 0)
			close(fd);
		snprintf(why, len, "the command %s is a script or unreadable", base);
		return RUNTIME_ALL;
	}
	close(fd);
	if (is_launcher(base)) {
		snprintf(why, len, "the command %s starts other programs", base);
		return RUNTIME_ALL;
	}
	r = runtimes_of_elf(path);
	snprintf(why, len, "the command's program %s", base);
	return r;
}

/* What process pid is: its program's runtimes and the libraries it maps;
 * all of them when it cannot be read. */
static unsigned of_process(pid_t pid)
{
	char p[64], exe[PATH_MAX], line[PATH_MAX + 128];
	unsigned r = 0;
	ssize_t n;
	FILE *f;

	snprintf(p, sizeof(p), "/proc/%d/exe", (int)pid);
	n = readlink(p, exe, sizeof(exe) - 1);
	if (n > 0) {
		const char *base;

		exe[n] = 0;
		base = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
		if (is_launcher(base))
			return RUNTIME_ALL; /* a shell: what it starts next */
		r |= runtimes_of_elf(p); /* through /proc: in its namespace */
		r |= runtimes_of_base(base);
	}
	snprintf(p, sizeof(p), "/proc/%d/maps", (int)pid);
	f = fopen(p, "re");
	if (!f)
		return RUNTIME_ALL;
	while (fgets(line, sizeof(line), f)) {
		const char *path = strchr(line, '/');
		const char *base = path ? strrchr(path, '/') + 1 : NULL;

		if (base)
			r |= runtimes_of_name(base);
	}
	fclose(f);
	return r;
}

unsigned runtimes_expected(const struct env *env, char *why, size_t len)
{
	char scratch[8];
	unsigned r = 0;

	if (!why) {
		why = scratch;
		len = sizeof(scratch);
	}
	if (env->all_runtimes) {
		snprintf(why, len, "--runtimes");
		return RUNTIME_ALL;
	}
	if (env->command)
		return of_command(env->command[0], why, len);
	if (!env->nr_pids && !env->nr_tids) {
		snprintf(why, len, "every process of %s", env->cgroup ? "the cgroup" : "the system");
		return RUNTIME_ALL;
	}
	for (int i = 0; i < env->nr_pids; i++)
		r |= of_process(env->pids[i]);
	for (int i = 0; i < env->nr_tids; i++)
		r |= of_process(env->tids[i]);
	snprintf(why, len, "the processes' programs and libraries");
	return r;
}
