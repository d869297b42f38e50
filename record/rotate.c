// SPDX-License-Identifier: Apache-2.0
/*
 * rotate.c - the directory of a continuous recording (rotate.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "preflight.h"
#include "rotate.h"

struct kept_file {
	char *path;
	unsigned long long size;
};

struct rotate {
	char *dir;
	char host[64];
	long keep;
	unsigned long long max_disk;
	char path[PATH_MAX];
	uint64_t seq;     /* names handed out, written or not */
	uint64_t written;
	/* this run's files still on disk, oldest first (a ring would save a
	 * memmove per file; a day of one file a minute is 1440 entries) */
	struct kept_file *files;
	size_t nr_files, cap_files;
	unsigned long long bytes;
};

int rotate_create(struct rotate **out, const char *dir, long keep, unsigned long long max_disk)
{
	struct rotate *r;
	struct stat st;
	int err;

	*out = NULL;
	if (lstat(dir, &st) == 0 && !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "prof-record: %s is not a directory; --rotate writes one file per interval into the -o directory\n",
			dir);
		return -ENOTDIR;
	}
	if (mkdir(dir, 0700) && errno != EEXIST) {
		err = -errno;
		fprintf(stderr, "prof-record: cannot create directory %s: %s%s\n", dir, strerror(-err),
			err == -ENOENT ? " (its parent must exist)" : "");
		return err;
	}
	err = preflight_probe_dir(dir);
	if (err) {
		fprintf(stderr, "prof-record: cannot write in directory %s: %s; pick a writable -o DIR\n",
			dir, strerror(-err));
		return err;
	}
	r = calloc(1, sizeof(*r));
	if (!r || !(r->dir = strdup(dir))) {
		free(r);
		fprintf(stderr, "prof-record: out of memory\n");
		return -ENOMEM;
	}
	if (gethostname(r->host, sizeof(r->host) - 1))
		strcpy(r->host, "localhost");
	for (char *c = r->host; *c; c++)
		if (*c == '/')
			*c = '_';
	r->keep = keep;
	r->max_disk = max_disk;
	*out = r;
	return 0;
}

void rotate_destroy(struct rotate *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nr_files; i++)
		free(r->files[i].path);
	free(r->files);
	free(r->dir);
	free(r);
}

const char *rotate_next_path(struct rotate *r, uint64_t real_ns)
{
	time_t t = (time_t)(real_ns / 1000000000ULL);
	struct tm tm;
	struct stat st;

	gmtime_r(&t, &tm);
	/* another run may write into the same directory: skip taken names
	 * (the write itself never replaces a file either) */
	for (uint64_t seq = ++r->seq;; seq = ++r->seq) {
		int n = snprintf(r->path, sizeof(r->path),
				 "%s/prof-%s-%04d%02d%02dT%02d%02d%02dZ-%06llu.bprof", r->dir, r->host,
				 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
				 tm.tm_sec, (unsigned long long)seq);

		if (n < 0 || n >= (int)sizeof(r->path))
			return NULL;
		if (lstat(r->path, &st) && errno == ENOENT)
			return r->path;
	}
}

static void remove_oldest(struct rotate *r, bool quiet, const char *why)
{
	struct kept_file *f = &r->files[0];

	if (unlink(f->path) && errno != ENOENT)
		fprintf(stderr, "prof-record: cannot remove %s (%s): %s\n", f->path, why,
			strerror(errno));
	else if (!quiet)
		fprintf(stderr, "prof-record: removed %s (%s)\n", f->path, why);
	r->bytes -= f->size;
	free(f->path);
	memmove(r->files, r->files + 1, (r->nr_files - 1) * sizeof(*r->files));
	r->nr_files--;
}

void rotate_written(struct rotate *r, bool quiet)
{
	struct stat st;
	char *path = strdup(r->path);

	r->written++;
	if (r->nr_files == r->cap_files) {
		size_t nc = r->cap_files ? r->cap_files * 2 : 64;
		void *n = realloc(r->files, nc * sizeof(*r->files));

		if (n) {
			r->files = n;
			r->cap_files = nc;
		}
	}
	if (!path || r->nr_files == r->cap_files) {
		/* not tracked, so never removed: the safe side of a bound */
		free(path);
		fprintf(stderr, "prof-record: out of memory: %s will not count towards --keep/--max-disk\n",
			r->path);
		return;
	}
	r->files[r->nr_files].path = path;
	r->files[r->nr_files].size = stat(path, &st) ? 0 : (unsigned long long)st.st_size;
	r->bytes += r->files[r->nr_files].size;
	r->nr_files++;
	while (r->keep && r->nr_files > (size_t)r->keep)
		remove_oldest(r, quiet, "--keep");
	while (r->max_disk && r->bytes > r->max_disk && r->nr_files > 1)
		remove_oldest(r, quiet, "--max-disk");
}

uint64_t rotate_files_written(const struct rotate *r)
{
	return r->written;
}

uint64_t rotate_files_kept(const struct rotate *r)
{
	return r->nr_files;
}
