/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rotate.h - the directory of a continuous recording (--rotate): its
 * creation, the name of each interval's file, and the bounds on what stays
 * on disk (--keep, --max-disk).  The bounds only ever remove files this run
 * wrote itself: a directory shared with other runs, or with anything else,
 * loses nothing it did not get from us.  Errors are printed here.
 */
#ifndef BPROF_RECORD_ROTATE_H
#define BPROF_RECORD_ROTATE_H

#include <stdbool.h>
#include <stdint.h>

struct rotate;

/* Use directory dir (created with mode 0700 when missing; its parent must
 * exist) and check that files can be written there.  keep: files kept (0:
 * all); max_disk: bytes kept (0: no bound).  0, or negative after
 * printing; *out is NULL on failure. */
int rotate_create(struct rotate **out, const char *dir, long keep, unsigned long long max_disk);
void rotate_destroy(struct rotate *r);

/* DIR/prof-HOST-YYYYmmddTHHMMSSZ-NNNNNN.bprof for the interval that began
 * at real_ns (CLOCK_REALTIME), NNNNNN counting this run's files: names
 * sort in time order.  Valid until the next call; NULL when out of memory. */
const char *rotate_next_path(struct rotate *r, uint64_t real_ns);

/* The file at the last rotate_next_path() was written: account for it and
 * remove this run's oldest files beyond --keep and --max-disk (saying so
 * unless quiet). */
void rotate_written(struct rotate *r, bool quiet);

/* Files written so far, and how many of them are still kept. */
uint64_t rotate_files_written(const struct rotate *r);
uint64_t rotate_files_kept(const struct rotate *r);

#endif
