// SPDX-License-Identifier: Apache-2.0
/*
 * manifest_events.c - what the recording loop tells the manifest as it
 * goes: a process image met (first sample, exec), the mappings of an image
 * that ends (exit, exec), executable mappings as they are made with their
 * generations, images marked for a read at the next flush, the rescan, the
 * images the counts want.  Calls manifest.c, manifest_objects.c and
 * manifest_snapshot.c; manifest_emit.c calls it, never the other way.
 */
#include "manifest_internal.h"

static void observe_gone(struct manifest *m, const struct proc_ent *p)
{
	if (m->obs.image_gone && p->snapped)
		m->obs.image_gone(m->obs.ctx, p->pid, p->exec_id);
}

/* comm: at most BPROF_COMM_LEN bytes, NUL-terminated or not */
static void set_comm(struct proc_ent *p, const char *comm)
{
	size_t n = strnlen(comm, BPROF_COMM_LEN - 1);

	memcpy(p->comm, comm, n);
	p->comm[n] = 0;
}

int manifest_event(struct manifest *m, uint32_t pid, uint32_t exec_id, uint32_t ns_pid,
		   uint32_t ppid, uint32_t parent_exec_id, const char *comm, bool force)
{
	struct proc_ent *p = manifest__proc_get(m, pid, exec_id);
	int err;

	if (!p)
		return -ENOMEM;
	p->ns_pid = ns_pid;
	p->ppid = ppid;
	p->parent_exec_id = parent_exec_id;
	p->has_parent = true;
	set_comm(p, comm);
	if (p->snapped && !force)
		return 0;
	err = manifest__snapshot(m, pid, exec_id);
	return err == -ENOMEM ? err : 0;
}

int manifest_vma(struct manifest *m, uint32_t pid, uint32_t exec_id, uint64_t start, uint64_t end,
		 uint64_t offset, uint64_t dev, uint64_t ino, uint64_t mtime_ns, uint32_t vm_flags,
		 const char *name)
{
	struct proc_ent *p = manifest__proc_get(m, pid, exec_id);
	struct mmap_ent *me;
	const struct mmap_ent *k;
	uint32_t idx = BPROF_NO_OBJECT;

	if (!p)
		return -ENOMEM;
	/* the image is ending (exit, or exec about to replace it), and this
	 * is the first the recorder hears of it: its perf map is complete
	 * (a JVM dumps it at exit) and /proc/PID/root may already be gone */
	if (!p->pm.final && manifest__read_perf_map(m, p, true))
		return -ENOMEM;
	me = malloc(sizeof(*me));
	if (!me)
		return -ENOMEM;
	me->start = start;
	me->end = end;
	me->off = offset;
	me->dev = dev;
	me->ino = ino;
	me->flags = (vm_flags & 1 ? BPROF_MAP_READ : 0) | (vm_flags & 2 ? BPROF_MAP_WRITE : 0);
	me->obj = BPROF_NO_OBJECT;
	/* the image's last generation: the exit walk comes after every
	 * mapping event of the image in the ring buffer */
	me->read_gen = p->max_gen;
	me->pad = 0;
	k = manifest__known_mapping(p, me);
	if (k) {
		free(me);
		return 0;
	}
	idx = manifest__event_object(m, dev, ino, mtime_ns, name, true);
	if (idx == BPROF_NO_OBJECT) {
		free(me);
		return -ENOMEM;
	}
	me->obj = idx;
	if (manifest__merge_maps(p, me, 1))
		return -ENOMEM;
	if (!p->snapped)
		p->snapshot_ns = manifest__now_ns() - m->start_ns;
	p->snapped = true;
	m->st.from_exit++;
	return 0;
}

static int gen_note(struct proc_ent *p, uint32_t gen)
{
	uint32_t w = gen / 64;

	if (w >= p->gen_words) {
		uint32_t nw = p->gen_words ? p->gen_words : 4;
		uint64_t *n;

		while (nw <= w)
			nw *= 2;
		n = realloc(p->gen_seen, nw * sizeof(*n));
		if (!n)
			return -ENOMEM;
		memset(n + p->gen_words, 0, (nw - p->gen_words) * sizeof(*n));
		p->gen_seen = n;
		p->gen_words = nw;
	}
	p->gen_seen[w] |= UINT64_C(1) << (gen % 64);
	return 0;
}

bool manifest__gen_was_seen(const struct proc_ent *p, uint32_t gen)
{
	return gen / 64 < p->gen_words && (p->gen_seen[gen / 64] >> (gen % 64) & 1);
}

/* Resolve the objects of the image's mappings learnt from events, once its
 * maps were read (the files are then known, if they were still mapped). */
int manifest__resolve_hist(struct manifest *m, struct proc_ent *p)
{
	for (uint32_t i = 0; i < p->nr_hist; i++) {
		struct hist_ent *h = &p->hist[i];

		if (!h->need_obj)
			continue;
		h->obj = manifest__event_object(m, h->dev, h->ino, h->mtime, h->name, true);
		if (h->obj == BPROF_NO_OBJECT)
			return -ENOMEM;
		h->need_obj = false;
	}
	return 0;
}

int manifest_map_event(struct manifest *m, const struct manifest_map_ev *ev)
{
	struct proc_ent *p = manifest__proc_get(m, ev->pid, ev->exec_id);
	struct hist_ent *h;

	if (!p)
		return -ENOMEM;
	if (ev->gen == 0 || ev->gen >= MANIFEST_GEN_NONE || ev->start >= ev->end)
		return 0; /* not a generation (a hostile or broken event) */
	if (p->nr_hist == p->cap_hist) {
		uint32_t nc = p->cap_hist ? p->cap_hist * 2 : 16;
		void *n = realloc(p->hist, nc * sizeof(*p->hist));

		if (!n)
			return -ENOMEM;
		p->hist = n;
		p->cap_hist = nc;
	}
	if (gen_note(p, ev->gen))
		return -ENOMEM;
	if (ev->partial) {
		/* what the change did past this mapping is unknown: a gap */
		if (p->nr_partial == p->cap_partial) {
			uint32_t nc = p->cap_partial ? p->cap_partial * 2 : 4;
			void *n = realloc(p->partial, nc * sizeof(*p->partial));

			if (!n)
				return -ENOMEM;
			p->partial = n;
			p->cap_partial = nc;
		}
		p->partial[p->nr_partial++] = ev->gen;
	}
	h = &p->hist[p->nr_hist++];
	memset(h, 0, sizeof(*h));
	h->start = ev->start;
	h->end = ev->end;
	h->off = ev->offset;
	h->dev = ev->dev;
	h->ino = ev->ino;
	h->mtime = ev->mtime_ns;
	h->gen = ev->gen;
	h->flags = ev->flags & (BPROF_MAP_READ | BPROF_MAP_WRITE | BPROF_MAP_ANON);
	h->obj = BPROF_NO_OBJECT;
	/* shared memory is anonymous to the report, as manifest__snapshot() has it */
	if (ev->name && (!strncmp(ev->name, "memfd:", 6) || !strncmp(ev->name, "SYSV", 4) ||
			 !strcmp(ev->name, "dev/zero") || !strcmp(ev->name, "[aio]")))
		h->flags |= BPROF_MAP_ANON;
	if (h->flags & BPROF_MAP_ANON)
		h->off = 0; /* vm_pgoff of anonymous memory is its address: as /proc/PID/maps has it */
	if (!(h->flags & BPROF_MAP_ANON)) {
		snprintf(h->name, sizeof(h->name), "%s", ev->name ? ev->name : "");
		h->obj = manifest__event_object(m, h->dev, h->ino, h->mtime, h->name, false);
		h->need_obj = h->obj == BPROF_NO_OBJECT;
	}
	if (ev->gen > p->max_gen)
		p->max_gen = ev->gen;
	m->st.map_events++;
	/* The image's mappings follow its events: a mapping of an object
	 * already known (or anonymous) made in the generation right after the
	 * one its mappings were last read in or brought up to goes in at once
	 * (replacing what it overlaps, as it did in the process), and the
	 * unwinder's table with it: no /proc read, which at 1,000 libraries
	 * a second was most of prof-record's CPU.  Anything else (an object
	 * not seen yet, a generation skipped or out of order, a partial
	 * change) is read at the next flush. */
	if (p->snapped && !ev->partial && p->table_gen < MANIFEST_GEN_NONE &&
	    ev->gen == p->table_gen + 1 && ((h->flags & BPROF_MAP_ANON) || !h->need_obj)) {
		struct mmap_ent *me = calloc(1, sizeof(*me));

		if (!me)
			return -ENOMEM;
		me->start = h->start;
		me->end = h->end;
		me->off = h->off;
		me->dev = h->dev;
		me->ino = h->ino;
		me->obj = h->obj;
		me->flags = h->flags;
		me->read_gen = ev->gen;
		if (manifest__merge_maps(p, me, 1))
			return -ENOMEM;
		p->table_gen = ev->gen;
		manifest__observe_image(m, p, ev->gen);
		m->st.map_events_applied++;
		/* its first JIT code: keep its /tmp now, in case it exits
		 * before the next rescan */
		if ((h->flags & BPROF_MAP_ANON) && !p->pm.pinned)
			return manifest__read_perf_map(m, p, false);
		return 0;
	}
	/* read the image at the next flush: the unwinder's table, the file
	 * while it is still mapped */
	return manifest_mark(m, ev->pid, ev->exec_id);
}

int manifest_mark(struct manifest *m, uint32_t pid, uint32_t exec_id)
{
	struct proc_ent *p = manifest__proc_get(m, pid, exec_id);

	if (!p)
		return -ENOMEM;
	if (p->dirty)
		return 0;
	if (m->nr_dirty == m->cap_dirty) {
		size_t nc = m->cap_dirty ? m->cap_dirty * 2 : 64;
		void *nd = realloc(m->dirty, nc * sizeof(*m->dirty));

		if (!nd)
			return -ENOMEM;
		m->dirty = nd;
		m->cap_dirty = nc;
	}
	p->dirty = true;
	m->dirty[m->nr_dirty++] = p - m->procs;
	return 0;
}

int manifest_flush(struct manifest *m)
{
	for (size_t i = 0; i < m->nr_dirty; i++) {
		struct proc_ent *p = &m->procs[m->dirty[i]];
		uint32_t pid = p->pid, exec_id = p->exec_id;
		int err;

		p->dirty = false;
		err = manifest__snapshot(m, pid, exec_id);
		if (err == -ENOMEM)
			return err;
		p = &m->procs[m->dirty[i]]; /* manifest__snapshot() may grow m->procs */
		if (p->nr_hist && manifest__resolve_hist(m, p))
			return -ENOMEM;
	}
	m->nr_dirty = 0;
	return 0;
}

int manifest_rescan(struct manifest *m)
{
	for (size_t i = 0; i < m->nr_procs; i++) {
		struct proc_ent *p = &m->procs[i];
		uint32_t gen;
		int err;

		if (!p->snapped || p->dead)
			continue;
		/* only the newest image of a process is still mapped */
		if (manifest__exec_gen(m, p->pid, &gen) && gen != p->exec_id) {
			p->dead = true;
			observe_gone(m, p);
			if (manifest__read_perf_map(m, p, true))
				return -ENOMEM;
			continue;
		}
		err = manifest__snapshot(m, p->pid, p->exec_id);
		p = &m->procs[i]; /* manifest__snapshot() may grow m->procs */
		if (err == -ESRCH) {
			p->dead = true;
			observe_gone(m, p);
			/* through the /tmp kept open: /proc/PID/root is gone */
			if (manifest__read_perf_map(m, p, true))
				return -ENOMEM;
		} else if (err) {
			return err;
		}
	}
	return 0;
}

int manifest_want(struct manifest *m, uint32_t pid, uint32_t exec_id, const char *comm,
		  bool need, uint32_t map_gen)
{
	struct proc_ent *p = manifest__proc_get(m, pid, exec_id);

	if (!p)
		return -ENOMEM;
	if (map_gen == PROFILE_GEN_UNKNOWN)
		p->gen_unknown = true;
	else if (map_gen > p->max_gen && map_gen < MANIFEST_GEN_NONE)
		p->max_gen = map_gen;
	p->want = true;
	p->need |= need;
	if (!p->comm[0])
		set_comm(p, comm);
	return 0;
}
