/* SPDX-License-Identifier: Apache-2.0 */
/*
 * manifest_internal.h - what the manifest's files share: the tables and
 * the steps they take of one another.  Internal to the manifest module
 * (manifest.h is its interface).  Calls go one way, each file calling only
 * those listed before it: manifest.c (the manifest, its process table, the
 * observer), manifest_objects.c (the objects mapped and their build-ids),
 * manifest_snapshot.c (/proc/PID/maps read into an image's snapshot),
 * manifest_events.c (what the recording loop tells the manifest),
 * manifest_emit.c (the manifest written into a file).
 */
#ifndef BPROF_MANIFEST_INTERNAL_H
#define BPROF_MANIFEST_INTERNAL_H

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <linux/types.h>
#include "manifest.h"
#include "perfmap.h"
#include "profile.h"

#ifndef NT_GNU_BUILD_ID
#define NT_GNU_BUILD_ID 3
#endif

struct mmap_ent {
	uint64_t start, end, off, dev, ino;
	uint32_t obj;   /* index into manifest.objs or BPROF_NO_OBJECT */
	uint32_t flags; /* BPROF_MAP_* */
	/* mapping generation of the latest read that saw it, MANIFEST_GEN_NONE
	 * when that read raced with a change (DESIGN.md) */
	uint32_t read_gen;
	uint32_t pad;
};

/* An executable mapping as it was made (PROFILE_EV_MAP_EXEC). */
struct hist_ent {
	uint64_t start, end, off, dev, ino, mtime;
	uint32_t gen, flags, obj; /* obj: BPROF_NO_OBJECT until resolved */
	bool need_obj;            /* a file whose object is not known yet */
	char name[PROFILE_VMA_NAME_LEN];
};

struct proc_ent {
	uint32_t pid, exec_id, ns_pid, ppid, parent_exec_id;
	char comm[BPROF_COMM_LEN];
	bool has_parent, snapped, dead, want, need, dirty;
	bool dead_at_boundary; /* dead before the last manifest_boundary() */
	bool denied; /* reading its maps was not permitted */
	uint32_t table_gen; /* generation of the mapping table last observed */
	uint64_t snapshot_ns;
	struct mmap_ent *maps;
	uint32_t nr_maps;
	struct perfmap_copy pm; /* its /tmp/perf-NSPID.map, as far as read */
	struct perfmap_dump jd; /* its jit-PID.dump, as far as read */
	/* mapping generations */
	struct hist_ent *hist;
	uint32_t nr_hist, cap_hist;
	uint64_t *gen_seen;   /* bitmap: generations whose mapping was sent */
	uint32_t gen_words;   /* of gen_seen */
	uint32_t max_gen;     /* greatest generation seen or counted */
	uint32_t *partial;    /* generations whose change was only partly sent */
	uint32_t nr_partial, cap_partial;
	bool gen_unknown;     /* a count of PROFILE_GEN_UNKNOWN */
};

struct obj_ent {
	struct bprof_object o;
	uint32_t out_index; /* index in the recording, UINT32_MAX until used */
	uint8_t *image;     /* the vdso's bytes, carried in the file (IMAGES) */
	size_t image_len;
	bool preloaded;     /* opened by manifest_preload, no mapping seen yet */
	uint32_t alias;     /* the entry this one was found to be (resolve_from),
			     * UINT32_MAX if none: both go out as one object */
};

/* Open addressing table of indexes keyed by a 64-bit hash; the caller
 * checks the full key on a hit. */
struct idx_table {
	uint64_t *keys;
	uint32_t *vals; /* UINT32_MAX: empty */
	size_t cap, used;
};

struct manifest {
	int exec_gen_fd;
	int map_gens_fd;
	uint64_t start_ns;
	struct proc_ent *procs;
	size_t nr_procs, cap_procs;
	struct idx_table proc_idx;
	struct obj_ent *objs;
	size_t nr_objs, cap_objs;
	struct idx_table obj_idx;
	struct manifest_stats st;
	struct perfmap_dirs *perfmaps;
	uint32_t *dirty;
	size_t nr_dirty, cap_dirty;
	struct manifest_observer obs;
	struct manifest_mapping *obs_buf; /* scratch for obs.image */
	struct mmap_ent own_vdso;         /* prof-record's own [vdso] */
	bool own_vdso_read;
	size_t obs_cap;
};

/* manifest.c */
uint64_t manifest__mix64(uint64_t x);
int manifest__tab_insert(struct idx_table *t, uint64_t key, uint32_t val);
uint64_t manifest__now_ns(void);
void manifest__observe_image(struct manifest *m, const struct proc_ent *p, uint32_t gen);
struct proc_ent *manifest__proc_find(struct manifest *m, uint32_t pid, uint32_t exec_id);
struct proc_ent *manifest__proc_get(struct manifest *m, uint32_t pid, uint32_t exec_id);
void manifest__proc_free(struct manifest *m, struct proc_ent *p);

/* manifest_objects.c */
uint32_t manifest__object_for(struct manifest *m, uint32_t pid, const struct mmap_ent *me, const char *path, bool deleted);
uint32_t manifest__vdso_object(struct manifest *m, uint32_t pid, const struct mmap_ent *me);
uint32_t manifest__event_object(struct manifest *m, uint64_t dev, uint64_t ino, uint64_t mtime_ns,
				const char *name, bool make);

/* manifest_snapshot.c */
bool manifest__exec_gen(struct manifest *m, uint32_t pid, uint32_t *gen);
const struct mmap_ent *manifest__known_mapping(const struct proc_ent *p, const struct mmap_ent *me);
int manifest__merge_maps(struct proc_ent *p, struct mmap_ent *nw, uint32_t nr);
int manifest__read_perf_map(struct manifest *m, struct proc_ent *p, bool final);
int manifest__snapshot(struct manifest *m, uint32_t pid, uint32_t hint_exec);

/* manifest_events.c */
bool manifest__gen_was_seen(const struct proc_ent *p, uint32_t gen);
int manifest__resolve_hist(struct manifest *m, struct proc_ent *p);

#endif
