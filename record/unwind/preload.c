// SPDX-License-Identifier: Apache-2.0
/*
 * preload.c - see preload.h.
 *
 * Why not ask the loader (ld.so --list, what ldd does): that runs code on
 * the target for a guess, and a guess is all this is.  Why not
 * /etc/ld.so.cache: its format is glibc's private one; the directories it
 * adds beyond the defaults are rare on the hosts we record, and a library
 * missed here has its table built at its first sample, as before.
 */
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "preload.h"

/* The loader maps a few dozen objects for a typical program; python3 with
 * its extension modules, more, but those are dlopen'ed later anyway. */
#define PRELOAD_MAX 64
#define SEARCH_MAX 32

#if defined(__x86_64__)
#define MULTIARCH "x86_64-linux-gnu"
#elif defined(__aarch64__)
#define MULTIARCH "aarch64-linux-gnu"
#else
#define MULTIARCH ""
#endif

static const char *const default_dirs[] = {
	"/lib/" MULTIARCH, "/usr/lib/" MULTIARCH, "/lib64", "/usr/lib64", "/lib", "/usr/lib",
};

struct preload {
	char *paths[PRELOAD_MAX]; /* real paths, queued or done */
	size_t nr, done, opened;
	int machine;              /* e_machine of the program: libraries must match */
	const char *ld_library_path;
};

static bool regular_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* An ELF file of the program's class and machine, as the loader requires. */
static bool loadable(const char *path, int machine)
{
	unsigned char h[20];
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	bool ok;

	if (fd < 0)
		return false;
	ok = read(fd, h, sizeof(h)) == (ssize_t)sizeof(h) && !memcmp(h, ELFMAG, SELFMAG) &&
	     h[EI_CLASS] == ELFCLASS64 && (machine < 0 || (h[18] | h[19] << 8) == machine);
	close(fd);
	return ok;
}

static void queue(struct preload *p, const char *path)
{
	char real[PATH_MAX];

	if (p->nr == PRELOAD_MAX || !realpath(path, real))
		return;
	for (size_t i = 0; i < p->nr; i++)
		if (!strcmp(p->paths[i], real))
			return;
	p->paths[p->nr] = strdup(real);
	if (p->paths[p->nr])
		p->nr++;
}

/* dir/name into out, with $ORIGIN (or ${ORIGIN}) in dir replaced by
 * origin; false when it does not fit. */
static bool join(char *out, size_t len, const char *dir, size_t dlen, const char *name,
		 const char *origin)
{
	size_t n = 0;

	for (size_t i = 0; i < dlen; i++) {
		const char *rep = NULL;
		size_t skip = 0;

		if (!strncmp(dir + i, "${ORIGIN}", 9) && i + 9 <= dlen)
			rep = origin, skip = 9;
		else if (!strncmp(dir + i, "$ORIGIN", 7) && i + 7 <= dlen)
			rep = origin, skip = 7;
		if (rep) {
			size_t r = strlen(rep);

			if (n + r >= len)
				return false;
			memcpy(out + n, rep, r);
			n += r;
			i += skip - 1;
		} else {
			if (n + 1 >= len)
				return false;
			out[n++] = dir[i];
		}
	}
	return snprintf(out + n, len - n, "/%s", name) < (int)(len - n);
}

/* The first dir of a colon-separated list holding a loadable name. */
static bool search_list(const struct preload *p, const char *list, const char *name,
			const char *origin, char *out, size_t len)
{
	for (const char *d = list; d && *d;) {
		const char *end = strchr(d, ':');
		size_t dlen = end ? (size_t)(end - d) : strlen(d);

		if (dlen && join(out, len, d, dlen, name, origin) && regular_file(out) &&
		    loadable(out, p->machine))
			return true;
		d = end ? end + 1 : NULL;
	}
	return false;
}

/* Where the loader would find DT_NEEDED name for an object with these
 * DT_RPATH / DT_RUNPATH strings (either may be NULL). */
static bool find_library(const struct preload *p, const char *name, const char *rpath,
			 const char *runpath, const char *origin, char *out, size_t len)
{
	if (strchr(name, '/'))
		return snprintf(out, len, "%s", name) < (int)len && regular_file(out);
	if (!runpath && rpath && search_list(p, rpath, name, origin, out, len))
		return true;
	if (p->ld_library_path && search_list(p, p->ld_library_path, name, origin, out, len))
		return true;
	if (runpath && search_list(p, runpath, name, origin, out, len))
		return true;
	for (size_t i = 0; i < sizeof(default_dirs) / sizeof(default_dirs[0]); i++)
		if (snprintf(out, len, "%s/%s", default_dirs[i], name) < (int)len && regular_file(out) &&
		    loadable(out, p->machine))
			return true;
	return false;
}

/* Queue the interpreter and the libraries object path needs. */
static void follow(struct preload *p, const char *path)
{
	char origin[PATH_MAX], found[PATH_MAX];
	const char *needed[SEARCH_MAX], *rpath = NULL, *runpath = NULL;
	size_t nr_needed = 0, phnum;
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	Elf *elf;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

	if (fd < 0)
		return;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || !gelf_getehdr(elf, &eh))
		goto out;
	if (p->machine < 0)
		p->machine = eh.e_machine;
	/* PT_INTERP: the loader itself */
	if (elf_getphdrnum(elf, &phnum) == 0) {
		size_t flen = 0;
		const char *file = elf_rawfile(elf, &flen);

		for (size_t i = 0; i < phnum; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_INTERP || !file ||
			    ph.p_offset >= flen || ph.p_filesz > flen - ph.p_offset || ph.p_filesz < 2 ||
			    file[ph.p_offset + ph.p_filesz - 1] != '\0')
				continue;
			if (regular_file(file + ph.p_offset))
				queue(p, file + ph.p_offset);
		}
	}
	/* .dynamic through the section headers (kept by strip) */
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; sh.sh_entsize && i < d->d_size / sh.sh_entsize; i++) {
			GElf_Dyn dyn;
			const char *s;

			if (!gelf_getdyn(d, (int)i, &dyn) || dyn.d_tag == DT_NULL)
				break;
			if (dyn.d_tag != DT_NEEDED && dyn.d_tag != DT_RPATH && dyn.d_tag != DT_RUNPATH)
				continue;
			s = elf_strptr(elf, sh.sh_link, dyn.d_un.d_val);
			if (!s)
				continue;
			if (dyn.d_tag == DT_RPATH)
				rpath = s;
			else if (dyn.d_tag == DT_RUNPATH)
				runpath = s;
			else if (nr_needed < SEARCH_MAX)
				needed[nr_needed++] = s;
		}
		break;
	}
	snprintf(origin, sizeof(origin), "%s", path);
	char *slash = strrchr(origin, '/');
	if (slash)
		*(slash == origin ? slash + 1 : slash) = '\0';
	for (size_t i = 0; i < nr_needed; i++)
		if (find_library(p, needed[i], rpath, runpath, origin, found, sizeof(found)))
			queue(p, found);
out:
	if (elf)
		elf_end(elf);
	close(fd);
}

/* What execvp would run for command. */
static bool resolve_command(const char *command, char *out, size_t len)
{
	const char *path = getenv("PATH");

	if (!*command)
		return false;
	if (strchr(command, '/'))
		return snprintf(out, len, "%s", command) < (int)len && regular_file(out);
	if (!path)
		path = "/bin:/usr/bin"; /* execvp's default (confstr _CS_PATH) */
	for (const char *d = path; d;) {
		const char *end = strchr(d, ':');
		size_t dlen = end ? (size_t)(end - d) : strlen(d);

		/* an empty entry is the current directory */
		if (snprintf(out, len, "%.*s/%s", (int)(dlen ? dlen : 1), dlen ? d : ".", command) <
			    (int)len &&
		    regular_file(out) && access(out, X_OK) == 0)
			return true;
		d = end ? end + 1 : NULL;
	}
	return false;
}

size_t preload_command(struct manifest *m, const char *command)
{
	struct preload p = { .machine = -1, .ld_library_path = getenv("LD_LIBRARY_PATH") };
	char exe[PATH_MAX];

	if (!command || !resolve_command(command, exe, sizeof(exe)) || !loadable(exe, -1))
		return 0;
	queue(&p, exe);
	/* breadth first: the program, its loader and direct libraries, then
	 * theirs */
	for (p.done = 0; p.done < p.nr; p.done++) {
		follow(&p, p.paths[p.done]);
		if (manifest_preload(m, p.paths[p.done]) == 0)
			p.opened++;
	}
	for (size_t i = 0; i < p.nr; i++)
		free(p.paths[i]);
	return p.opened;
}
