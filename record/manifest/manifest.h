/* SPDX-License-Identifier: Apache-2.0 */
/*
 * manifest.h - snapshots of sampled processes' executable mappings and the
 * identity (build-id, dev/inode/mtime) of every object they map.  See
 * DESIGN.md for when snapshots are taken.
 */
#ifndef BPROF_RECORD_MANIFEST_H
#define BPROF_RECORD_MANIFEST_H

#include <gelf.h>
#include <stdbool.h>
#include <stdint.h>
#include "bprof.h"

struct manifest;

/* One executable mapping of a process image; obj is a manifest object
 * index or BPROF_NO_OBJECT (anonymous memory, JIT code). */
struct manifest_mapping {
	uint64_t start, end, offset;
	uint32_t obj;
};

/*
 * Who else wants to know what the manifest learns while recording (the
 * unwinder).  Every callback may be NULL.
 *   object:     object idx was opened (elf valid during the call only;
 *               NULL when the file could not be read).  May come again for
 *               the same idx when a later mapping shows the file readable.
 *   image:      the executable mappings of (pid, exec_id) changed; sorted;
 *               gen: the mapping generation they were read in
 *               (MANIFEST_GEN_NONE: not known, the table must not be used).
 *   image_gone: that image no longer runs (exit, exec).
 */
struct manifest_observer {
	void *ctx;
	void (*object)(void *ctx, uint32_t idx, Elf *elf, const struct bprof_object *o);
	void (*image)(void *ctx, uint32_t pid, uint32_t exec_id, uint32_t gen,
		      const struct manifest_mapping *maps, uint32_t nr);
	void (*image_gone)(void *ctx, uint32_t pid, uint32_t exec_id);
};

#define MANIFEST_GEN_NONE 0xfffffffeu

/* exec_gen_fd: the BPF map tgid -> self_exec_id after its latest exec
 * (-1: none); map_gens_fd: the map tgid -> struct profile_map_gen (-1: the
 * recording has no mapping generations); start_ns: CLOCK_MONOTONIC at the
 * start of the recording. */
int manifest_new(struct manifest **out, int exec_gen_fd, int map_gens_fd, uint64_t start_ns);
void manifest_free(struct manifest *m);
/* Set before the first event; obs is copied. */
void manifest_set_observer(struct manifest *m, const struct manifest_observer *obs);

/* Remember what the kernel told about a process image (parent, ns pid,
 * comm) and snapshot it now if it has none yet.  0 or -ENOMEM. */
int manifest_event(struct manifest *m, uint32_t pid, uint32_t exec_id, uint32_t ns_pid,
		   uint32_t ppid, uint32_t parent_exec_id, const char *comm, bool force);

/* A process image mapped something executable: re-read it at the next
 * manifest_flush() (events come in bursts: one read per burst).  0 or
 * -ENOMEM. */
int manifest_mark(struct manifest *m, uint32_t pid, uint32_t exec_id);
int manifest_flush(struct manifest *m);

/* One executable file mapping of an exiting image, from the kernel (dev is
 * a user-space dev_t, flags BPROF_MAP_READ/WRITE-compatible VM_ bits, name a
 * basename).  Completes snapshots of processes that died before their maps
 * could be read.  0 or -ENOMEM. */
int manifest_vma(struct manifest *m, uint32_t pid, uint32_t exec_id, uint64_t start, uint64_t end,
		 uint64_t offset, uint64_t dev, uint64_t ino, uint64_t mtime_ns, uint32_t vm_flags,
		 const char *name);

/* An executable mapping was made in image (pid, exec_id) and began its
 * generation gen (PROFILE_EV_MAP_EXEC; dev a user-space dev_t; flags
 * BPROF_MAP_READ/WRITE/ANON; partial: the change went past it, what lies
 * beyond is unknown).  Kept with its generation for the GENERATIONS
 * section; the image is re-read at the next manifest_flush().  0 or
 * -ENOMEM. */
struct manifest_map_ev {
	uint32_t pid, exec_id, gen, flags;
	bool partial;
	uint64_t start, end, offset, dev, ino, mtime_ns;
	const char *name;
};
int manifest_map_event(struct manifest *m, const struct manifest_map_ev *ev);

/* Open the file at path (in our own mount namespace) as an object now, as
 * if a process had mapped it: the observer learns of it (the unwinder
 * builds its table) before any process runs it.  A later mapping of the
 * same file (device, inode, mtime) is that object; one no image maps is
 * not emitted.  0, or -errno. */
int manifest_preload(struct manifest *m, const char *path);

/* Re-read the maps of every live process snapshotted so far, merging new
 * mappings (dlopen).  0 or -ENOMEM. */
int manifest_rescan(struct manifest *m);

/* A process image that appears in the counts.  need: it has user stacks to
 * symbolize (a missing snapshot is then a loss). */
int manifest_want(struct manifest *m, uint32_t pid, uint32_t exec_id, const char *comm,
		  bool need, uint32_t map_gen);

/* Move the wanted snapshots and the objects they use into rec.  Wanted
 * images without a snapshot are read now if still alive, else taken from
 * the parent when they never exec'd; *lost counts those still missing. */
int manifest_emit(struct manifest *m, struct bprof_recording *rec, uint64_t *lost);

/* Object idx as the manifest knows it (path, build-id); NULL if none. */
const struct bprof_object *manifest_object(const struct manifest *m, uint32_t idx);
/* Object idx into rec (after manifest_emit: an object no emitted mapping
 * uses, which the file must still name), or its index there if it is in
 * already: *out.  0 or -ENOMEM. */
int manifest_emit_object(struct manifest *m, struct bprof_recording *rec, uint32_t idx,
			 uint32_t *out);

/*
 * --rotate, one manifest for many files.  manifest_boundary() at the end
 * of an interval (when samples start going to the next file) notes which
 * images are dead by then: none of them can appear in a later interval's
 * counts.  manifest_next_file() after that interval's file is written
 * forgets those its file did not want (keeping the ancestors a live image
 * may borrow from) and readies the rest for the next file.  0 or -ENOMEM
 * (the manifest is then as before).
 */
void manifest_boundary(struct manifest *m);
int manifest_next_file(struct manifest *m);

/* Images (pid, exec_id) the manifest holds, for -v and the tests. */
size_t manifest_images(const struct manifest *m);

/* Statistics for the status line and DESIGN.md measurements. */
struct manifest_stats {
	uint64_t snapshots;      /* /proc/PID/maps reads that succeeded */
	uint64_t failed;         /* reads that failed (process gone) */
	uint64_t objects_opened; /* ELF files opened for a build-id */
	uint64_t from_parent;    /* images taken from their parent's snapshot */
	uint64_t from_exit;      /* mappings learnt from exit events */
	uint64_t map_events;     /* executable mappings learnt as they were made */
	uint64_t map_events_applied; /* ... applied without reading /proc */
	uint64_t gen_gaps;       /* generations never seen (events lost) */
	/* Without CAP_SYS_ADMIN/CAP_CHECKPOINT_RESTORE (map_files closed): */
	uint64_t objects_by_path;    /* opened as /proc/PID/root/PATH, dev+inode checked */
	uint64_t objects_unverified; /* PATH holds another file, or none (deleted) */
	uint64_t objects_denied;     /* not permitted to open */
	uint64_t procs_denied;       /* wanted images without mappings: reading them was refused */
};
void manifest_stats(const struct manifest *m, struct manifest_stats *st);

#endif
