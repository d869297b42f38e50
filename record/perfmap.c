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

/* Find the process's /tmp and keep it open (once per directory). */
static void pin(struct perfmap_dirs *d, struct perfmap_copy *c, uint32_t pid)
{
	char path[64];
	struct stat st;
	int fd;

	c->pinned = true;
	snprintf(path, sizeof(path), "/proc/%u", pid);
	if (stat(path, &st))
		return;
	c->uid = st.st_uid;
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
	if (st->st_uid != 0 && st->st_uid != c->uid)
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
	if (final) {
		c->final = true;
		d->st.final++;
	}
	fd = open_map(d, c, pid, ns_pid ? ns_pid : pid);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) || !acceptable(c, &st)) {
		if (!c->refused) /* once per image, not at every rescan */
			d->st.refused++;
		c->refused = true;
		goto out;
	}
	if (c->ino &&
	    ((uint64_t)st.st_dev != c->dev || (uint64_t)st.st_ino != c->ino ||
	     (uint64_t)st.st_size < c->file_off)) {
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
	if (d->st.bytes >= d->lim.total)
		room = 0;
	else if (room > d->lim.total - d->st.bytes)
		room = d->lim.total - d->st.bytes;
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
