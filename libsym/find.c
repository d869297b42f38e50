/* SPDX-License-Identifier: Apache-2.0 */
/*
 * find.c - locating the files for an object, by build-id, and handing them
 * to libdwfl.
 *
 * Search order (every file's build-id is checked against the recorded one):
 *   1. each debug dir D: D/.build-id/xx/rest.debug, D/.build-id/xx/rest,
 *      then plain files in D (scanned once, matched by build-id);
 *   2. /usr/lib/debug/.build-id (unless BSYM_NO_SYSTEM_DEBUG);
 *   3. the recorded path under sysroot (unless BSYM_NO_ORIGINAL_PATH);
 *   4. without DWARF so far: .gnu_debuglink of the ELF found, CRC-checked;
 *   5. debuginfod (DEBUGINFOD_URLS, unless BSYM_NO_DEBUGINFOD).
 * The ELF found is reported to libdwfl at base 0 (addresses = ELF vaddrs);
 * the separate debug file is handed over through our find_debuginfo
 * callback.  libdwfl itself then reads .symtab, .dynsym or MiniDebugInfo
 * (.gnu_debugdata).  We do not use dwfl_standard_find_debuginfo: it skips
 * the CRC check when a build-id exists and calls debuginfod on its own,
 * which BSYM_NO_DEBUGINFOD must be able to prevent.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <elfutils/debuginfod.h>
#include <elfutils/libdwelf.h>

#include "bsym_internal.h"

#define MAX_CANDS 16
#define MAX_SCAN_FILES 4096
#define PAGE 4096u

/* ---- build-id helpers ------------------------------------------------------ */

bool bsym_elf_build_id_eq(Elf *elf, const uint8_t *bid, size_t len)
{
	const void *p = NULL;
	ssize_t n = dwelf_elf_gnu_build_id(elf, &p);
	return n > 0 && (size_t)n == len && memcmp(p, bid, len) == 0;
}

static int open_regular(struct bsym_ctx *ctx, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		/* Each loaded object keeps descriptors open (libdwfl's); running
		 * out must not pass for "no debuginfo" unannounced. */
		if ((errno == EMFILE || errno == ENFILE) && !ctx->warned_nofile) {
			ctx->warned_nofile = true;
			bsym_log(ctx, BSYM_LOG_WARN,
				 "out of file descriptors (%s): objects will lack symbols; "
				 "raise RLIMIT_NOFILE", strerror(errno));
		}
		return -1;
	}
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -1;
	}
	return fd;
}

int bsym_open_elf_checked(struct bsym_ctx *ctx, const char *path, const uint8_t *bid, size_t len,
			  Elf **elfp, bool *mismatch)
{
	*elfp = NULL;
	int fd = open_regular(ctx, path);
	if (fd < 0)
		return -1;
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		elf_end(elf);
		close(fd);
		return -1;
	}
	if (len && !bsym_elf_build_id_eq(elf, bid, len)) {
		*mismatch = true;
		elf_end(elf);
		close(fd);
		return -1;
	}
	*elfp = elf;
	return fd;
}

static char *hexpath(const char *dir, const uint8_t *bid, size_t len, const char *suffix)
{
	/* DIR/.build-id/xx/rest[suffix] */
	size_t n = strlen(dir) + strlen("/.build-id/") + 2 * len + 2 + strlen(suffix) + 1;
	char *p = malloc(n);
	if (!p)
		return NULL;
	char *q = p + sprintf(p, "%s/.build-id/%02x/", dir, bid[0]);
	for (size_t i = 1; i < len; i++)
		q += sprintf(q, "%02x", bid[i]);
	strcpy(q, suffix);
	return p;
}

/* ---- plain files in a debug dir --------------------------------------------- */

struct scan_ent {
	uint8_t bid[BSYM_MAX_BUILD_ID];
	size_t len;
	char *path;
};
struct bsym_dirscan {
	struct scan_ent *ents;
	size_t n;
};

static struct bsym_dirscan *dirscan(struct bsym_ctx *ctx, size_t di)
{
	if (!ctx->scans) {
		ctx->scans = calloc(ctx->nr_user_dirs ? ctx->nr_user_dirs : 1, sizeof(*ctx->scans));
		if (!ctx->scans)
			return NULL;
	}
	if (ctx->scans[di])
		return ctx->scans[di];
	struct bsym_dirscan *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	ctx->scans[di] = s;
	DIR *d = opendir(ctx->debug_dirs[di]);
	if (!d)
		return s;
	size_t cap = 0, seen = 0;
	struct dirent *e;
	while ((e = readdir(d)) && seen < MAX_SCAN_FILES) {
		if (e->d_name[0] == '.')
			continue;
		seen++;
		char *path;
		if (asprintf(&path, "%s/%s", ctx->debug_dirs[di], e->d_name) < 0)
			break;
		int fd = open_regular(ctx, path);
		Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
		const void *bid = NULL;
		ssize_t n = elf && elf_kind(elf) == ELF_K_ELF ? dwelf_elf_gnu_build_id(elf, &bid) : -1;
		if (n > 0 && n <= BSYM_MAX_BUILD_ID) {
			if (s->n == cap) {
				size_t nc = cap ? cap * 2 : 16;
				struct scan_ent *ne = realloc(s->ents, nc * sizeof(*ne));
				if (!ne) {
					elf_end(elf);
					close(fd);
					free(path);
					break;
				}
				s->ents = ne;
				cap = nc;
			}
			memcpy(s->ents[s->n].bid, bid, (size_t)n);
			s->ents[s->n].len = (size_t)n;
			s->ents[s->n].path = path;
			path = NULL;
			s->n++;
		}
		free(path);
		elf_end(elf);
		if (fd >= 0)
			close(fd);
	}
	closedir(d);
	return s;
}

void bsym_dirscans_free(struct bsym_ctx *ctx)
{
	if (!ctx->scans)
		return;
	for (size_t i = 0; i < ctx->nr_user_dirs; i++) {
		struct bsym_dirscan *s = ctx->scans[i];
		if (!s)
			continue;
		for (size_t j = 0; j < s->n; j++)
			free(s->ents[j].path);
		free(s->ents);
		free(s);
	}
	free(ctx->scans);
	ctx->scans = NULL;
}

/* ---- debuginfod (dlopened, as libdwfl does, so it stays optional) ------------ */

typedef debuginfod_client *(*dbg_begin_fn)(void);
typedef int (*dbg_find_fn)(debuginfod_client *, const unsigned char *, int, char **);

static bool debuginfod_init(struct bsym_ctx *ctx)
{
	if (ctx->dinfod_tried)
		return ctx->dinfod_client != NULL;
	ctx->dinfod_tried = true;
	if (ctx->flags & BSYM_NO_DEBUGINFOD)
		return false;
	const char *urls = getenv("DEBUGINFOD_URLS");
	if (!urls || !*urls)
		return false;
	ctx->dinfod_so = dlopen("libdebuginfod.so.1", RTLD_LAZY | RTLD_LOCAL);
	if (!ctx->dinfod_so) {
		bsym_log(ctx, BSYM_LOG_WARN, "DEBUGINFOD_URLS is set but libdebuginfod.so.1 cannot be loaded");
		return false;
	}
	ctx->dinfod_begin = dlsym(ctx->dinfod_so, "debuginfod_begin");
	ctx->dinfod_end = dlsym(ctx->dinfod_so, "debuginfod_end");
	ctx->dinfod_find_debuginfo = dlsym(ctx->dinfod_so, "debuginfod_find_debuginfo");
	ctx->dinfod_find_executable = dlsym(ctx->dinfod_so, "debuginfod_find_executable");
	if (!ctx->dinfod_begin || !ctx->dinfod_end || !ctx->dinfod_find_debuginfo ||
	    !ctx->dinfod_find_executable)
		return false;
	ctx->dinfod_client = ((dbg_begin_fn)ctx->dinfod_begin)();
	return ctx->dinfod_client != NULL;
}

int bsym_debuginfod_find(struct bsym_ctx *ctx, const uint8_t *bid, size_t len, bool executable,
			 char **path_out)
{
	*path_out = NULL;
	if (!len || !debuginfod_init(ctx))
		return -1;
	dbg_find_fn f = (dbg_find_fn)(executable ? ctx->dinfod_find_executable
						 : ctx->dinfod_find_debuginfo);
	if (ctx->dinfod_dead)
		return -1;
	int fd = f(ctx->dinfod_client, bid, (int)len, path_out);
	if (fd < 0) {
		/* "Not found" is an answer.  Anything else - a timeout, a refused
		 * or reset connection, a server error - would cost every later
		 * object as long (DEBUGINFOD_TIMEOUT x retries each): give up on
		 * the servers for this context after saying so once. */
		bool dead = fd != -ENOENT;
		if (dead) {
			char hex[2 * BSYM_MAX_BUILD_ID + 1];
			for (size_t i = 0; i < len && i < BSYM_MAX_BUILD_ID; i++)
				snprintf(hex + 2 * i, 3, "%02x", bid[i]);
			hex[2 * (len < BSYM_MAX_BUILD_ID ? len : BSYM_MAX_BUILD_ID)] = 0;
			const char *urls = getenv("DEBUGINFOD_URLS");
			bsym_log(ctx, BSYM_LOG_WARN,
				 "debuginfod (%s): %s lookup for build-id %s failed: %s; not asking "
				 "again (DEBUGINFOD_TIMEOUT sets the wait)",
				 urls ? urls : "?", executable ? "executable" : "debuginfo", hex,
				 strerror(-fd));
		}
		ctx->dinfod_dead = dead;
		free(*path_out);
		*path_out = NULL;
		return -1;
	}
	return fd;
}

/* ---- candidates ------------------------------------------------------------ */

struct cand {
	char *path;
	int fd;
	Elf *elf;
	dev_t dev;
	ino_t ino;
	bool debug_only, has_dwarf, has_symtab;
	uint32_t mask;    /* BSYM_SM_* (CACHE.md): what the file holds, for the cache key */
	bool has_altlink; /* .gnu_debugaltlink: its DWARF needs a dwz common file */
};

struct search {
	struct bsym_ctx *ctx;
	struct bsym_obj *o;
	struct cand c[MAX_CANDS];
	size_t n;
	bool mismatch;
	int main, debug; /* indexes into c, or -1 */
};

/* Section names that say what a file can answer (CACHE.md, section mask). */
static const struct {
	const char *name;
	uint32_t bit;
} mask_sections[] = {
	{ ".gnu_debugdata", BSYM_SM_MINIDEBUG }, { ".debug_line", BSYM_SM_LINE },
	{ ".zdebug_line", BSYM_SM_LINE },         { ".eh_frame", BSYM_SM_EH_FRAME },
	{ ".debug_frame", BSYM_SM_DEBUG_FRAME },  { ".zdebug_frame", BSYM_SM_DEBUG_FRAME },
};

static void classify(struct cand *c)
{
	size_t shstrndx;
	if (elf_getshdrstrndx(c->elf, &shstrndx) == 0) {
		Elf_Scn *scn = NULL;
		while ((scn = elf_nextscn(c->elf, scn))) {
			GElf_Shdr sh;
			if (!gelf_getshdr(scn, &sh))
				continue;
			const char *name = elf_strptr(c->elf, shstrndx, sh.sh_name);
			if (sh.sh_type == SHT_SYMTAB)
				c->has_symtab = true;
			if (sh.sh_type == SHT_DYNSYM)
				c->mask |= BSYM_SM_DYNSYM;
			if (!name)
				continue;
			if ((!strcmp(name, ".debug_info") || !strcmp(name, ".zdebug_info")) &&
			    sh.sh_type != SHT_NOBITS && sh.sh_size > 0)
				c->has_dwarf = true;
			if (!strcmp(name, ".text") && sh.sh_type == SHT_NOBITS)
				c->debug_only = true;
			if (!strcmp(name, ".gnu_debugaltlink"))
				c->has_altlink = true;
			for (size_t i = 0; i < sizeof(mask_sections) / sizeof(mask_sections[0]); i++)
				if (!strcmp(name, mask_sections[i].name) && sh.sh_type != SHT_NOBITS)
					c->mask |= mask_sections[i].bit;
		}
	}
	size_t phnum;
	if (elf_getphdrnum(c->elf, &phnum) == 0) {
		for (size_t i = 0; i < phnum; i++) {
			GElf_Phdr ph;
			if (gelf_getphdr(c->elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
			    (ph.p_flags & PF_X) && ph.p_filesz == 0 && ph.p_memsz > 0)
				c->debug_only = true;
		}
	}
	c->mask |= (c->debug_only ? BSYM_SM_DEBUG_ONLY : 0) | (c->has_symtab ? BSYM_SM_SYMTAB : 0) |
		   (c->has_dwarf ? BSYM_SM_DWARF : 0);
}

static bool satisfied(const struct search *s)
{
	return s->main >= 0 && s->debug >= 0;
}

/* Take ownership of (path, fd, elf) as a candidate. */
static void add_cand(struct search *s, char *path, int fd, Elf *elf)
{
	struct stat st;
	if (fstat(fd, &st) == 0) {
		for (size_t i = 0; i < s->n; i++) {
			if (s->c[i].dev == st.st_dev && s->c[i].ino == st.st_ino)
				goto drop; /* same file by another name */
		}
	}
	if (s->n == MAX_CANDS)
		goto drop;
	struct cand *c = &s->c[s->n];
	memset(c, 0, sizeof(*c));
	c->path = path;
	c->fd = fd;
	c->elf = elf;
	c->dev = st.st_dev;
	c->ino = st.st_ino;
	classify(c);
	if (s->main < 0 && !c->debug_only)
		s->main = (int)s->n;
	if (s->debug < 0 && c->has_dwarf)
		s->debug = (int)s->n;
	s->n++;
	return;
drop:
	elf_end(elf);
	close(fd);
	free(path);
}

static void try_path(struct search *s, char *path /* owned */)
{
	if (!path)
		return;
	Elf *elf;
	int fd = bsym_open_elf_checked(s->ctx, path, s->o->build_id, s->o->build_id_len, &elf,
				       &s->mismatch);
	if (fd < 0) {
		free(path);
		return;
	}
	add_cand(s, path, fd, elf);
}

static void try_image(struct search *s, struct bsym_obj *o)
{
	int fd = memfd_create("bprof-image", MFD_CLOEXEC);
	Elf *elf = NULL;
	char *path = NULL;

	if (fd < 0)
		return;
	for (size_t done = 0; done < o->image_len;) {
		ssize_t n = write(fd, (const char *)o->image + done, o->image_len - done);
		if (n <= 0)
			goto fail;
		done += (size_t)n;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF ||
	    !bsym_elf_build_id_eq(elf, o->build_id, o->build_id_len)) {
		bsym_log(s->ctx, BSYM_LOG_WARN, "%s: the recorded image is not an ELF with its build-id",
			 o->path ? o->path : "object");
		goto fail;
	}
	if (asprintf(&path, "%s (image in the recording)", o->path ? o->path : "object") < 0)
		goto fail;
	size_t before = s->n;
	add_cand(s, path, fd, elf);
	if (s->n > before)
		s->c[before].mask |= BSYM_SM_IMAGE;
	return;
fail:
	elf_end(elf);
	close(fd);
}

static char *under_sysroot(struct bsym_ctx *ctx, const char *path)
{
	char *p;
	if (!ctx->sysroot)
		return strdup(path);
	if (asprintf(&p, "%s%s%s", ctx->sysroot, path[0] == '/' ? "" : "/", path) < 0)
		return NULL;
	return p;
}

static void search_debuglink(struct search *s, struct cand *m)
{
	GElf_Word crc = 0;
	const char *link = dwelf_elf_gnu_debuglink(m->elf, &crc);
	if (!link || !*link)
		return;
	const char *base = strrchr(link, '/');
	base = base ? base + 1 : link; /* never follow a path out of the dirs */
	if (!*base || !strcmp(base, ".") || !strcmp(base, ".."))
		return;
	char *dir = strdup(m->path);
	if (!dir)
		return;
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	else
		strcpy(dir, ".");
	/* Where gdb and libdwfl look: beside the file, in .debug/, and in each
	 * debug dir both flat and under the file's own directory - as recorded
	 * on the target (DEBUGDIR/usr/bin/x.debug), not as found under sysroot. */
	char *rdir = NULL;
	if (s->o->path && s->o->path[0] == '/' && (rdir = strdup(s->o->path))) {
		char *rs = strrchr(rdir, '/');
		*rs = '\0';
	}
	const char *tree_dir = rdir ? rdir : dir;
	size_t nd = s->ctx->nr_debug_dirs;
	for (size_t i = 0; i < 2 + 2 * nd && s->debug < 0; i++) {
		char *p = NULL;
		int r;
		if (i == 0)
			r = asprintf(&p, "%s/%s", dir, base);
		else if (i == 1)
			r = asprintf(&p, "%s/.debug/%s", dir, base);
		else if (i < 2 + nd)
			r = asprintf(&p, "%s/%s", s->ctx->debug_dirs[i - 2], base);
		else
			r = asprintf(&p, "%s%s%s/%s", s->ctx->debug_dirs[i - 2 - nd],
				     tree_dir[0] == '/' ? "" : "/", tree_dir, base);
		if (r < 0)
			break;
		Elf *elf;
		bool mm = false;
		int fd = bsym_open_elf_checked(s->ctx, p, s->o->build_id, s->o->build_id_len, &elf, &mm);
		if (fd < 0) {
			if (mm)
				bsym_log(s->ctx, BSYM_LOG_INFO, "%s: build-id differs, refused", p);
			free(p);
			continue;
		}
		bool ok;
		uint32_t got = bsym_crc32_fd(fd, &ok);
		if (!ok || got != crc) {
			bsym_log(s->ctx, BSYM_LOG_WARN, "%s: .gnu_debuglink CRC mismatch, refused", p);
			s->mismatch = true;
			elf_end(elf);
			close(fd);
			free(p);
			continue;
		}
		add_cand(s, p, fd, elf);
	}
	free(rdir);
	free(dir);
}

/* ---- libdwfl glue -------------------------------------------------------------- */

static int cb_find_elf(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
		       char **file_name, Elf **elfp)
{
	return -1; /* modules are always reported with an open fd */
}

/* The build-id a debug file's .gnu_debugaltlink names (a dwz common
 * file): "path\0" then the build-id bytes.  Its length, 0 if none. */
static size_t altlink_build_id(const char *debug_file, uint8_t *bid)
{
	size_t n = 0, shstrndx;
	int fd = open(debug_file, O_RDONLY | O_CLOEXEC);
	Elf *e = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
	Elf_Scn *scn = NULL;

	if (e && elf_getshdrstrndx(e, &shstrndx) == 0) {
		while ((scn = elf_nextscn(e, scn))) {
			GElf_Shdr sh;
			const char *name;
			Elf_Data *d;

			if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
				continue;
			name = elf_strptr(e, shstrndx, sh.sh_name);
			if (!name || strcmp(name, ".gnu_debugaltlink"))
				continue;
			d = elf_rawdata(scn, NULL);
			if (!d || !d->d_buf)
				break;
			const char *p = d->d_buf;
			size_t l = strnlen(p, d->d_size);
			if (l < d->d_size && d->d_size - l - 1 >= 8 &&
			    d->d_size - l - 1 <= BSYM_MAX_BUILD_ID) {
				n = d->d_size - l - 1;
				memcpy(bid, p + l + 1, n);
			}
			break;
		}
	}
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
	return n;
}

static int cb_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			     Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			     GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	struct bsym_obj *o = userdata ? *userdata : NULL;
	if (o && o->pending_debug_fd >= 0) {
		int fd = o->pending_debug_fd;
		o->pending_debug_fd = -1;
		*debuginfo_file_name = o->pending_debug_path ? strdup(o->pending_debug_path) : NULL;
		return fd;
	}
	/* Only dwz alt files are left to find: by build-id in our debug dirs
	 * (this helper does not call debuginfod), then from debuginfod.  libdwfl
	 * asks for one with the link's path and no CRC, file_name being the
	 * debug file that links to it. */
	int fd = dwfl_build_id_find_debuginfo(mod, userdata, modname, base, file_name, debuglink_file,
					      debuglink_crc, debuginfo_file_name);
	if (fd >= 0 || !o || !debuglink_file || debuglink_crc != 0 || !file_name)
		return fd;
	uint8_t bid[BSYM_MAX_BUILD_ID];
	size_t n = altlink_build_id(file_name, bid);
	return n ? bsym_debuginfod_find(o->ctx, bid, n, false, debuginfo_file_name) : -1;
}

static int add_seg(struct bsym_obj *o, size_t *cap, struct bsym_seg seg)
{
	if (o->nr_segs == *cap) {
		size_t nc = *cap ? *cap * 2 : 8;
		struct bsym_seg *n = realloc(o->segs, nc * sizeof(*n));
		if (!n)
			return -ENOMEM;
		o->segs = n;
		*cap = nc;
	}
	o->segs[o->nr_segs++] = seg;
	return 0;
}

/* Program headers give file offset -> vaddr.  A separate debug file keeps
 * p_vaddr/p_memsz but not p_offset/p_filesz; rebuild the offsets as the
 * linkers lay them out: each segment at the first offset after the
 * previous one that is congruent to its vaddr modulo the page size. */
static void load_segments(struct bsym_ctx *ctx, struct bsym_obj *o, struct cand *m)
{
	size_t phnum, cap = 0;
	if (elf_getphdrnum(m->elf, &phnum) != 0)
		return;
	uint64_t prev_end = 0;
	for (size_t i = 0; i < phnum && i < 4096; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(m->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		struct bsym_seg s = { ph.p_offset, ph.p_filesz, ph.p_vaddr };
		if (m->debug_only) {
			uint64_t off = prev_end;
			uint64_t want = ph.p_vaddr % PAGE;
			if (off % PAGE != want)
				off = (off - off % PAGE) + want + (off % PAGE > want ? PAGE : 0);
			s.offset = off;
			s.filesz = ph.p_memsz;
			prev_end = off + ph.p_memsz;
		}
		if (add_seg(o, &cap, s))
			return;
	}
	if (m->debug_only)
		bsym_log(ctx, BSYM_LOG_DEBUG,
			 "%s: only a debug file was found; segment offsets reconstructed", m->path);
}

static void close_cands(struct search *s, int keep1, int keep2)
{
	for (size_t i = 0; i < s->n; i++) {
		if ((int)i == keep1 || (int)i == keep2)
			continue;
		elf_end(s->c[i].elf);
		close(s->c[i].fd);
		free(s->c[i].path);
	}
}

/* What bsym_obj_locate found, kept for bsym_obj_load: the main ELF (or
 * what stands for it) and the separate debug file. */
struct bsym_located {
	struct cand main, debug;
	bool has_debug;
};

void bsym_located_free(struct bsym_located *l)
{
	if (!l)
		return;
	elf_end(l->main.elf);
	close(l->main.fd);
	free(l->main.path);
	if (l->has_debug) {
		elf_end(l->debug.elf);
		close(l->debug.fd);
		free(l->debug.path);
	}
	free(l);
}

/*
 * Phase 1: find the files (open them, check build-ids, read section
 * headers) without reading DWARF.  This is all the symbol cache needs to
 * know which answers this run would give (CACHE.md: the key), and it costs
 * little next to bsym_obj_load's DWARF.
 */
void bsym_obj_locate(struct bsym_ctx *ctx, struct bsym_obj *o)
{
	o->located = true;
	o->status = BSYM_R_NO_DEBUGINFO;
	struct search s = { .ctx = ctx, .o = o, .main = -1, .debug = -1 };
	bool orig = o->path && *o->path && !(ctx->flags & BSYM_NO_ORIGINAL_PATH);

	if (o->build_id_len == 0) {
		if (!orig || !o->verify) {
			o->status = BSYM_R_NO_BUILD_ID;
			return;
		}
		char *p = under_sysroot(ctx, o->path);
		int fd = p ? open_regular(ctx, p) : -1;
		Elf *elf = NULL;
		if (fd >= 0 && o->verify(o->verify_arg, fd, p)) {
			elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
			if (elf && elf_kind(elf) == ELF_K_ELF) {
				add_cand(&s, p, fd, elf);
				p = NULL;
				fd = -1;
				elf = NULL;
			}
		}
		elf_end(elf);
		if (fd >= 0)
			close(fd);
		free(p);
		if (s.n == 0) {
			o->status = BSYM_R_NO_BUILD_ID;
			return;
		}
	} else {
		for (size_t d = 0; d < ctx->nr_debug_dirs && !satisfied(&s); d++) {
			if (o->build_id_len >= 2) {
				try_path(&s, hexpath(ctx->debug_dirs[d], o->build_id,
						     o->build_id_len, ".debug"));
				if (!satisfied(&s))
					try_path(&s, hexpath(ctx->debug_dirs[d], o->build_id,
							     o->build_id_len, ""));
			}
			if (d < ctx->nr_user_dirs && !satisfied(&s)) {
				struct bsym_dirscan *sc = dirscan(ctx, d);
				for (size_t i = 0; sc && i < sc->n && !satisfied(&s); i++)
					if (sc->ents[i].len == o->build_id_len &&
					    !memcmp(sc->ents[i].bid, o->build_id, o->build_id_len))
						try_path(&s, strdup(sc->ents[i].path));
			}
		}
		if (orig && !satisfied(&s))
			try_path(&s, under_sysroot(ctx, o->path));
	}

	/* No file holds the object (the vdso): the image the recording carries,
	 * through a memfd so that libdwfl reads it like any file. */
	if (s.main < 0 && o->image)
		try_image(&s, o);

	/* No DWARF yet: .gnu_debuglink of any ELF we have, then debuginfod. */
	for (size_t i = 0, n = s.n; i < n && s.debug < 0; i++)
		search_debuglink(&s, &s.c[i]);
	if (s.debug < 0 && o->build_id_len) {
		char *p;
		int fd = bsym_debuginfod_find(ctx, o->build_id, o->build_id_len, false, &p);
		if (fd >= 0) {
			close(fd);
			try_path(&s, p);
		}
	}
	if (s.main < 0 && s.n == 0 && o->build_id_len) {
		char *p;
		int fd = bsym_debuginfod_find(ctx, o->build_id, o->build_id_len, true, &p);
		if (fd >= 0) {
			close(fd);
			try_path(&s, p);
		}
	}

	if (s.n == 0) {
		o->status = s.mismatch ? BSYM_R_BUILD_ID_MISMATCH : BSYM_R_NO_DEBUGINFO;
		o->loaded = true; /* nothing to read */
		return;
	}
	/* The ELF to report: the real one if found, else the debug file (it
	 * keeps the section table, symbols and program headers). */
	int mi = s.main >= 0 ? s.main : s.debug >= 0 ? s.debug : 0;
	struct cand *m = &s.c[mi];
	struct cand *dbg = s.debug >= 0 && s.debug != mi ? &s.c[s.debug] : NULL;

	load_segments(ctx, o, m);
	o->elf_path = strdup(m->path);
	o->main_mask = m->mask;
	o->debug_mask = dbg ? dbg->mask : 0;
	/* Files found but not chosen still count: without a debug file of
	 * ours, libdwfl looks up D/.build-id/xx/rest.debug itself and may take
	 * a symbol table from one we passed over (a symbols-only .debug). */
	for (size_t i = 0; i < s.n; i++)
		if ((int)i != mi && (!dbg || (int)i != s.debug))
			o->other_mask |= s.c[i].mask | BSYM_SM_PRESENT;
	o->external_dwarf = m->has_altlink || (dbg && dbg->has_altlink);
	o->found_files = true;
	if (dbg || m->debug_only)
		o->cand_debug_path = strdup(dbg ? dbg->path : m->path);
	struct bsym_located *l = calloc(1, sizeof(*l));
	if (!l || !o->elf_path) {
		/* cannot keep them: phase 2 will find nothing, and nothing
		 * is cached (out of memory is transient) */
		free(l);
		close_cands(&s, -1, -1);
		o->transient_failure = true;
		o->loaded = true;
		o->status = BSYM_R_NO_DEBUGINFO;
		return;
	}
	l->main = *m;
	if (dbg) {
		l->debug = *dbg;
		l->has_debug = true;
	}
	close_cands(&s, mi, dbg ? s.debug : -1);
	o->located_files = l;
}

/* Phase 2: hand the files to libdwfl and index the DWARF. */
void bsym_obj_load(struct bsym_ctx *ctx, struct bsym_obj *o)
{
	if (!o->located)
		bsym_obj_locate(ctx, o);
	if (o->loaded)
		return;
	o->loaded = true;
	struct bsym_located *l = o->located_files;
	if (!l)
		return; /* phase 1 settled it (no build-id, not verifiable) */
	o->located_files = NULL;
	struct cand *m = &l->main;
	struct cand *dbg = l->has_debug ? &l->debug : NULL;

	o->pending_debug_fd = -1;
	if (dbg) {
		o->pending_debug_fd = dup(dbg->fd);
		o->pending_debug_path = strdup(dbg->path);
	}

	o->cb.find_elf = cb_find_elf;
	o->cb.find_debuginfo = cb_find_debuginfo;
	o->cb.section_address = dwfl_offline_section_address;
	o->cb.debuginfo_path = &ctx->debuginfo_path;
	o->dwfl = dwfl_begin(&o->cb);
	int fd = o->dwfl ? dup(m->fd) : -1;
	if (fd >= 0) {
		dwfl_report_begin(o->dwfl);
		o->mod = dwfl_report_elf(o->dwfl, "object", m->path, fd, 0, true);
		if (!o->mod)
			close(fd);
		else {
			void **ud = NULL;
			dwfl_module_info(o->mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
			if (ud)
				*ud = o;
		}
		dwfl_report_end(o->dwfl, NULL, NULL);
	}
	if (o->mod) {
		Dwarf_Addr bias = 0;
		Dwarf *dw = dwfl_module_getdwarf(o->mod, &bias);
		if (dw) {
			o->dwbias = bias;
			o->idx = bsym_dwidx_new(dw);
			o->has_dwarf = o->idx != NULL;
			if (dbg || m->debug_only)
				o->debug_path = strdup(dbg ? dbg->path : m->path);
			if (!o->idx)
				o->transient_failure = true; /* out of memory */
			else if (bsym_dwidx_has_split_units(o->idx))
				o->external_dwarf = true;
		}
		/* A .symtab seen in a file we handed over is enough; only
		 * otherwise ask libdwfl, which then sorts every symbol
		 * (.dynsym, MiniDebugInfo) - work the DWARF path never needs. */
		o->has_symtab = m->has_symtab || (dbg && dbg->has_symtab) ||
				dwfl_module_getsymtab(o->mod) > 0;
		/* A Go binary built without symbols (-ldflags="-s -w") still
		 * has the runtime's own table: names, files, lines, inlined
		 * calls.  Only where nothing better is there (.dynsym of a cgo
		 * binary names its imports, not its Go code). */
		bool symtab = m->has_symtab || (dbg && dbg->has_symtab);
		GElf_Addr gbias;
		Elf *gelf = !o->has_dwarf && !symtab ? dwfl_module_getelf(o->mod, &gbias) : NULL;
		struct gopcln_error gerr;
		if (gelf) {
			int gr = gopcln_elf_open(&o->go, gelf, &gerr);
			if (gr == -ENOMEM)
				o->transient_failure = true;
			else if (gr && gr != -ENOENT)
				bsym_log(ctx, BSYM_LOG_WARN, "%s: Go function table unusable: %s", m->path,
					 gerr.message);
		}
		if (o->has_dwarf || o->has_symtab || o->go)
			o->status = BSYM_OK;
	} else {
		bsym_log(ctx, BSYM_LOG_WARN, "%s: libdwfl cannot use it: %s", m->path,
			 dwfl_errmsg(-1));
		o->transient_failure = true; /* maybe out of descriptors: never cached */
	}
	/* DWARF announced by the section headers and not opened: libdw
	 * refused it, or a descriptor or memory ran out.  Not a key's answer. */
	if ((m->has_dwarf || (dbg && dbg->has_dwarf)) && !o->has_dwarf)
		o->transient_failure = true;
	if (o->pending_debug_fd >= 0) { /* never asked for: still ours */
		close(o->pending_debug_fd);
		o->pending_debug_fd = -1;
	}
	bsym_located_free(l);
}

void bsym_obj_release(struct bsym_obj *o)
{
	gopcln_close(o->go); /* before dwfl_end: its bytes are libelf's */
	bsym_dwidx_free(o->idx);
	if (o->dwfl)
		dwfl_end(o->dwfl);
	if (o->pending_debug_fd >= 0)
		close(o->pending_debug_fd);
	free(o->pending_debug_path);
	free(o->segs);
	free(o->elf_path);
	free(o->debug_path);
	free(o->cand_debug_path);
	free(o->cache_key);
	bsym_located_free(o->located_files);
	free(o->path);
	free(o->image);
	bsym_map_free(&o->cache);
	bsym_map_free(&o->fpcache);
	bsym_symtab_free(o->symtab);
	free(o);
}
