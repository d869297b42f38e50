/* SPDX-License-Identifier: Apache-2.0 */
/*
 * perfmap.h - JIT compilers' perf maps (/tmp/perf-NSPID.map in the
 * process's own mount namespace), copied while they can still be read:
 * at each read of the process, when it ends (exit, exec) and at the end
 * of the recording, within a budget per image and over all.  See
 * DESIGN.md, "JIT code: perf maps and jitdump".
 */
#ifndef BPROF_RECORD_PERFMAP_H
#define BPROF_RECORD_PERFMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The directories perf maps are read from (each process's /tmp, opened
 * once per distinct directory and kept open, so that a map can be read
 * after its process is gone), the budget and the counters. */
struct perfmap_dirs;

struct perfmap_limits {
	size_t per_image; /* bytes kept per process image */
	size_t total;     /* bytes kept over all images at once */
	unsigned max_dirs; /* distinct /tmp directories kept open */
};
#define PERFMAP_PER_IMAGE_DEFAULT (32u << 20)
#define PERFMAP_TOTAL_DEFAULT     (256u << 20)
#define PERFMAP_MAX_DIRS_DEFAULT  64u

/* Cumulative over the recording (as SPEC.md 6.16's counters). */
struct perfmap_stats {
	uint64_t bytes;    /* kept now, all images */
	uint64_t dropped;  /* not kept: a cap was reached */
	uint64_t capped;   /* images whose map reached a cap */
	uint64_t refused;  /* files not taken: stale, another owner, not regular */
	uint64_t reads;    /* reads that found new lines */
	uint64_t final;    /* reads when an image ended */
	uint64_t replaced; /* files found replaced or truncated */
	uint64_t dirs_full; /* processes whose /tmp could not be kept open (max_dirs) */
	/* jitdumps */
	uint64_t jd_bytes;    /* kept now, all images */
	uint64_t jd_dropped;  /* record bytes not kept: a cap */
	uint64_t jd_stripped; /* code bytes of JIT_CODE_LOAD records not kept */
	uint64_t jd_refused;  /* files not taken: bad header, not regular, too many open */
};

/* One process image's copy; zero-initialized by its owner, which calls
 * perfmap_copy_release() before dropping it.  text is not NUL-terminated. */
struct perfmap_copy {
	char *text;
	size_t len, cap;
	uint64_t file_off;   /* bytes of the current file consumed */
	uint64_t dev, ino;   /* the file those bytes came from; 0: none yet */
	uint64_t start_ns;   /* the process's start, CLOCK_REALTIME; 0: unknown */
	uint32_t uid, euid;  /* the process's real and effective uids, when pinned */
	uint32_t dir;        /* kept directory + 1; 0: none */
	bool pinned;         /* dir, uid and start_ns were looked up */
	bool final;          /* the image ended and its map was read: no more reads */
	bool capped;
	bool refused;        /* a file was found and not taken (counted once) */
};

/* One process image's jitdump (jit-PID.dump, found as a file it maps
 * executable: that is how perf finds it too), kept open from the moment
 * it is seen and read as it grows.  Zero-initialized by its owner, which
 * calls perfmap_dump_release(). */
struct perfmap_dump {
	uint8_t *data;     /* header and kept records (SPEC.md 6.16) */
	size_t len, cap;
	uint64_t file_off; /* next record's offset in the file */
	int fd;            /* meaningful while open */
	bool open, found, final, capped, refused;
};

/* lim NULL: the defaults.  0 or -ENOMEM. */
int perfmap_dirs_new(struct perfmap_dirs **out, const struct perfmap_limits *lim);
void perfmap_dirs_free(struct perfmap_dirs *d);

/*
 * Bring c up to date with the perf map of process pid (ns_pid its id in its
 * own pid namespace, 0: pid).  The first call for a live process finds its
 * /tmp and keeps it open; later calls read only what the file gained
 * (complete lines, unless final).  final: the image ended (exit, exec) or
 * the recording does: read everything left, then never again.  A missing
 * file is not an error.  0 or -ENOMEM.
 */
int perfmap_update(struct perfmap_dirs *d, struct perfmap_copy *c, uint32_t pid, uint32_t ns_pid,
		   bool final);
/* Whether a mapping's path names a jitdump (basename jit-DIGITS.dump). */
bool perfmap_is_jitdump(const char *path);
/* The image (pid) maps the jitdump at [start, end) named path: open it (once)
 * through /proc/PID/map_files, else /proc/PID/root/PATH, and read what it
 * holds.  0 or -ENOMEM. */
int perfmap_dump_found(struct perfmap_dirs *d, struct perfmap_dump *j, uint32_t pid,
		       uint64_t start, uint64_t end, const char *path);
/* Read the records j's file gained (final: the last time, then close).
 * 0 or -ENOMEM. */
int perfmap_dump_update(struct perfmap_dirs *d, struct perfmap_dump *j, bool final);
void perfmap_dump_release(struct perfmap_dirs *d, struct perfmap_dump *j);
/* c's bytes leave the budget and c is emptied. */
void perfmap_copy_release(struct perfmap_dirs *d, struct perfmap_copy *c);
void perfmap_stats(const struct perfmap_dirs *d, struct perfmap_stats *st);
/* The limits in force (for the JIT section). */
void perfmap_limits(const struct perfmap_dirs *d, struct perfmap_limits *lim);

#endif
