/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tabcache.h - unwind tables kept on disk between recordings, by build-id.
 *
 * Building an object's table from its .eh_frame takes milliseconds per
 * object (libc 2-4 ms, python3 25 ms, cc1 60-160 ms), and a system-wide
 * recording builds one for every object of every process it samples: a
 * 5 s recording beside `perf record` built 45 of them in 36 ms, half its
 * CPU.  The same objects come back in the next recording.  A table is a
 * function of the .eh_frame bytes alone (ehtab_source), so a file keyed by
 * the object's build-id and checked against those bytes' length, address
 * and hash, and against the recorder that wrote it (its own build-id: a
 * recorder whose table builder changed never reads an older one's files),
 * gives the packed table back for the cost of reading it.
 *
 * Files are written whole and renamed into place (0600, in a directory the
 * recorder's user owns and nobody else may write); a file that does not
 * parse, or parses to other bytes' table, is ignored and replaced.  Every
 * byte read is checked as if hostile: lengths, counts, rule kinds, row
 * rules, page bounds and order, and a hash of the whole body.  The format
 * is described in record/DESIGN.md ("The table cache").  Never prints.
 */
#ifndef BPROF_RECORD_TABCACHE_H
#define BPROF_RECORD_TABCACHE_H

#include <stddef.h>
#include <stdint.h>
#include "ehtab.h"

/* The recorder's default cache directory (root's). */
#define TABCACHE_DEFAULT_DIR "/var/cache/bprof/unwind"
/* The directory is trimmed to this size, oldest files first, after a
 * recording that wrote to it: twice the default table budget
 * (--unwind-memory), so that what one recording may load survives to the
 * next (64 MiB held less than clang's, rustc's and a host's usual
 * libraries together, and libLLVM's table was rebuilt, 360 ms). */
#define TABCACHE_MAX_BYTES ((uint64_t)256 << 20)

/* What a table is built from, and who built it. */
struct tabcache_key {
	const uint8_t *build_id; /* the object's */
	size_t build_id_len;     /* 1..64 */
	uint64_t src_len;        /* ehtab_source: .eh_frame's length, */
	uint64_t src_vaddr;      /* address */
	uint64_t src_hash;       /* and tabcache_hash of its bytes */
};

struct tabcache_stats {
	uint64_t hits, misses, written, rejected, evicted;
};

struct tabcache;

/*
 * The cache in dir, created (0700) where missing.  NULL dir: the default.
 * 0, or -errno with *why set to a static reason (the directory cannot be
 * made, belongs to another user or may be written by others, or this
 * recorder has no build-id of its own to key its files by).
 */
int tabcache_open(struct tabcache **out, const char *dir, const char **why);
/* Trims the directory if this run wrote to it, and frees c. */
void tabcache_close(struct tabcache *c);
void tabcache_stats(const struct tabcache *c, struct tabcache_stats *st);

/* A 64-bit hash of bytes (not cryptographic: it catches a file written for
 * other bytes, not an attacker who owns the directory). */
uint64_t tabcache_hash(const uint8_t *p, size_t n, uint64_t seed);

/*
 * The packed table cached for k, its rules interned into rs (rows rewritten
 * to rs's indices).  0; -ENOENT when there is none or it is for other bytes
 * or another recorder; -EINVAL when the file is damaged; -E2BIG when rs is
 * full; -ENOMEM.  Free out with ehtab_packed_free.
 */
int tabcache_get(struct tabcache *c, const struct tabcache_key *k, struct ehtab_rules *rs,
		 struct ehtab_packed *out);

/* Keep pk (its rows index rs) for k.  0 or -errno; a failure only means
 * the next recording builds the table again. */
int tabcache_put(struct tabcache *c, const struct tabcache_key *k, const struct ehtab_packed *pk,
		 const struct ehtab_rules *rs);

/*
 * The parser under tabcache_get, on bytes in memory (for the fuzzer):
 * recorder_id is the writer's expected build-id.  Same returns.
 */
int tabcache_parse(const uint8_t *buf, size_t len, const uint8_t *recorder_id,
		   size_t recorder_id_len, const struct tabcache_key *k, struct ehtab_rules *rs,
		   struct ehtab_packed *out);

/*
 * For the fuzzer and the tests: set the body hash of a file in memory to
 * match its bytes, and say what it claims to be (*k: its object's key,
 * pointing into buf; *rid: its writer's build-id).  -EINVAL when buf is
 * shorter than a header.
 */
int tabcache_seal(uint8_t *buf, size_t len, struct tabcache_key *k, const uint8_t **rid,
		  size_t *rid_len);

#endif
