/* SPDX-License-Identifier: Apache-2.0 */
/*
 * readahead.c - the files of prof-report FILE... read and decompressed on a
 * thread of their own while the main thread folds the previous ones.
 *
 * Merging many recordings costs, per file, reading it (zstd, parsing,
 * validation: the format library, which shares nothing between calls) and
 * folding its rows (libsym and the fold, which are not thread-safe).  The
 * first half runs here, one file ahead of the second, at most
 * READAHEAD_DEPTH recordings in memory.  Files are handed over in order,
 * each with the error reading it gave, so messages and exit codes are
 * those of reading them one by one.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

#define READAHEAD_DEPTH 4

struct slot {
	struct bprof_recording *rec;
	int err;
	char msg[512];
};

struct rep_readahead {
	char *const *paths;
	size_t n;
	struct slot ring[READAHEAD_DEPTH];
	size_t produced, consumed; /* files read; files handed over */
	bool stop;
	pthread_mutex_t lock;
	pthread_cond_t changed;
	pthread_t thread;
	bool threaded;
};

/* rd: the reading thread's reader (buffers kept between files), or NULL */
static void read_one(struct bprof_reader *rd, const char *path, struct slot *s)
{
	struct bprof_error berr = {0};

	s->rec = NULL;
	s->err = rd ? bprof_reader_read_file(rd, &s->rec, path, NULL, &berr)
		    : bprof_read_file(&s->rec, path, NULL, &berr);
	if (s->err)
		snprintf(s->msg, sizeof(s->msg), "%s",
			 berr.message[0] ? berr.message : bprof_strerror(s->err));
}

static void *reader(void *arg)
{
	struct rep_readahead *ra = arg;
	struct bprof_reader *rd = NULL;

	/* without one (no memory), each file is read with a reader of its own */
	bprof_reader_create(&rd);
	pthread_mutex_lock(&ra->lock);
	while (!ra->stop && ra->produced < ra->n) {
		if (ra->produced - ra->consumed == READAHEAD_DEPTH) {
			pthread_cond_wait(&ra->changed, &ra->lock);
			continue;
		}
		size_t i = ra->produced;
		pthread_mutex_unlock(&ra->lock);
		struct slot s;
		read_one(rd, ra->paths[i], &s);
		pthread_mutex_lock(&ra->lock);
		ra->ring[i % READAHEAD_DEPTH] = s;
		ra->produced++;
		pthread_cond_broadcast(&ra->changed);
		if (s.err)
			break; /* the reader stops at the first bad file, as the main thread does */
	}
	pthread_mutex_unlock(&ra->lock);
	bprof_reader_destroy(rd);
	return NULL;
}

int rep_readahead_create(struct rep_readahead **out, char *const *paths, size_t n)
{
	struct rep_readahead *ra = calloc(1, sizeof(*ra));

	*out = NULL;
	if (!ra)
		return -ENOMEM;
	ra->paths = paths;
	ra->n = n;
	pthread_mutex_init(&ra->lock, NULL);
	pthread_cond_init(&ra->changed, NULL);
	/* without a thread, files are read when asked for */
	ra->threaded = n > 1 && pthread_create(&ra->thread, NULL, reader, ra) == 0;
	*out = ra;
	return 0;
}

int rep_readahead_next(struct rep_readahead *ra, struct bprof_recording **rec, char *errbuf,
		       size_t errlen)
{
	struct slot s;

	*rec = NULL;
	if (ra->consumed >= ra->n)
		return -ENOENT;
	if (!ra->threaded) {
		read_one(NULL, ra->paths[ra->consumed++], &s);
	} else {
		pthread_mutex_lock(&ra->lock);
		while (ra->produced == ra->consumed)
			pthread_cond_wait(&ra->changed, &ra->lock);
		s = ra->ring[ra->consumed % READAHEAD_DEPTH];
		ra->ring[ra->consumed % READAHEAD_DEPTH].rec = NULL;
		ra->consumed++;
		pthread_cond_broadcast(&ra->changed);
		pthread_mutex_unlock(&ra->lock);
	}
	if (s.err)
		snprintf(errbuf, errlen, "%s", s.msg);
	*rec = s.rec;
	return s.err;
}

void rep_readahead_destroy(struct rep_readahead *ra)
{
	if (!ra)
		return;
	if (ra->threaded) {
		pthread_mutex_lock(&ra->lock);
		ra->stop = true;
		pthread_cond_broadcast(&ra->changed);
		pthread_mutex_unlock(&ra->lock);
		pthread_join(ra->thread, NULL);
	}
	/* recordings read but never handed over */
	for (size_t i = ra->consumed; i < ra->produced; i++)
		bprof_recording_free(ra->ring[i % READAHEAD_DEPTH].rec);
	pthread_mutex_destroy(&ra->lock);
	pthread_cond_destroy(&ra->changed);
	free(ra);
}
