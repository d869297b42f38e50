// SPDX-License-Identifier: Apache-2.0
/*
 * perfmap.c - perf maps copied while they can be read (DESIGN.md, "JIT
 * code: perf maps and jitdump").
 *
 * A JIT writes /tmp/perf-NSPID.map in its own mount namespace, reached
 * from here as /proc/PID/root/tmp, which is gone the moment the process
 * has exited: the recorder hears of an exit from the kernel after the
 * fact.  So the process's /tmp is opened (O_PATH) while it lives and kept
 * open, one descriptor per distinct directory (all the processes of one
 * container or host share one), and the map is read through it then, at
 * each later read of the process, when the image ends and at the end.
 *
 * The file is in a directory anyone may write to, with a name anyone can
 * guess: it is taken only when it is a regular file (a FIFO would block
 * the recorder, a symlink could make root copy any file into the
 * recording), owned by the process's user or root, and not older than the
 * process (a map left behind by an earlier process of the same pid).
 */
#define _GNU_SOURCE /* O_PATH */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "perfmap.h"

/* mtime granularity (the kernel's coarse clock) and start time rounding
 * (clock ticks): a map written in the process's first tick is not stale */
#define STALE_SLACK_NS 2000000000ULL

struct pm_dir {
	int fd;
	uint64_t dev, ino;
};

struct perfmap_dirs {
	struct perfmap_limits lim;
	struct pm_dir *dirs;
	unsigned nr_dirs;
	unsigned jd_open; /* jitdumps kept open */
	struct perfmap_stats st;
};

int perfmap_dirs_new(struct perfmap_dirs **out, const struct perfmap_limits *lim)
{
	struct perfmap_dirs *d = calloc(1, sizeof(*d));

	*out = NULL;
	if (!d)
		return -ENOMEM;
	if (lim)
		d->lim = *lim;
	else
		d->lim = (struct perfmap_limits){ PERFMAP_PER_IMAGE_DEFAULT, PERFMAP_TOTAL_DEFAULT,
						  PERFMAP_MAX_DIRS_DEFAULT };
	d->dirs = calloc(d->lim.max_dirs ? d->lim.max_dirs : 1, sizeof(*d->dirs));
	if (!d->dirs) {
		free(d);
		return -ENOMEM;
	}
	*out = d;
	return 0;
}

void perfmap_dirs_free(struct perfmap_dirs *d)
{
	if (!d)
		return;
	for (unsigned i = 0; i < d->nr_dirs; i++)
		close(d->dirs[i].fd);
	free(d->dirs);
	free(d);
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The process's start as CLOCK_REALTIME (field 22 of /proc/PID/stat, clock
 * ticks since boot); 0 when it cannot be read. */
static uint64_t start_realtime(uint32_t pid)
{
	char path[64], buf[1024], *s;
	unsigned long long ticks = 0;
	long hz = sysconf(_SC_CLK_TCK);
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0 || hz <= 0)
		return 0;
	buf[n] = 0;
	s = strrchr(buf, ')'); /* comm may hold spaces and parentheses */
	if (!s || sscanf(s + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
			 &ticks) != 1)
		return 0;
	return clock_ns(CLOCK_REALTIME) - clock_ns(CLOCK_BOOTTIME) +
	       ticks * (1000000000ULL / (unsigned long long)hz);
}

/* The process's real and effective uids (/proc/PID/status "Uid:"; the
 * owner of /proc/PID is root for a process that is not dumpable).  false
 * when it cannot be read. */
static bool proc_uids(uint32_t pid, uint32_t *ruid, uint32_t *euid)
{
	char path[64], buf[4096], *s;
	unsigned r, e;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/status", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	s = strstr(buf, "\nUid:");
	if (!s || sscanf(s + 5, "%u %u", &r, &e) != 2)
		return false;
	*ruid = r;
	*euid = e;
	return true;
}

/* Find the process's /tmp and keep it open (once per directory). */
static void pin(struct perfmap_dirs *d, struct perfmap_copy *c, uint32_t pid)
{
	char path[64];
	struct stat st;
	int fd;

	c->pinned = true;
	if (!proc_uids(pid, &c->uid, &c->euid))
		return;
	c->start_ns = start_realtime(pid);
	snprintf(path, sizeof(path), "/proc/%u/root/tmp", pid);
	fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (fstat(fd, &st)) {
		close(fd);
		return;
	}
	for (unsigned i = 0; i < d->nr_dirs; i++)
		if (d->dirs[i].dev == st.st_dev && d->dirs[i].ino == st.st_ino) {
			close(fd);
			c->dir = i + 1;
			return;
		}
	if (d->nr_dirs >= d->lim.max_dirs) {
		close(fd);
		d->st.dirs_full++;
		return;
	}
	d->dirs[d->nr_dirs] = (struct pm_dir){ fd, st.st_dev, st.st_ino };
	c->dir = ++d->nr_dirs;
}

static int open_map(struct perfmap_dirs *d, const struct perfmap_copy *c, uint32_t pid,
		    uint32_t ns_pid)
{
	const int fl = O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY;
	char name[96];

	if (c->dir) {
		snprintf(name, sizeof(name), "perf-%u.map", ns_pid);
		return openat(d->dirs[c->dir - 1].fd, name, fl);
	}
	/* no directory kept: only while the process lives */
	snprintf(name, sizeof(name), "/proc/%u/root/tmp/perf-%u.map", pid, ns_pid);
	return open(name, fl);
}

static bool acceptable(const struct perfmap_copy *c, const struct stat *st)
{
	uint64_t mtime = (uint64_t)st->st_mtim.tv_sec * 1000000000ULL + (uint64_t)st->st_mtim.tv_nsec;

	if (!S_ISREG(st->st_mode))
		return false;
	if (st->st_uid != 0 && st->st_uid != c->uid && st->st_uid != c->euid)
		return false;
	return !c->start_ns || mtime + STALE_SLACK_NS >= c->start_ns;
}

static int grow(struct perfmap_copy *c, size_t need)
{
	char *n;
	size_t nc;

	if (c->len + need <= c->cap)
		return 0;
	nc = c->cap ? c->cap : 4096;
	while (nc < c->len + need)
		nc *= 2;
	n = realloc(c->text, nc);
	if (!n)
		return -ENOMEM;
	c->text = n;
	c->cap = nc;
	return 0;
}

/* Whether the file still holds, just before file_off, the bytes last read
 * from it: a JVM rewrites its map in place (jcmd Compiler.perfmap truncates
 * and writes again), and a file as long or longer than before must not be
 * taken for one that grew.  Up to 64 bytes; while capped nothing is read
 * after file_off, so there is nothing to compare. */
static bool same_tail(int fd, const struct perfmap_copy *c)
{
	char buf[64];
	size_t n = c->file_off < sizeof(buf) ? (size_t)c->file_off : sizeof(buf);
	ssize_t got;

	if (c->capped || !n || n > c->len)
		return true;
	got = pread(fd, buf, n, (off_t)(c->file_off - n));
	return got == (ssize_t)n && !memcmp(buf, c->text + c->len - n, n);
}

int perfmap_update(struct perfmap_dirs *d, struct perfmap_copy *c, uint32_t pid, uint32_t ns_pid,
		   bool final)
{
	struct stat st;
	uint64_t want, room, got = 0;
	size_t keep;
	int fd, err = 0;

	if (c->final)
		return 0;
	if (!c->pinned && !final)
		pin(d, c, pid);
	if (!c->pinned && final)
		return 0; /* never seen alive: nothing can say the file is its own */
	if (final)
		c->final = true;
	fd = open_map(d, c, pid, ns_pid ? ns_pid : pid);
	if (fd < 0) {
		if (errno == ELOOP && !c->refused) { /* a symlink planted in /tmp */
			d->st.refused++;
			c->refused = true;
		}
		return 0;
	}
	if (final)
		d->st.final++;
	if (fstat(fd, &st) || !acceptable(c, &st)) {
		if (!c->refused) /* once per image, not at every rescan */
			d->st.refused++;
		c->refused = true;
		goto out;
	}
	if (c->ino &&
	    ((uint64_t)st.st_dev != c->dev || (uint64_t)st.st_ino != c->ino ||
	     (uint64_t)st.st_size < c->file_off || !same_tail(fd, c))) {
		/* rewritten (a new dump, another process of this pid that got
		 * past the checks): what was read stays, the new file follows */
		d->st.replaced++;
		c->file_off = 0;
		if (c->len && c->text[c->len - 1] != '\n' && !c->capped) {
			if ((err = grow(c, 1)))
				goto out;
			c->text[c->len++] = '\n';
			d->st.bytes++;
		}
	}
	c->dev = st.st_dev;
	c->ino = st.st_ino;
	if ((uint64_t)st.st_size <= c->file_off)
		goto out;
	want = (uint64_t)st.st_size - c->file_off;
	room = c->capped ? 0 : d->lim.per_image > c->len ? d->lim.per_image - c->len : 0;
	if (d->st.bytes + d->st.jd_bytes >= d->lim.total)
		room = 0;
	else if (room > d->lim.total - d->st.bytes - d->st.jd_bytes)
		room = d->lim.total - d->st.bytes - d->st.jd_bytes;
	if (room > want)
		room = want;
	if (room && (err = grow(c, (size_t)room + 1)))
		goto out;
	while (got < room) {
		ssize_t n = pread(fd, c->text + c->len + got, (size_t)(room - got),
				  (off_t)(c->file_off + got));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break; /* shrunk under us: take what came */
		got += (uint64_t)n;
	}
	keep = (size_t)got;
	if (got < want || !final) {
		/* complete lines only: the rest is read again (or dropped at a cap) */
		while (keep && c->text[c->len + keep - 1] != '\n')
			keep--;
	}
	if (got < want && room < want) {
		/* a cap: what is kept ends at a line, the rest is counted once */
		if (!c->capped)
			d->st.capped++;
		c->capped = true;
		d->st.dropped += want - keep;
		c->file_off = st.st_size;
	} else {
		c->file_off += keep;
	}
	if (keep) {
		c->len += keep;
		d->st.bytes += keep;
		d->st.reads++;
		if (final && c->text[c->len - 1] != '\n' && !grow(c, 1)) {
			c->text[c->len++] = '\n';
			d->st.bytes++;
		}
	}
out:
	close(fd);
	return err;
}

void perfmap_copy_release(struct perfmap_dirs *d, struct perfmap_copy *c)
{
	if (d)
		d->st.bytes -= c->len <= d->st.bytes ? c->len : d->st.bytes;
	free(c->text);
	memset(c, 0, sizeof(*c));
}

void perfmap_stats(const struct perfmap_dirs *d, struct perfmap_stats *st)
{
	*st = d->st;
}

void perfmap_limits(const struct perfmap_dirs *d, struct perfmap_limits *lim)
{
	*lim = d->lim;
}

/* ---- jitdump --------------------------------------------------------------- */

#define JD_MAGIC 0x4A695444u
#define JD_HEADER 40
#define JD_REC_HDR 16
#define JD_LOAD_FIXED 40  /* pid, tid, vma, code_addr, code_size, code_index */
#define JD_NAME_MAX 4096  /* longer names are cut (still NUL-terminated) */
#define JD_MAX_OPEN 64    /* jitdumps kept open at once */

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

bool perfmap_is_jitdump(const char *path)
{
	const char *b = strrchr(path, '/');
	size_t n;

	b = b ? b + 1 : path;
	if (strncmp(b, "jit-", 4))
		return false;
	n = strspn(b + 4, "0123456789");
	return n && !strcmp(b + 4 + n, ".dump");
}

static int jd_grow(struct perfmap_dump *j, size_t need)
{
	uint8_t *n;
	size_t nc;

	if (j->len + need <= j->cap)
		return 0;
	nc = j->cap ? j->cap : 65536;
	while (nc < j->len + need)
		nc *= 2;
	n = realloc(j->data, nc);
	if (!n)
		return -ENOMEM;
	j->data = n;
	j->cap = nc;
	return 0;
}

static bool pread_all(int fd, void *buf, size_t len, uint64_t off)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = pread(fd, (char *)buf + got, len - got, (off_t)(off + got));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		got += (size_t)n;
	}
	return true;
}

/* Room left for n more bytes under both caps. */
static bool jd_room(const struct perfmap_dirs *d, const struct perfmap_dump *j, size_t n)
{
	return j->len + n <= d->lim.per_image && d->st.bytes + d->st.jd_bytes + n <= d->lim.total;
}

int perfmap_dump_found(struct perfmap_dirs *d, struct perfmap_dump *j, uint32_t pid,
		       uint64_t start, uint64_t end, const char *path)
{
	const int fl = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY;
	char p[PATH_MAX + 64];
	struct stat st;
	unsigned open_now = 0;
	int fd;

	if (j->found)
		return 0;
	j->found = true;
	/* the mapped file itself, even deleted or in another namespace */
	snprintf(p, sizeof(p), "/proc/%u/map_files/%llx-%llx", pid, (unsigned long long)start,
		 (unsigned long long)end);
	fd = open(p, fl);
	if (fd < 0 && path[0] == '/') {
		snprintf(p, sizeof(p), "/proc/%u/root%s", pid, path);
		fd = open(p, fl | O_NOFOLLOW);
	}
	if (fd < 0)
		return 0;
	open_now = (unsigned)d->jd_open;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || open_now >= JD_MAX_OPEN) {
		close(fd);
		j->refused = true;
		d->st.jd_refused++;
		return 0;
	}
	/* the header may not be written yet (V8 maps the file first) */
	j->fd = fd;
	j->open = true;
	d->jd_open++;
	return perfmap_dump_update(d, j, false);
}

/* The file header, once it is there: 1 kept, 0 not yet, -1 refused. */
static int jd_header(struct perfmap_dirs *d, struct perfmap_dump *j, const struct stat *st)
{
	uint8_t h[JD_HEADER];
	uint32_t hsize;

	if ((uint64_t)st->st_size < JD_HEADER || !pread_all(j->fd, h, sizeof(h), 0))
		return 0;
	hsize = le32(h + 8);
	if (le32(h) != JD_MAGIC || le32(h + 4) != 1 || hsize < JD_HEADER || hsize > 4096)
		return -1;
	if ((uint64_t)st->st_size < hsize)
		return 0;
	if (jd_grow(j, hsize) || !pread_all(j->fd, j->data, hsize, 0))
		return 0;
	j->len = hsize;
	d->st.jd_bytes += hsize;
	j->file_off = hsize;
	return 1;
}

int perfmap_dump_update(struct perfmap_dirs *d, struct perfmap_dump *j, bool final)
{
	struct stat st;
	int err = 0;

	if (!j->open)
		return 0;
	if (fstat(j->fd, &st))
		goto out;
	if (!j->len) {
		int h = jd_header(d, j, &st);

		if (h < 0) {
			j->refused = true;
			d->st.jd_refused++;
			final = true;
		}
		if (h <= 0)
			goto out;
	}
	while ((uint64_t)st.st_size > j->file_off &&
	       (uint64_t)st.st_size - j->file_off >= JD_REC_HDR) {
		uint8_t h[JD_REC_HDR];
		uint32_t id, size, keep;

		if (!pread_all(j->fd, h, sizeof(h), j->file_off))
			break;
		id = le32(h);
		size = le32(h + 4);
		if (size < JD_REC_HDR) {
			/* cannot be framed: nothing after it can be either */
			j->file_off = st.st_size;
			final = true;
			break;
		}
		if (j->file_off + size > (uint64_t)st.st_size)
			break; /* still being written */
		if (id > 3) { /* unwinding info, unknown ids: not kept */
			j->file_off += size;
			continue;
		}
		keep = size;
		if (id == 0) { /* code load: fixed fields and name, no code */
			uint8_t buf[JD_LOAD_FIXED + JD_NAME_MAX];
			uint32_t avail = size - JD_REC_HDR, want = avail < sizeof(buf) ? avail : sizeof(buf);
			uint8_t *z;

			if (want < JD_LOAD_FIXED + 1 ||
			    !pread_all(j->fd, buf, want, j->file_off + JD_REC_HDR)) {
				j->file_off += size;
				continue;
			}
			z = memchr(buf + JD_LOAD_FIXED, 0, want - JD_LOAD_FIXED);
			if (!z) { /* a name longer than kept: cut, still terminated */
				z = buf + want - 1;
				*z = 0;
			}
			keep = JD_REC_HDR + (uint32_t)(z - buf) + 1;
			if (!jd_room(d, j, keep) || j->capped)
				goto capped;
			if ((err = jd_grow(j, keep)))
				goto out;
			memcpy(j->data + j->len, h, JD_REC_HDR);
			put_le32(j->data + j->len + 4, keep);
			memcpy(j->data + j->len + JD_REC_HDR, buf, keep - JD_REC_HDR);
			d->st.jd_stripped += size - keep;
		} else {
			if (!jd_room(d, j, keep) || j->capped)
				goto capped;
			if ((err = jd_grow(j, keep)))
				goto out;
			if (!pread_all(j->fd, j->data + j->len, keep, j->file_off))
				break;
		}
		j->len += keep;
		d->st.jd_bytes += keep;
		j->file_off += size;
		continue;
capped:
		j->capped = true;
		d->st.jd_dropped += keep;
		j->file_off += size;
	}
out:
	if (final) {
		close(j->fd);
		j->open = false;
		j->final = true;
		d->jd_open--;
	}
	return err;
}

void perfmap_dump_release(struct perfmap_dirs *d, struct perfmap_dump *j)
{
	if (j->open) {
		close(j->fd);
		if (d)
			d->jd_open--;
	}
	if (d)
		d->st.jd_bytes -= j->len <= d->st.jd_bytes ? j->len : d->st.jd_bytes;
	free(j->data);
	memset(j, 0, sizeof(*j));
}
