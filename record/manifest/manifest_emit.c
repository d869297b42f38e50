// SPDX-License-Identifier: Apache-2.0
/*
 * manifest_emit.c - the manifest written into a recording: the objects and
 * images the samples need, each process's mappings and their generations,
 * the unreadable objects resolved at the end, the JIT maps and dumps.
 * Reads the tables the manifest's other files keep (manifest_internal.h).
 */
#include "manifest_internal.h"

/* A child that never exec'd maps what its parent mapped at fork: walk up
 * while exec_id says so and borrow the first snapshot found. */
static const struct proc_ent *ancestor_snapshot(struct manifest *m, const struct proc_ent *p)
{
	for (int depth = 0; depth < 32 && p->has_parent && p->parent_exec_id == p->exec_id &&
			    p->ppid && p->ppid != p->pid;
	     depth++) {
		const struct proc_ent *pp = manifest__proc_find(m, p->ppid, p->exec_id);

		if (!pp)
			return NULL;
		if (pp->snapped)
			return pp;
		p = pp;
	}
	return NULL;
}

static int emit_object(struct manifest *m, struct bprof_recording *rec, uint32_t idx,
		       uint32_t *out)
{
	struct obj_ent *e = &m->objs[idx];
	struct bprof_object o;
	int err;

	/* one file, one object: a mapping and its history entry that name
	 * the same file through two entries would otherwise clash, and the
	 * report would call their addresses unknowable (SPEC.md 6.12) */
	if (e->alias != UINT32_MAX && e->alias != idx) {
		err = emit_object(m, rec, e->alias, out);
		if (!err)
			m->objs[idx].out_index = *out;
		return err;
	}
	if (e->out_index != UINT32_MAX) {
		*out = e->out_index;
		return 0;
	}
	o = e->o;
	o.path = strdup(e->o.path ? e->o.path : "");
	if (!o.path)
		return -ENOMEM;
	err = bprof_recording_add_object(rec, &o, &e->out_index);
	if (err) {
		free(o.path);
		return -ENOMEM;
	}
	*out = e->out_index;
	return 0;
}

const struct bprof_object *manifest_object(const struct manifest *m, uint32_t idx)
{
	return idx < m->nr_objs ? &m->objs[idx].o : NULL;
}

int manifest_emit_object(struct manifest *m, struct bprof_recording *rec, uint32_t idx,
			 uint32_t *out)
{
	if (idx >= m->nr_objs)
		return -EINVAL;
	return emit_object(m, rec, idx, out);
}

static int cmp_image(const void *a, const void *b)
{
	const struct bprof_image *x = a, *y = b;
	return x->object_index < y->object_index ? -1 : x->object_index > y->object_index;
}

/* The IMAGES section: the bytes of emitted objects that carry them. */
static int emit_images(struct manifest *m, struct bprof_recording *rec)
{
	size_t n = 0;

	for (size_t i = 0; i < m->nr_objs; i++)
		n += m->objs[i].image && m->objs[i].out_index != UINT32_MAX;
	if (!n)
		return 0;
	rec->images = calloc(n, sizeof(*rec->images));
	if (!rec->images)
		return -ENOMEM;
	for (size_t i = 0; i < m->nr_objs; i++) {
		struct obj_ent *e = &m->objs[i];
		struct bprof_image *im;

		if (!e->image || e->out_index == UINT32_MAX)
			continue;
		im = &rec->images[rec->nr_images++];
		im->object_index = e->out_index;
		im->len = e->image_len;
		im->data = e->image; /* the recording owns it now */
		e->image = NULL;
	}
	qsort(rec->images, rec->nr_images, sizeof(*rec->images), cmp_image);
	return 0;
}

static size_t count_unreadable(const struct manifest *m)
{
	size_t n = 0;

	for (size_t i = 0; i < m->nr_objs; i++)
		n += (m->objs[i].o.flags & (BPROF_OBJ_UNREADABLE | BPROF_OBJ_VDSO)) ==
		     BPROF_OBJ_UNREADABLE;
	return n;
}

/* Look through one process's maps for files behind unreadable objects. */
static int resolve_from(struct manifest *m, uint32_t pid, const char *maps_path)
{
	FILE *f = fopen(maps_path, "re");
	char *line = NULL;
	size_t cap = 0;

	if (!f)
		return 0;
	while (getline(&line, &cap, f) > 0) {
		unsigned long long start, end, off, ino;
		unsigned int maj, min;
		char perms[8];
		int pos = 0;

		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &off, &maj,
			   &min, &ino, &pos) < 7 || !pos || strlen(perms) < 3 || perms[2] != 'x' || !ino)
			continue;
		for (size_t i = 0; i < m->nr_objs; i++) {
			struct bprof_object *o = &m->objs[i].o;
			if ((o->flags & (BPROF_OBJ_UNREADABLE | BPROF_OBJ_VDSO)) != BPROF_OBJ_UNREADABLE ||
			    o->dev != makedev(maj, min) || o->inode != ino)
				continue;
			struct mmap_ent me = { .start = start, .end = end, .off = off,
					       .dev = o->dev, .ino = ino, .obj = BPROF_NO_OBJECT };
			char *name = line + pos;
			name[strcspn(name, "\n")] = 0;
			size_t nl = strlen(name);
			bool deleted = nl > 10 && !strcmp(name + nl - 10, " (deleted)");
			if (deleted)
				name[nl - 10] = 0;
			/* upgrades the entry when (dev, inode, mtime) match */
			uint32_t j = manifest__object_for(m, pid, &me, name, deleted);
			if (j == BPROF_NO_OBJECT) {
				free(line);
				fclose(f);
				return -ENOMEM;
			}
			/* An entry made when the process vanished before its
			 * map_files could be stat'ed has no mtime; like the exit
			 * walk, take (dev, inode) within this recording as the
			 * file's identity and copy what the live mapping shows. */
			struct bprof_object *live = &m->objs[j].o;
			o = &m->objs[i].o; /* object_for may have moved the array */
			if (j != i && (o->flags & BPROF_OBJ_UNREADABLE) && !o->mtime_ns &&
			    !(live->flags & BPROF_OBJ_UNREADABLE)) {
				char *path = strdup(live->path);
				if (!path) {
					free(line);
					fclose(f);
					return -ENOMEM;
				}
				free(o->path);
				*o = *live;
				o->path = path;
				/* and the same object in the recording */
				m->objs[i].alias = m->objs[j].alias != UINT32_MAX ? m->objs[j].alias : j;
			}
			break;
		}
	}
	free(line);
	fclose(f);
	return 0;
}

/*
 * Objects seen only through the BPF walk of processes already gone (a
 * build's compiler processes live milliseconds) have a basename and no
 * build-id.  Any live process mapping the same file lets us read it now:
 * prof-record itself maps libc and ld.so, the most common of them; then the
 * other processes, only while something is still unresolved.
 */
static int resolve_unreadable(struct manifest *m)
{
	char path[64];
	DIR *d;
	int err;

	if (!count_unreadable(m))
		return 0;
	if ((err = resolve_from(m, (uint32_t)getpid(), "/proc/self/maps")))
		return err;
	d = opendir("/proc");
	if (!d)
		return 0;
	for (struct dirent *de; count_unreadable(m) && (de = readdir(d));) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%.20s/maps", de->d_name);
		if ((err = resolve_from(m, (uint32_t)strtoul(de->d_name, NULL, 10), path))) {
			closedir(d);
			return err;
		}
	}
	closedir(d);
	return 0;
}

/* Whether mapping event h and mapping me show the same thing where they
 * meet: both anonymous, or the same file at the same offsets. */
static bool same_source(const struct hist_ent *h, const struct mmap_ent *me)
{
	/* private anonymous memory has no inode, in /proc as in the event;
	 * shared memory (memfd) has one in both, though neither names it */
	if (!h->ino || !me->ino)
		return !h->ino && !me->ino;
	return h->dev == me->dev && h->ino == me->ino && h->off + me->start == me->off + h->start;
}

/*
 * The GENERATIONS data of image p (SPEC.md 6.12) into bp, whose mappings
 * are src's (p's own, or a parent's it borrows).  An image that never
 * changed has none: its mappings are the only ones it had.
 *   gaps:    generations whose event never came, or came partial;
 *   births:  a mapping made by an event is born at the latest event that
 *            made it; one no event made existed when the image began
 *            (birth 0: exec, or before the recording) unless a gap came
 *            before the read that saw it, which then saw it live no
 *            earlier than the latest such gap; a read confirms an event's
 *            mapping the same way (the gap could not have replaced it);
 *   history: every event's mapping with its generation.
 */
static int emit_gens(struct manifest *m, struct bprof_recording *rec, struct proc_ent *p,
		     const struct proc_ent *src, struct bprof_process *bp)
{
	uint32_t ng = 0;

	if (!p->nr_hist && !p->max_gen && !p->gen_unknown)
		return 0;
	if (manifest__resolve_hist(m, p))
		return -ENOMEM;
	for (uint32_t i = 0; i < p->nr_partial; i++)
		if (p->partial[i] / 64 < p->gen_words)
			p->gen_seen[p->partial[i] / 64] &= ~(UINT64_C(1) << (p->partial[i] % 64));
	for (uint32_t g = 1; g <= p->max_gen; g++)
		ng += !manifest__gen_was_seen(p, g);
	bp->has_gens = 1;
	if (ng) {
		bp->gaps = malloc(ng * sizeof(*bp->gaps));
		if (!bp->gaps)
			return -ENOMEM;
		for (uint32_t g = 1; g <= p->max_gen; g++)
			if (!manifest__gen_was_seen(p, g))
				bp->gaps[bp->nr_gaps++] = g;
		m->st.gen_gaps += ng;
	}
	for (uint32_t j = 0; j < bp->nr_mappings; j++) {
		const struct mmap_ent *me = &src->maps[j];
		uint32_t b = 0, last_gap = 0;
		bool made = false;

		if (src != p)
			continue; /* a parent's, as the child began with them: 0 */
		for (uint32_t i = 0; i < p->nr_hist; i++) {
			const struct hist_ent *h = &p->hist[i];

			if (h->start < me->end && me->start < h->end && same_source(h, me)) {
				made = true;
				if (h->gen > b)
					b = h->gen;
			}
		}
		if (me->read_gen == MANIFEST_GEN_NONE) {
			/* the read raced with a change: it confirms nothing */
			if (!made && ng)
				b = MANIFEST_GEN_NONE;
		} else {
			for (uint32_t k = 0; k < bp->nr_gaps && bp->gaps[k] <= me->read_gen; k++)
				last_gap = bp->gaps[k];
			if (last_gap > b)
				b = last_gap;
		}
		bp->mappings[j].birth = b;
	}
	if (p->nr_hist) {
		bp->history = calloc(p->nr_hist, sizeof(*bp->history));
		if (!bp->history)
			return -ENOMEM;
		for (uint32_t i = 0; i < p->nr_hist; i++) {
			const struct hist_ent *h = &p->hist[i];
			struct bprof_mapping *bm = &bp->history[i];

			bm->start = h->start;
			bm->end = h->end;
			bm->file_offset = h->off;
			bm->flags = h->flags;
			bm->birth = h->gen;
			bm->object_index = BPROF_NO_OBJECT;
			if (h->obj != BPROF_NO_OBJECT && emit_object(m, rec, h->obj, &bm->object_index))
				return -ENOMEM;
		}
		bp->nr_history = p->nr_hist;
	}
	return 0;
}

/* The JIT section (SPEC.md 6.16): what became of perf maps, when any was
 * seen or a cap refused one. */
static void emit_jit(struct manifest *m, struct bprof_recording *rec)
{
	struct perfmap_stats ps;
	struct perfmap_limits pl;
	struct bprof_jit *j = &rec->jit;
	struct timespec mono, real;

	perfmap_stats(m->perfmaps, &ps);
	perfmap_limits(m->perfmaps, &pl);
	if (!ps.reads && !ps.refused && !ps.dropped && !j->nr_dumps && !ps.jd_refused)
		return;
	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &real);
	j->present = 1;
	j->mono_minus_real_ns = ((int64_t)mono.tv_sec - (int64_t)real.tv_sec) * 1000000000LL +
				((int64_t)mono.tv_nsec - (int64_t)real.tv_nsec);
	j->counters[BPROF_JIT_PERF_MAP_BYTES] = ps.bytes;
	j->counters[BPROF_JIT_PERF_MAP_DROPPED] = ps.dropped;
	j->counters[BPROF_JIT_PERF_MAP_CAPPED] = ps.capped;
	j->counters[BPROF_JIT_PERF_MAP_CAP_IMAGE] = pl.per_image;
	j->counters[BPROF_JIT_PERF_MAP_CAP_TOTAL] = pl.total;
	j->counters[BPROF_JIT_PERF_MAP_REFUSED] = ps.refused;
	j->counters[BPROF_JIT_PERF_MAP_READS] = ps.reads;
	j->counters[BPROF_JIT_PERF_MAP_FINAL] = ps.final;
	j->counters[BPROF_JIT_PERF_MAP_REPLACED] = ps.replaced;
	j->counters[BPROF_JIT_DUMP_BYTES] = ps.jd_bytes;
	j->counters[BPROF_JIT_DUMP_DROPPED] = ps.jd_dropped;
	j->counters[BPROF_JIT_DUMP_CODE_STRIPPED] = ps.jd_stripped;
	j->counters[BPROF_JIT_DUMP_REFUSED] = ps.jd_refused;
}

static int cmp_dump(const void *a, const void *b)
{
	const struct bprof_jitdump *x = a, *y = b;
	uint64_t kx = (uint64_t)x->pid << 32 | x->exec_id, ky = (uint64_t)y->pid << 32 | y->exec_id;

	return kx < ky ? -1 : kx > ky;
}

/* The wanted images' jitdumps into rec (sorted, SPEC.md 6.16).  0 or -ENOMEM. */
static int emit_dumps(struct manifest *m, struct bprof_recording *rec)
{
	struct bprof_jit *j = &rec->jit;
	size_t n = 0;

	for (size_t i = 0; i < m->nr_procs; i++)
		n += m->procs[i].want && m->procs[i].jd.len;
	if (!n)
		return 0;
	j->dumps = calloc(n, sizeof(*j->dumps));
	if (!j->dumps)
		return -ENOMEM;
	for (size_t i = 0; i < m->nr_procs; i++) {
		const struct proc_ent *p = &m->procs[i];
		struct bprof_jitdump *d = &j->dumps[j->nr_dumps];

		if (!p->want || !p->jd.len)
			continue;
		d->data = malloc(p->jd.len);
		if (!d->data)
			return -ENOMEM;
		memcpy(d->data, p->jd.data, p->jd.len);
		d->len = p->jd.len;
		d->pid = p->pid;
		d->exec_id = p->exec_id;
		j->nr_dumps++;
	}
	qsort(j->dumps, j->nr_dumps, sizeof(*j->dumps), cmp_dump);
	return 0;
}

int manifest_emit(struct manifest *m, struct bprof_recording *rec, uint64_t *lost)
{
	size_t n = m->nr_procs;

	*lost = 0;
	if (resolve_unreadable(m) == -ENOMEM)
		return -ENOMEM;
	/* Last chance for images whose first-sample event was dropped or came
	 * too late: those still alive are read now. */
	for (size_t i = 0; i < n; i++) {
		struct proc_ent *p = &m->procs[i];

		if (p->want && !p->snapped && !p->dead && p->pid) {
			int err = manifest__snapshot(m, p->pid, p->exec_id);

			if (err == -ENOMEM)
				return err;
		}
	}
	for (size_t i = 0; i < m->nr_procs; i++) {
		struct proc_ent *p = &m->procs[i];
		const struct proc_ent *src = p;
		struct bprof_process bp = {0};

		if (!p->want)
			continue;
		/* what the map gained since the last read; a dead image's for
		 * the last time (its exit event may have been lost) */
		if (p->snapped && manifest__read_perf_map(m, p, p->dead))
			return -ENOMEM;
		if (!p->snapped) {
			src = ancestor_snapshot(m, p);
			if (!src) {
				if (p->need)
					(*lost)++;
				m->st.procs_denied += p->denied;
				continue;
			}
			m->st.from_parent++;
		}
		bp.pid = p->pid;
		bp.ns_pid = p->ns_pid ? p->ns_pid : src->ns_pid;
		bp.exec_id = p->exec_id;
		bp.snapshot_ns = src->snapshot_ns;
		memcpy(bp.comm, p->comm[0] ? p->comm : src->comm, BPROF_COMM_LEN);
		bp.nr_mappings = src->nr_maps;
		bp.mappings = calloc(src->nr_maps + 1, sizeof(*bp.mappings));
		if (!bp.mappings)
			return -ENOMEM;
		for (uint32_t j = 0; j < src->nr_maps; j++) {
			const struct mmap_ent *me = &src->maps[j];
			struct bprof_mapping *bm = &bp.mappings[j];

			bm->start = me->start;
			bm->end = me->end;
			bm->file_offset = me->off;
			bm->flags = me->flags;
			bm->object_index = BPROF_NO_OBJECT;
			if (me->obj != BPROF_NO_OBJECT &&
			    emit_object(m, rec, me->obj, &bm->object_index)) {
				free(bp.mappings);
				return -ENOMEM;
			}
		}
		if (emit_gens(m, rec, p, src, &bp)) {
			free(bp.mappings);
			free(bp.history);
			free(bp.gaps);
			return -ENOMEM;
		}
		if (src->pm.len) {
			bp.perf_map = malloc(src->pm.len + 1);
			if (!bp.perf_map) {
				free(bp.mappings);
				free(bp.history);
				free(bp.gaps);
				return -ENOMEM;
			}
			memcpy(bp.perf_map, src->pm.text, src->pm.len);
			bp.perf_map_len = src->pm.len;
		}
		if (bprof_recording_add_process(rec, &bp)) {
			free(bp.mappings);
			free(bp.perf_map);
			free(bp.history);
			free(bp.gaps);
			return -ENOMEM;
		}
	}
	if (emit_dumps(m, rec))
		return -ENOMEM;
	emit_jit(m, rec);
	return emit_images(m, rec);
}

void manifest_boundary(struct manifest *m)
{
	for (size_t i = 0; i < m->nr_procs; i++)
		m->procs[i].dead_at_boundary = m->procs[i].dead;
}

size_t manifest_images(const struct manifest *m)
{
	return m->nr_procs;
}

int manifest_next_file(struct manifest *m)
{
	uint8_t *keep = malloc(m->nr_procs ? m->nr_procs : 1);
	struct idx_table t = {0};
	size_t n = 0;

	if (!keep)
		return -ENOMEM;
	/* the dirty list holds indexes, which are about to move */
	if (manifest_flush(m)) {
		free(keep);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->nr_procs; i++) {
		const struct proc_ent *p = &m->procs[i];

		keep[i] = !p->dead_at_boundary || p->want;
	}
	/* what a kept image that never exec'd may borrow (ancestor_snapshot) */
	for (size_t i = 0; i < m->nr_procs; i++) {
		const struct proc_ent *p = &m->procs[i];

		if (!keep[i] || p->dead_at_boundary)
			continue;
		for (int depth = 0; depth < 32 && p->has_parent && p->parent_exec_id == p->exec_id &&
				    p->ppid && p->ppid != p->pid;
		     depth++) {
			const struct proc_ent *pp = manifest__proc_find(m, p->ppid, p->exec_id);

			if (!pp)
				break;
			keep[pp - m->procs] = 1;
			p = pp;
		}
	}
	/* the index first: failing leaves everything as it was */
	for (size_t i = 0; i < m->nr_procs; i++)
		if (keep[i] && manifest__tab_insert(&t, manifest__mix64((uint64_t)m->procs[i].pid << 32 |
						    m->procs[i].exec_id), n++)) {
			free(t.keys);
			free(t.vals);
			free(keep);
			return -ENOMEM;
		}
	n = 0;
	for (size_t i = 0; i < m->nr_procs; i++) {
		struct proc_ent *p = &m->procs[i];

		if (!keep[i]) {
			manifest__proc_free(m, p);
			continue;
		}
		p->want = p->need = false;
		m->procs[n++] = *p;
	}
	free(keep);
	free(m->proc_idx.keys);
	free(m->proc_idx.vals);
	m->proc_idx = t;
	m->nr_procs = n;
	for (size_t i = 0; i < m->nr_objs; i++)
		m->objs[i].out_index = UINT32_MAX;
	return 0;
}
