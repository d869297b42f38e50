/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cache.c - the persistent symbol cache: answers per (build-id, file
 * offset) kept on disk between reports.  The format, the key and what is
 * never cached are specified in CACHE.md; this file follows it.
 *
 * A cache file is as hostile as a recording: it is read whole, checked
 * whole (lengths, offsets, enums, reserved bits, order, checksum) and only
 * then used; a file that fails any check is not used at all.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bsym_internal.h"
#include "bsym_source_id.h" /* BSYM_SOURCE_ID: hash of libsym's sources, made at build time */

static const uint8_t magic[8] = { 0x7f, 'B', 'S', 'C', '\r', '\n', 0x1a, '\n' };
#define VERSION 1u
#define CHECKSUM_SEED 0x6273796d63616368ull /* "bsymcach" */
#define HDR_FIXED 36u      /* magic, version, flags, file_len, checksum, key_len */
#define ENTRY_SIZE 16u
#define FRAME_SIZE 32u
#define NO_STRING 0xffffffffu
#define NO_REASON 0xffu
#define MAX_FILE (1ull << 30) /* a file above this is not read */
#define NAME_FLAGS (BSYM_NO_INLINE | BSYM_NO_DEMANGLE)

/* ---- little-endian helpers ------------------------------------------------- */

static uint64_t ld(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;
	for (unsigned i = n; i-- > 0;)
		v = (v << 8) | p[i];
	return v;
}

struct wbuf {
	uint8_t *p;
	size_t len, cap;
	bool oom;
};

static void wput(struct wbuf *b, const void *src, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap < b->len + n)
			cap *= 2;
		uint8_t *p = realloc(b->p, cap);
		if (!p) {
			b->oom = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, src, n);
	b->len += n;
}

static void wle(struct wbuf *b, uint64_t v, unsigned n)
{
	uint8_t t[8];
	for (unsigned i = 0; i < n; i++)
		t[i] = (uint8_t)(v >> (8 * i));
	wput(b, t, n);
}

static void sle(uint8_t *p, uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* ---- the parser ---------------------------------------------------------------- */

/* A bounded reader over the file: every read checks what remains. */
struct rd {
	const uint8_t *p;
	size_t left;
};

static bool take(struct rd *r, size_t n, const uint8_t **out)
{
	if (n > r->left)
		return false;
	*out = r->p;
	r->p += n;
	r->left -= n;
	return true;
}

static bool take_le(struct rd *r, unsigned n, uint64_t *v)
{
	const uint8_t *p;
	if (!take(r, n, &p))
		return false;
	*v = ld(p, n);
	return true;
}

#define BAD(msg)            \
	do {                \
		*why = (msg); \
		return -EINVAL; \
	} while (0)

/* One pass over the body; sink NULL: check only. */
static int parse_pass(const uint8_t *buf, size_t len, const struct bsym_cache_sink *sink,
		      const char **why, const uint8_t *key, size_t key_len)
{
	struct rd r = { buf + HDR_FIXED, len - HDR_FIXED };
	const uint8_t *p;
	uint64_t v;

	if (!take(&r, key_len, &p))
		BAD("truncated key");
	if (memcmp(p, key, key_len) != 0)
		return -ESTALE;
	if (!take(&r, 4, &p))
		BAD("truncated header");
	unsigned status = p[0], info = p[1];
	if (status > BSYM_R_INVALID)
		BAD("status out of range");
	if (info & ~3u)
		BAD("reserved info bits set");
	if (p[2] || p[3])
		BAD("reserved header bytes set");
	if (!take_le(&r, 4, &v))
		BAD("truncated string table length");
	if (v == 0 || v > BSYM_CACHE_MAX_STRINGS)
		BAD("string table length out of range");
	size_t slen = (size_t)v;
	const uint8_t *strings;
	if (!take(&r, slen, &strings))
		BAD("string table past the end");
	if (strings[slen - 1] != '\0')
		BAD("string table not NUL-terminated");
	const char *base = (const char *)strings;
	if (sink) {
		int err = sink->info(sink->arg, (enum bsym_reason)status, info & 1, (info & 2) != 0);
		if (err)
			return err;
		base = sink->strings(sink->arg, (const char *)strings, slen);
		if (!base)
			return -ENOMEM;
	}
	if (!take_le(&r, 4, &v))
		BAD("truncated entry count");
	if (v > r.left / ENTRY_SIZE)
		BAD("entry count larger than the file");
	uint64_t nr = v, prev = 0;
	struct bsym_frame frames[BSYM_MAX_INLINE_DEPTH];
	for (uint64_t i = 0; i < nr; i++) {
		if (!take(&r, ENTRY_SIZE, &p))
			BAD("truncated entry");
		uint64_t off = ld(p, 8);
		unsigned fp = p[8], reason = p[9];
		unsigned nf = (unsigned)ld(p + 10, 2);
		if (ld(p + 12, 4))
			BAD("reserved entry bytes set");
		if (i > 0 && off <= prev)
			BAD("entries not in increasing offset order");
		prev = off;
		if (fp > 1 + BSYM_FP_CLOBBERED)
			BAD("frame-pointer state out of range");
		if (reason != NO_REASON && reason > BSYM_R_INVALID)
			BAD("reason out of range");
		if (fp == 0 && reason == NO_REASON)
			BAD("entry with no answer");
		if (reason == BSYM_OK ? (nf == 0 || nf > BSYM_MAX_INLINE_DEPTH) : nf != 0)
			BAD("frame count does not match the reason");
		for (unsigned k = 0; k < nf; k++) {
			if (!take(&r, FRAME_SIZE, &p))
				BAD("truncated frame");
			uint64_t name = ld(p, 4), raw = ld(p + 4, 4), file = ld(p + 8, 4);
			if (name >= slen || raw >= slen || (file != NO_STRING && file >= slen))
				BAD("string offset out of range");
			if (p[20] & ~1u || p[21] || p[22] || p[23])
				BAD("reserved frame bits set");
			frames[k] = (struct bsym_frame){
				.name = base + name,
				.raw_name = base + raw,
				.file = file == NO_STRING ? NULL : base + file,
				.line = (uint32_t)ld(p + 12, 4),
				.column = (uint32_t)ld(p + 16, 4),
				.inlined = p[20] & 1,
				.offset = ld(p + 24, 8),
				.kind = BSYM_FRAME_USER,
			};
		}
		if (sink) {
			struct bsym_result res = { (enum bsym_reason)reason, nf, frames };
			int err = sink->entry(sink->arg, off, fp,
					      reason == NO_REASON ? NULL : &res);
			if (err)
				return err;
		}
	}
	if (r.left)
		BAD("bytes after the last entry");
	return 0;
}

int bsym_cache_parse(const uint8_t *buf, size_t len, const uint8_t *key, size_t key_len,
		     const struct bsym_cache_sink *sink, const char **why)
{
	static const char *dummy;
	if (!why)
		why = &dummy;
	*why = NULL;
	if (!buf || len < HDR_FIXED)
		BAD("shorter than a header");
	if (memcmp(buf, magic, sizeof(magic)) != 0)
		BAD("bad magic");
	if (ld(buf + 8, 4) != VERSION)
		BAD("unknown version");
	if (ld(buf + 12, 4) != 0)
		BAD("reserved flags set");
	if (ld(buf + 16, 8) != len)
		BAD("length differs from the file's (truncated or extended)");
	if (ld(buf + 24, 8) != bsym_hash_bytes(buf + 32, len - 32, CHECKSUM_SEED))
		BAD("checksum mismatch");
	uint64_t kl = ld(buf + 32, 4);
	if (kl == 0 || kl > BSYM_CACHE_MAX_KEY)
		BAD("key length out of range");
	if (kl != key_len) {
		/* still check the rest: a damaged file is reported as such */
		if (kl > len - HDR_FIXED)
			BAD("truncated key");
		return -ESTALE;
	}
	int err = parse_pass(buf, len, NULL, why, key, key_len);
	if (err || !sink)
		return err;
	return parse_pass(buf, len, sink, why, key, key_len);
}

/* ---- keys and names ---------------------------------------------------------- */

static int make_key(const struct bsym_ctx *ctx, const struct bsym_obj *o, uint8_t **out,
		    size_t *out_len)
{
	char producer[256];
	const char *eu = dwfl_version(NULL);
	int n = snprintf(producer, sizeof(producer), "libsym %s elfutils %s", BSYM_SOURCE_ID,
			 eu ? eu : "?");
	if (n < 0 || (size_t)n >= sizeof(producer))
		return -EINVAL;
	struct wbuf b = {0};
	wle(&b, o->build_id_len, 1);
	wput(&b, o->build_id, o->build_id_len);
	wle(&b, ctx->flags & NAME_FLAGS, 4);
	wle(&b, o->main_mask, 4);
	wle(&b, o->debug_mask, 4);
	wle(&b, o->other_mask, 4);
	wle(&b, (uint64_t)n, 2);
	wput(&b, producer, (size_t)n);
	if (b.oom) {
		free(b.p);
		return -ENOMEM;
	}
	*out = b.p;
	*out_len = b.len;
	return 0;
}

/* DIR/v1/BB/REST-KEYHASH.bsc, and DIR/v1/BB */
static char *file_name(const struct bsym_ctx *ctx, const struct bsym_obj *o, char **dir_out)
{
	char hex[2 * BSYM_MAX_BUILD_ID + 1];
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < o->build_id_len; i++) {
		hex[2 * i] = digits[o->build_id[i] >> 4];
		hex[2 * i + 1] = digits[o->build_id[i] & 15];
	}
	hex[2 * o->build_id_len] = '\0';
	uint64_t kh = bsym_hash_bytes(o->cache_key, o->cache_key_len, 0);
	char *path = NULL, *dir = NULL;
	if (asprintf(&dir, "%s/v1/%.2s", ctx->cache_dir, hex) < 0)
		return NULL;
	if (asprintf(&path, "%s/%s-%016llx.bsc", dir, hex + 2, (unsigned long long)kh) < 0) {
		free(dir);
		return NULL;
	}
	if (dir_out)
		*dir_out = dir;
	else
		free(dir);
	return path;
}

bool bsym_cache_writable(const struct bsym_ctx *ctx, const struct bsym_obj *o)
{
	return ctx->cache_dir && o->cache_key && !o->transient_failure && !o->external_dwarf &&
	       !ctx->warned_nofile;
}

/* ---- loading ------------------------------------------------------------------- */

struct load_sink {
	struct bsym_ctx *ctx;
	struct bsym_obj *o;
};

static int sink_info(void *arg, enum bsym_reason status, bool has_dwarf, bool has_symtab)
{
	struct load_sink *s = arg;
	s->o->cached_status = status;
	s->o->cached_has_dwarf = has_dwarf;
	s->o->cached_has_symtab = has_symtab;
	return 0;
}

static const char *sink_strings(void *arg, const char *strings, size_t len)
{
	struct load_sink *s = arg;
	char *c = bsym_arena_alloc(&s->ctx->arena, len);
	if (c)
		memcpy(c, strings, len);
	return c;
}

static int sink_entry(void *arg, uint64_t offset, unsigned fp, const struct bsym_result *res)
{
	struct load_sink *s = arg;
	if (fp && bsym_map_put(&s->o->fpcache, offset, (void *)(uintptr_t)fp))
		return -ENOMEM;
	if (!res)
		return 0;
	const struct bsym_result *r;
	if (res->reason != BSYM_OK) {
		r = bsym_result_reason(res->reason);
	} else {
		struct bsym_result *n = bsym_result_new(s->ctx, res->nr_frames);
		if (!n)
			return -ENOMEM;
		memcpy((struct bsym_frame *)n->frames, res->frames, res->nr_frames * sizeof(*res->frames));
		r = n;
	}
	if (bsym_map_put(&s->o->cache, offset, (void *)r))
		return -ENOMEM;
	s->ctx->cache_stats.entries_loaded++;
	return 0;
}

static int read_whole(int fd, uint8_t **out, size_t *len)
{
	struct stat st;
	if (fstat(fd, &st) != 0)
		return -errno;
	if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size > MAX_FILE)
		return -EINVAL;
	/* a cache names functions: in a directory others may write to
	 * (--cache-dir on shared storage) only our own files, or root's, are
	 * believed, as ssh believes only its user's keys */
	if (st.st_uid != geteuid() && st.st_uid != 0)
		return -EPERM;
	size_t n = (size_t)st.st_size;
	uint8_t *b = malloc(n ? n : 1);
	if (!b)
		return -ENOMEM;
	size_t done = 0;
	while (done < n) {
		ssize_t k = read(fd, b + done, n - done);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break; /* shrank meanwhile: the length check refuses it */
		done += (size_t)k;
	}
	*out = b;
	*len = done;
	return 0;
}

void bsym_cache_attach(struct bsym_ctx *ctx, struct bsym_obj *o)
{
	o->cache_tried = true;
	if (!ctx->cache_dir || !o->found_files || !o->build_id_len || o->external_dwarf ||
	    o->transient_failure)
		return;
	if (make_key(ctx, o, &o->cache_key, &o->cache_key_len))
		return;
	char *path = file_name(ctx, o, NULL);
	if (!path)
		return;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		free(path);
		return; /* not cached yet (or unreadable: the save will say) */
	}
	uint8_t *buf = NULL;
	size_t len = 0;
	const char *why = NULL;
	int err = read_whole(fd, &buf, &len);
	if (!err) {
		struct load_sink ls = { ctx, o };
		struct bsym_cache_sink sink = { &ls, sink_info, sink_strings, sink_entry };
		/* check everything before using anything */
		err = bsym_cache_parse(buf, len, o->cache_key, o->cache_key_len, NULL, &why);
		if (!err)
			err = bsym_cache_parse(buf, len, o->cache_key, o->cache_key_len, &sink, &why);
	}
	if (!err) {
		o->cache_info = true;
		ctx->cache_stats.files_loaded++;
		futimens(fd, NULL); /* recently used: evicted last */
	} else {
		/* Nothing from it is trusted: drop what a failing pass may have
		 * put in the maps (only -ENOMEM can fail after the check). */
		bsym_map_free(&o->cache);
		bsym_map_free(&o->fpcache);
		o->cache_info = false;
		if (err == -EINVAL) {
			ctx->cache_stats.files_damaged++;
			bsym_log(ctx, BSYM_LOG_WARN, "cache file %s is damaged (%s): ignored, rebuilt",
				 path, why ? why : "invalid");
		} else if (err == -EPERM) {
			bsym_log(ctx, BSYM_LOG_WARN, "cache file %s belongs to another user: ignored, replaced",
				 path);
		} else if (err == -ESTALE) {
			bsym_log(ctx, BSYM_LOG_INFO, "cache file %s is for another key: ignored", path);
		}
		/* the next save replaces it */
		o->cache_dirty = true;
	}
	free(buf);
	close(fd);
	free(path);
}

/* ---- saving ------------------------------------------------------------------ */

/* Strings deduplicated by content into one table. */
struct strtab {
	struct wbuf data;
	uint64_t *hashes;
	uint32_t *offs;
	size_t cap, nr;
};

static uint32_t str_add(struct strtab *t, const char *s)
{
	size_t n = strlen(s);
	uint64_t h = bsym_hash_bytes(s, n, 1);
	if ((t->nr + 1) * 2 > t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 1024;
		uint64_t *hs = calloc(cap, sizeof(*hs));
		uint32_t *os = calloc(cap, sizeof(*os));
		if (!hs || !os) {
			free(hs);
			free(os);
			t->data.oom = true;
			return 0;
		}
		for (size_t i = 0; i < t->cap; i++) {
			if (!t->offs[i])
				continue;
			size_t j = t->hashes[i] & (cap - 1);
			while (os[j])
				j = (j + 1) & (cap - 1);
			hs[j] = t->hashes[i];
			os[j] = t->offs[i];
		}
		free(t->hashes);
		free(t->offs);
		t->hashes = hs;
		t->offs = os;
		t->cap = cap;
	}
	size_t j = h & (t->cap - 1);
	/* offs holds offset + 1: 0 is an empty slot */
	for (; t->offs[j]; j = (j + 1) & (t->cap - 1))
		if (t->hashes[j] == h && !strcmp((const char *)t->data.p + t->offs[j] - 1, s))
			return t->offs[j] - 1;
	if (t->data.len + n + 1 > BSYM_CACHE_MAX_STRINGS) {
		t->data.oom = true;
		return 0;
	}
	uint32_t off = (uint32_t)t->data.len;
	wput(&t->data, s, n + 1);
	t->hashes[j] = h;
	t->offs[j] = off + 1;
	t->nr++;
	return off;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The file's bytes for o, from its maps. */
static int serialize(const struct bsym_obj *o, struct wbuf *out)
{
	size_t cap = o->cache.len + o->fpcache.len;
	uint64_t *offs = malloc((cap ? cap : 1) * sizeof(*offs));
	size_t nr = 0;
	struct strtab st = {0};
	struct wbuf ents = {0};
	int err = 0;

	if (!offs)
		return -ENOMEM;
	for (size_t i = 0; i < o->cache.cap; i++)
		if (o->cache.slots[i].val)
			offs[nr++] = o->cache.slots[i].key;
	for (size_t i = 0; i < o->fpcache.cap; i++)
		if (o->fpcache.slots[i].val && !bsym_map_get(&o->cache, o->fpcache.slots[i].key))
			offs[nr++] = o->fpcache.slots[i].key;
	qsort(offs, nr, sizeof(*offs), cmp_u64);

	str_add(&st, ""); /* a table is never empty */
	for (size_t i = 0; i < nr; i++) {
		const struct bsym_result *r = bsym_map_get(&o->cache, offs[i]);
		uintptr_t fp = (uintptr_t)bsym_map_get(&o->fpcache, offs[i]);
		unsigned nf = r && r->reason == BSYM_OK ? r->nr_frames : 0;
		if (nf > BSYM_MAX_INLINE_DEPTH)
			nf = BSYM_MAX_INLINE_DEPTH; /* cannot happen: the index bounds chains */
		wle(&ents, offs[i], 8);
		wle(&ents, fp, 1);
		wle(&ents, r ? (uint64_t)r->reason : NO_REASON, 1);
		wle(&ents, nf, 2);
		wle(&ents, 0, 4);
		for (unsigned k = 0; k < nf; k++) {
			const struct bsym_frame *f = &r->frames[k];
			wle(&ents, str_add(&st, f->name), 4);
			wle(&ents, str_add(&st, f->raw_name), 4);
			wle(&ents, f->file ? str_add(&st, f->file) : NO_STRING, 4);
			wle(&ents, f->line, 4);
			wle(&ents, f->column, 4);
			wle(&ents, f->inlined ? 1 : 0, 1);
			wle(&ents, 0, 3);
			wle(&ents, f->offset, 8);
		}
	}
	if (st.data.oom || ents.oom) {
		err = -ENOMEM;
		goto out;
	}
	enum bsym_reason status = o->loaded ? o->status : o->cached_status;
	bool has_dwarf = o->loaded ? o->has_dwarf : o->cached_has_dwarf;
	bool has_symtab = o->loaded ? o->has_symtab : o->cached_has_symtab;

	wput(out, magic, sizeof(magic));
	wle(out, VERSION, 4);
	wle(out, 0, 4);
	wle(out, 0, 8); /* file_len, below */
	wle(out, 0, 8); /* checksum, below */
	wle(out, o->cache_key_len, 4);
	wput(out, o->cache_key, o->cache_key_len);
	wle(out, status, 1);
	wle(out, (has_dwarf ? 1 : 0) | (has_symtab ? 2 : 0), 1);
	wle(out, 0, 2);
	wle(out, st.data.len, 4);
	wput(out, st.data.p, st.data.len);
	wle(out, nr, 4);
	wput(out, ents.p, ents.len);
	if (out->oom) {
		err = -ENOMEM;
		goto out;
	}
	sle(out->p + 16, out->len, 8);
	sle(out->p + 24, bsym_hash_bytes(out->p + 32, out->len - 32, CHECKSUM_SEED), 8);
out:
	free(offs);
	free(st.data.p);
	free(st.hashes);
	free(st.offs);
	free(ents.p);
	return err;
}

/* mkdir -p, mode 0700 for what it creates */
static int mkdirs(const char *path)
{
	char *p = strdup(path);
	if (!p)
		return -ENOMEM;
	int err = 0;
	for (char *s = p + 1;; s++) {
		if (*s != '/' && *s)
			continue;
		char c = *s;
		*s = '\0';
		if (mkdir(p, 0700) != 0 && errno != EEXIST) {
			err = -errno;
			break;
		}
		if (!c)
			break;
		*s = c;
	}
	free(p);
	return err;
}

int bsym_cache_dir_ready(const char *dir)
{
	int err = mkdirs(dir);

	if (!err && access(dir, W_OK | X_OK) != 0)
		err = -errno;
	return err;
}

static int write_file(struct bsym_ctx *ctx, struct bsym_obj *o)
{
	char *dir = NULL, *path = file_name(ctx, o, &dir), *tmp = NULL;
	struct wbuf b = {0};
	int fd = -1, err;

	if (!path)
		return -ENOMEM;
	err = mkdirs(dir);
	if (!err)
		err = serialize(o, &b);
	if (err)
		goto out;
	if (asprintf(&tmp, "%s/.%s.tmp.%ld.%u", dir, strrchr(path, '/') + 1, (long)getpid(),
		     ctx->cache_seq++) < 0) {
		tmp = NULL;
		err = -ENOMEM;
		goto out;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	for (size_t done = 0; done < b.len;) {
		ssize_t k = write(fd, b.p + done, b.len - done);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			err = k < 0 ? -errno : -EIO;
			goto out;
		}
		done += (size_t)k;
	}
	if (close(fd) != 0) {
		fd = -1;
		err = -errno;
		goto out;
	}
	fd = -1;
	if (rename(tmp, path) != 0) {
		err = -errno;
		goto out;
	}
	ctx->cache_stats.files_saved++;
	o->cache_dirty = false;
out:
	if (fd >= 0)
		close(fd);
	if (err && tmp)
		unlink(tmp);
	if (err)
		bsym_log(ctx, BSYM_LOG_WARN, "cannot write cache file %s: %s", path, strerror(-err));
	free(tmp);
	free(path);
	free(dir);
	free(b.p);
	return err;
}

/* ---- the size bound ------------------------------------------------------------- */

struct cfile {
	char *path;
	uint64_t size;
	struct timespec mtime;
};

static int cmp_age(const void *a, const void *b)
{
	const struct cfile *x = a, *y = b;
	if (x->mtime.tv_sec != y->mtime.tv_sec)
		return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
	if (x->mtime.tv_nsec != y->mtime.tv_nsec)
		return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
	return strcmp(x->path, y->path);
}

static void evict(struct bsym_ctx *ctx)
{
	char *root = NULL;
	if (asprintf(&root, "%s/v1", ctx->cache_dir) < 0)
		return;
	DIR *top = opendir(root);
	struct cfile *files = NULL;
	size_t nr = 0, cap = 0;
	uint64_t total = 0;
	time_t now = time(NULL);
	struct dirent *de;

	while (top && (de = readdir(top))) {
		if (strlen(de->d_name) != 2 || de->d_name[0] == '.')
			continue;
		char *sub = NULL;
		if (asprintf(&sub, "%s/%s", root, de->d_name) < 0)
			break;
		DIR *d = opendir(sub);
		struct dirent *fe;
		while (d && (fe = readdir(d))) {
			const char *n = fe->d_name;
			size_t l = strlen(n);
			bool tmp = n[0] == '.' && strstr(n, ".tmp.");
			if (!tmp && (l < 4 || strcmp(n + l - 4, ".bsc")))
				continue;
			char *p = NULL;
			struct stat st;
			if (asprintf(&p, "%s/%s", sub, n) < 0)
				continue;
			if (lstat(p, &st) != 0 || !S_ISREG(st.st_mode)) {
				free(p);
				continue;
			}
			if (tmp) { /* a writer that died an hour ago */
				if (now - st.st_mtim.tv_sec > 3600)
					unlink(p);
				free(p);
				continue;
			}
			if (nr == cap) {
				size_t nc = cap ? cap * 2 : 256;
				struct cfile *nf = realloc(files, nc * sizeof(*nf));
				if (!nf) {
					free(p);
					break;
				}
				files = nf;
				cap = nc;
			}
			files[nr++] = (struct cfile){ p, (uint64_t)st.st_size, st.st_mtim };
			total += (uint64_t)st.st_size;
		}
		if (d)
			closedir(d);
		free(sub);
	}
	if (top)
		closedir(top);
	if (total > ctx->cache_max_bytes) {
		qsort(files, nr, sizeof(*files), cmp_age);
		uint64_t goal = ctx->cache_max_bytes / 4 * 3;
		for (size_t i = 0; i < nr && total > goal; i++) {
			if (unlink(files[i].path) == 0) {
				total -= files[i].size;
				ctx->cache_stats.files_evicted++;
			}
		}
	}
	for (size_t i = 0; i < nr; i++)
		free(files[i].path);
	free(files);
	free(root);
}

int bsym_cache_save(struct bsym_ctx *ctx)
{
	int first = 0;
	bool wrote = false;

	if (!ctx || !ctx->cache_dir)
		return 0;
	for (size_t i = 0; i < ctx->nr_objs; i++) {
		struct bsym_obj *o = ctx->objs[i];
		if (!o->cache_dirty || !bsym_cache_writable(ctx, o) || (!o->loaded && !o->cache_info))
			continue;
		if (!o->cache.len && !o->fpcache.len)
			continue;
		int err = write_file(ctx, o);
		if (err && !first)
			first = err;
		if (err == -EACCES || err == -EROFS || err == -ENOSPC || err == -EDQUOT)
			break; /* the same for every file: say it once */
		wrote |= !err;
	}
	if (wrote)
		evict(ctx);
	return first;
}

void bsym_cache_get_stats(const struct bsym_ctx *ctx, struct bsym_cache_stats *out)
{
	if (!out)
		return;
	memset(out, 0, sizeof(*out));
	if (ctx)
		*out = ctx->cache_stats;
}
