// SPDX-License-Identifier: Apache-2.0
/*
 * tabcache.c - unwind tables kept on disk between recordings (tabcache.h).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "tabcache.h"

#define TC_MAGIC "BPRFUT02" /* 02: Go rows, UNWIND_CFA_GO_STACK */
#define TC_ID_MAX 64
#define TC_SEED 0x62707266746162ULL /* "bprftab" */
/* bounds a file may claim before anything is allocated for it */
#define TC_MAX_ROWS (1u << 28)
#define TC_MAX_PAGES (1u << 20)
#define TC_MAX_FILE ((size_t)256 << 20)

/*
 * The file: this header, then nr_rules struct unwind_rule (the table's own
 * rules, index 0 the all-zero UNWIND_CFA_NONE), nr_rows u32 rows
 * (UNWIND_ROW(lo, index into those rules)), nr_pages struct ehtab_page
 * (page, first, nr: in increasing page order, their rows back to back).
 * Host byte order: the cache never leaves the host that wrote it (the
 * magic read in another order does not match).
 */
struct tc_header {
	char magic[8];
	uint32_t header_size;
	uint32_t rule_size;
	uint8_t recorder_id[TC_ID_MAX];
	uint32_t recorder_id_len;
	uint8_t object_id[TC_ID_MAX];
	uint32_t object_id_len;
	uint64_t src_len, src_vaddr, src_hash;
	uint32_t nr_rules, nr_rows, nr_pages, reserved;
	uint64_t body_hash; /* tabcache_hash of everything after the header */
};
_Static_assert(sizeof(struct tc_header) == 200, "tc_header layout");
_Static_assert(sizeof(struct unwind_rule) == 12, "unwind_rule layout");
_Static_assert(sizeof(struct ehtab_page) == 12, "ehtab_page layout");

struct tabcache {
	int dfd;
	uint8_t rid[TC_ID_MAX];
	size_t rid_len;
	struct tabcache_stats st;
};

uint64_t tabcache_hash(const uint8_t *p, size_t n, uint64_t seed)
{
	uint64_t h = seed ^ (n * 0x9e3779b97f4a7c15ULL), w = 0;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		memcpy(&w, p + i, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdULL;
		h ^= h >> 29;
	}
	w = 0;
	memcpy(&w, p + i, n - i);
	h = (h ^ w ^ (n - i)) * 0xc4ceb9fe1a85ec53ULL;
	return h ^ (h >> 32);
}

/* ---- the recorder's own build-id ---------------------------------------- */

struct own_id {
	uint8_t *id;
	size_t len;
};

static int find_own_id(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct own_id *o = arg;

	(void)size;
	/* the first object is the program itself */
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const uint8_t *p, *end;

		if (ph->p_type != PT_NOTE)
			continue;
		p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
		end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
			size_t name = (n->n_namesz + 3) & ~(size_t)3, desc = (n->n_descsz + 3) & ~(size_t)3;
			const uint8_t *d = p + sizeof(*n) + name;

			if (d + desc > end || d < p)
				break;
			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
			    !memcmp(p + sizeof(*n), "GNU", 4) && n->n_descsz && n->n_descsz <= TC_ID_MAX) {
				memcpy(o->id, d, n->n_descsz);
				o->len = n->n_descsz;
				return 1;
			}
			p = d + desc;
		}
	}
	return 1; /* only the program */
}

/* ---- the directory ------------------------------------------------------ */

/* mkdir -p, new directories 0700 */
static int make_dirs(const char *dir)
{
	char *p = strdup(dir);
	int err = 0;

	if (!p)
		return -ENOMEM;
	for (char *s = p + 1;; s++) {
		if (*s != '/' && *s)
			continue;
		char c = *s;

		*s = 0;
		if (mkdir(p, 0700) && errno != EEXIST) {
			err = -errno;
			break;
		}
		*s = c;
		if (!c)
			break;
	}
	free(p);
	return err;
}

int tabcache_open(struct tabcache **out, const char *dir, const char **why)
{
	struct tabcache *c = calloc(1, sizeof(*c));
	struct own_id o;
	struct stat st;
	int err;

	*out = NULL;
	*why = "out of memory";
	if (!c)
		return -ENOMEM;
	c->dfd = -1;
	o = (struct own_id){ .id = c->rid };
	dl_iterate_phdr(find_own_id, &o);
	c->rid_len = o.len;
	if (!c->rid_len) {
		*why = "prof-record has no build-id of its own to key the files by";
		err = -ENOENT;
		goto fail;
	}
	if (!dir || !*dir)
		dir = TABCACHE_DEFAULT_DIR;
	err = make_dirs(dir);
	if (err) {
		*why = "the directory cannot be made";
		goto fail;
	}
	c->dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (c->dfd < 0) {
		err = -errno;
		*why = "the directory cannot be opened";
		goto fail;
	}
	/* tables steer the BPF walk: a directory others can write to (or
	 * that someone else owns) would let them choose its stacks */
	if (fstat(c->dfd, &st) || st.st_uid != geteuid() || (st.st_mode & 022)) {
		err = -EPERM;
		*why = "the directory belongs to another user or others may write to it";
		goto fail;
	}
	*out = c;
	return 0;
fail:
	if (c->dfd >= 0)
		close(c->dfd);
	free(c);
	return err;
}

void tabcache_stats(const struct tabcache *c, struct tabcache_stats *st)
{
	if (c)
		*st = c->st;
	else
		memset(st, 0, sizeof(*st));
}

static void file_name(const struct tabcache *c, const struct tabcache_key *k, char *buf,
		      size_t size)
{
	size_t at = 0;

	for (size_t i = 0; i < k->build_id_len && at + 3 < size; i++)
		at += (size_t)snprintf(buf + at, size - at, "%02x", k->build_id[i]);
	at += (size_t)snprintf(buf + at, size - at, "-");
	/* 8 bytes of the recorder's id tell its files apart */
	for (size_t i = 0; i < c->rid_len && i < 8 && at + 3 < size; i++)
		at += (size_t)snprintf(buf + at, size - at, "%02x", c->rid[i]);
	snprintf(buf + at, size - at, ".tab");
}

/* ---- reading ------------------------------------------------------------ */

static bool rule_ok(const struct unwind_rule *r)
{
	return r->cfa_kind < UNWIND_CFA_KIND_MAX && r->rbp_kind <= UNWIND_RBP_UNDEFINED &&
	       r->ra_kind <= UNWIND_RA_REG;
}

int tabcache_parse(const uint8_t *buf, size_t len, const uint8_t *recorder_id,
		   size_t recorder_id_len, const struct tabcache_key *k, struct ehtab_rules *rs,
		   struct ehtab_packed *out)
{
	static const struct unwind_rule none;
	struct tc_header h;
	const uint8_t *rules, *rows, *pages;
	uint16_t *global = NULL;
	uint64_t next = 0;
	size_t body;
	int err;

	memset(out, 0, sizeof(*out));
	if (len < sizeof(h))
		return -EINVAL;
	memcpy(&h, buf, sizeof(h));
	if (memcmp(h.magic, TC_MAGIC, 8) || h.header_size != sizeof(h) ||
	    h.rule_size != sizeof(struct unwind_rule) || h.reserved)
		return -EINVAL;
	/* ids are zero past their length: one file, one spelling */
	for (size_t i = 0; i < TC_ID_MAX; i++)
		if ((i >= h.recorder_id_len && h.recorder_id[i]) ||
		    (i >= h.object_id_len && h.object_id[i]))
			return -EINVAL;
	/* another recorder's, or another object's: not ours to use */
	if (recorder_id_len > TC_ID_MAX || h.recorder_id_len != recorder_id_len ||
	    memcmp(h.recorder_id, recorder_id, recorder_id_len) || k->build_id_len > TC_ID_MAX ||
	    h.object_id_len != k->build_id_len || memcmp(h.object_id, k->build_id, k->build_id_len) ||
	    h.src_len != k->src_len || h.src_vaddr != k->src_vaddr || h.src_hash != k->src_hash)
		return -ENOENT;
	if (!h.nr_rules || h.nr_rules > UNWIND_MAX_RULES || !h.nr_rows || h.nr_rows > TC_MAX_ROWS ||
	    !h.nr_pages || h.nr_pages > TC_MAX_PAGES)
		return -EINVAL;
	body = (size_t)h.nr_rules * sizeof(struct unwind_rule) + (size_t)h.nr_rows * 4 +
	       (size_t)h.nr_pages * sizeof(struct ehtab_page);
	if (len - sizeof(h) != body || tabcache_hash(buf + sizeof(h), body, TC_SEED) != h.body_hash)
		return -EINVAL;
	rules = buf + sizeof(h);
	rows = rules + (size_t)h.nr_rules * sizeof(struct unwind_rule);
	pages = rows + (size_t)h.nr_rows * 4;

	/* everything is checked before anything is interned */
	for (uint32_t i = 0; i < h.nr_rules; i++) {
		struct unwind_rule r;

		memcpy(&r, rules + (size_t)i * sizeof(r), sizeof(r));
		if (!rule_ok(&r) || (i == 0) != !memcmp(&r, &none, sizeof(r)))
			return -EINVAL;
	}
	for (uint32_t i = 0; i < h.nr_pages; i++) {
		struct ehtab_page pg, prev;

		memcpy(&pg, pages + (size_t)i * sizeof(pg), sizeof(pg));
		if (i)
			memcpy(&prev, pages + (size_t)(i - 1) * sizeof(prev), sizeof(prev));
		/* back to back, in increasing page order, every row in one */
		if (pg.first != next || !pg.nr || pg.nr > UNWIND_PAGE_MAX_ROWS ||
		    (uint64_t)pg.first + pg.nr > h.nr_rows || (i && pg.page <= prev.page))
			return -EINVAL;
		for (uint32_t j = pg.first; j < pg.first + pg.nr; j++) {
			uint32_t row, before;

			memcpy(&row, rows + (size_t)j * 4, 4);
			if (UNWIND_ROW_RULE(row) >= h.nr_rules)
				return -EINVAL;
			if (j > pg.first) {
				memcpy(&before, rows + (size_t)(j - 1) * 4, 4);
				if (UNWIND_ROW_LO(row) <= UNWIND_ROW_LO(before))
					return -EINVAL; /* the BPF search needs them sorted */
			}
		}
		next = (uint64_t)pg.first + pg.nr;
	}
	if (next != h.nr_rows)
		return -EINVAL;

	global = malloc((size_t)h.nr_rules * sizeof(*global));
	out->rows = malloc((size_t)h.nr_rows * 4);
	out->pages = malloc((size_t)h.nr_pages * sizeof(struct ehtab_page));
	if (!global || !out->rows || !out->pages) {
		err = -ENOMEM;
		goto fail;
	}
	for (uint32_t i = 0; i < h.nr_rules; i++) {
		struct unwind_rule r;

		memcpy(&r, rules + (size_t)i * sizeof(r), sizeof(r));
		err = ehtab_rules_intern(rs, &r, &global[i]);
		if (err)
			goto fail;
	}
	for (uint32_t j = 0; j < h.nr_rows; j++) {
		uint32_t row;

		memcpy(&row, rows + (size_t)j * 4, 4);
		out->rows[j] = UNWIND_ROW(UNWIND_ROW_LO(row), global[UNWIND_ROW_RULE(row)]);
	}
	memcpy(out->pages, pages, (size_t)h.nr_pages * sizeof(struct ehtab_page));
	out->nr_rows = h.nr_rows;
	out->nr_pages = h.nr_pages;
	free(global);
	return 0;
fail:
	free(global);
	ehtab_packed_free(out);
	memset(out, 0, sizeof(*out));
	return err;
}

int tabcache_seal(uint8_t *buf, size_t len, struct tabcache_key *k, const uint8_t **rid,
		  size_t *rid_len)
{
	struct tc_header h;

	if (len < sizeof(h))
		return -EINVAL;
	memcpy(&h, buf, sizeof(h));
	h.body_hash = tabcache_hash(buf + sizeof(h), len - sizeof(h), TC_SEED);
	memcpy(buf + offsetof(struct tc_header, body_hash), &h.body_hash, sizeof(h.body_hash));
	*k = (struct tabcache_key){
		.build_id = buf + offsetof(struct tc_header, object_id),
		.build_id_len = h.object_id_len < TC_ID_MAX ? h.object_id_len : TC_ID_MAX,
		.src_len = h.src_len, .src_vaddr = h.src_vaddr, .src_hash = h.src_hash,
	};
	*rid = buf + offsetof(struct tc_header, recorder_id);
	*rid_len = h.recorder_id_len < TC_ID_MAX ? h.recorder_id_len : TC_ID_MAX;
	return 0;
}

int tabcache_get(struct tabcache *c, const struct tabcache_key *k, struct ehtab_rules *rs,
		 struct ehtab_packed *out)
{
	char name[2 * TC_ID_MAX + 32];
	struct stat st;
	uint8_t *buf = NULL;
	size_t got = 0;
	int fd, err;

	memset(out, 0, sizeof(*out));
	file_name(c, k, name, sizeof(name));
	fd = openat(c->dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		c->st.misses++;
		return -ENOENT;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
	    (uint64_t)st.st_size > TC_MAX_FILE) {
		err = -EINVAL;
		goto out;
	}
	buf = malloc((size_t)st.st_size);
	if (!buf) {
		err = -ENOMEM;
		goto out;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);

		if (n <= 0) {
			err = n < 0 && errno == EINTR ? 0 : -EINVAL;
			if (err)
				goto out;
			continue;
		}
		got += (size_t)n;
	}
	err = tabcache_parse(buf, got, c->rid, c->rid_len, k, rs, out);
	if (!err)
		futimens(fd, NULL); /* recently used: trimmed last */
out:
	if (err == -EINVAL || err == -ENOENT)
		c->st.rejected++; /* the put after the build replaces it */
	if (err)
		c->st.misses++;
	else
		c->st.hits++;
	free(buf);
	close(fd);
	return err;
}

/* ---- writing ------------------------------------------------------------ */

static int write_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int tabcache_put(struct tabcache *c, const struct tabcache_key *k, const struct ehtab_packed *pk,
		 const struct ehtab_rules *rs)
{
	char name[2 * TC_ID_MAX + 32], tmp[2 * TC_ID_MAX + 48];
	struct tc_header h = { .header_size = sizeof(h), .rule_size = sizeof(struct unwind_rule) };
	uint16_t *local = NULL, *rule_of = NULL;
	uint8_t *buf = NULL;
	uint32_t nr_rules = 1;
	size_t body, at;
	int fd = -1, err = -ENOMEM;

	if (!pk->nr_rows || !pk->nr_pages || pk->nr_rows > TC_MAX_ROWS ||
	    pk->nr_pages > TC_MAX_PAGES || k->build_id_len > TC_ID_MAX || !k->build_id_len)
		return -EINVAL;
	/* the table's own rules: index 0 stays UNWIND_CFA_NONE */
	local = calloc(UNWIND_MAX_RULES, sizeof(*local));
	rule_of = malloc(UNWIND_MAX_RULES * sizeof(*rule_of));
	if (!local || !rule_of)
		goto out;
	rule_of[0] = 0;
	for (size_t j = 0; j < pk->nr_rows; j++) {
		uint32_t g = UNWIND_ROW_RULE(pk->rows[j]);

		if (g && !local[g]) {
			local[g] = (uint16_t)nr_rules;
			rule_of[nr_rules++] = (uint16_t)g;
		}
	}
	body = (size_t)nr_rules * sizeof(struct unwind_rule) + pk->nr_rows * 4 +
	       pk->nr_pages * sizeof(struct ehtab_page);
	buf = malloc(sizeof(h) + body);
	if (!buf)
		goto out;
	at = sizeof(h);
	for (uint32_t i = 0; i < nr_rules; i++) {
		const struct unwind_rule *r = ehtab_rules_get(rs, rule_of[i]);

		if (!r) {
			err = -EINVAL;
			goto out;
		}
		memcpy(buf + at, r, sizeof(*r));
		at += sizeof(*r);
	}
	for (size_t j = 0; j < pk->nr_rows; j++) {
		uint32_t g = UNWIND_ROW_RULE(pk->rows[j]);
		uint32_t row = UNWIND_ROW(UNWIND_ROW_LO(pk->rows[j]), g ? local[g] : 0);

		memcpy(buf + at, &row, 4);
		at += 4;
	}
	memcpy(buf + at, pk->pages, pk->nr_pages * sizeof(struct ehtab_page));
	memcpy(h.magic, TC_MAGIC, 8);
	memcpy(h.recorder_id, c->rid, c->rid_len);
	h.recorder_id_len = (uint32_t)c->rid_len;
	memcpy(h.object_id, k->build_id, k->build_id_len);
	h.object_id_len = (uint32_t)k->build_id_len;
	h.src_len = k->src_len;
	h.src_vaddr = k->src_vaddr;
	h.src_hash = k->src_hash;
	h.nr_rules = nr_rules;
	h.nr_rows = (uint32_t)pk->nr_rows;
	h.nr_pages = (uint32_t)pk->nr_pages;
	h.body_hash = tabcache_hash(buf + sizeof(h), body, TC_SEED);
	memcpy(buf, &h, sizeof(h));

	/* whole or not at all: a reader never sees a file being written */
	file_name(c, k, name, sizeof(name));
	snprintf(tmp, sizeof(tmp), ".%s.%d", name, (int)getpid());
	fd = openat(c->dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	err = write_all(fd, buf, sizeof(h) + body);
	if (!err && close(fd))
		err = -errno;
	fd = -1;
	if (!err && renameat(c->dfd, tmp, c->dfd, name))
		err = -errno;
	if (err)
		unlinkat(c->dfd, tmp, 0);
	else
		c->st.written++;
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	free(local);
	free(rule_of);
	return err;
}

/* ---- trimming ----------------------------------------------------------- */

struct tc_file {
	char *name;
	uint64_t size;
	struct timespec mtime;
};

static int by_mtime(const void *a, const void *b)
{
	const struct tc_file *x = a, *y = b;

	if (x->mtime.tv_sec != y->mtime.tv_sec)
		return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
	return (x->mtime.tv_nsec > y->mtime.tv_nsec) - (x->mtime.tv_nsec < y->mtime.tv_nsec);
}

/* The directory down to 3/4 of TABCACHE_MAX_BYTES, least recently used
 * first, when it grew past it.  Only *.tab files count and go, and the
 * temporary files of writers that died (an hour old). */
static void trim(struct tabcache *c)
{
	int fd = openat(c->dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct tc_file *f = NULL;
	size_t n = 0, cap = 0;
	uint64_t total = 0;
	struct dirent *e;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name);
		struct stat st;

		if (fstatat(c->dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		/* a temporary file an hour old: its writer died mid-write */
		if (e->d_name[0] == '.' && l > 5 && strstr(e->d_name, ".tab.") &&
		    st.st_mtim.tv_sec + 3600 < time(NULL)) {
			unlinkat(c->dfd, e->d_name, 0);
			continue;
		}
		if (l < 5 || e->d_name[0] == '.' || strcmp(e->d_name + l - 4, ".tab"))
			continue;
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 64;
			void *p = realloc(f, nc * sizeof(*f));

			if (!p)
				break;
			f = p;
			cap = nc;
		}
		f[n].name = strdup(e->d_name);
		if (!f[n].name)
			break;
		f[n].size = (uint64_t)st.st_size;
		f[n].mtime = st.st_mtim;
		total += f[n].size;
		n++;
	}
	closedir(d);
	if (total > TABCACHE_MAX_BYTES) {
		qsort(f, n, sizeof(*f), by_mtime);
		for (size_t i = 0; i < n && total > TABCACHE_MAX_BYTES / 4 * 3; i++) {
			if (!unlinkat(c->dfd, f[i].name, 0)) {
				total -= f[i].size;
				c->st.evicted++;
			}
		}
	}
	for (size_t i = 0; i < n; i++)
		free(f[i].name);
	free(f);
}

void tabcache_close(struct tabcache *c)
{
	if (!c)
		return;
	if (c->st.written)
		trim(c);
	close(c->dfd);
	free(c);
}
