// SPDX-License-Identifier: Apache-2.0
/*
 * manifest_snapshot.c - snapshots of /proc/PID/maps for sampled process
 * images: the read, between two looks at the BPF side's exec and mapping
 * generations (a read that raced with an exec or a new mapping is filed
 * or distrusted accordingly), merged with the mappings known before; the
 * image's namespace pid, comm and perf map.  Rescans of a process skip
 * mappings they already know, so a rescan costs one read of
 * /proc/PID/maps.  Calls manifest.c and manifest_objects.c.
 */
#include "manifest_internal.h"

/* The current mapping generation of image (pid, exec_id): 0 before its
 * first change; MANIFEST_GEN_NONE without generations. */
static uint32_t map_gen(struct manifest *m, uint32_t pid, uint32_t exec_id)
{
	struct profile_map_gen g;

	if (m->map_gens_fd < 0)
		return 0;
	if (bpf_map_lookup_elem(m->map_gens_fd, &pid, &g))
		return 0;
	return g.exec_id == exec_id ? g.gen : 0;
}

/* The current exec generation of pid as the BPF side saw it. */
bool manifest__exec_gen(struct manifest *m, uint32_t pid, uint32_t *gen)
{
	if (m->exec_gen_fd < 0)
		return false;
	return bpf_map_lookup_elem(m->exec_gen_fd, &pid, gen) == 0;
}

static char *read_file(const char *path, size_t max, size_t *len, int *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t cap = 16384, got = 0;
	char *buf;
	ssize_t n;

	*err = 0;
	if (fd < 0) {
		*err = errno;
		return NULL;
	}
	buf = malloc(cap + 1);
	while (buf) {
		if (got == cap) {
			char *nb;

			if (cap >= max)
				break;
			cap *= 2;
			nb = realloc(buf, cap + 1);
			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
		}
		n = read(fd, buf + got, cap - got);
		if (n < 0) {
			*err = errno;
			free(buf);
			buf = NULL;
			break;
		}
		if (n == 0)
			break;
		got += n;
	}
	if (!buf && !*err)
		*err = ENOMEM;
	close(fd);
	if (buf) {
		buf[got] = 0;
		*len = got;
	}
	return buf;
}

/* Shared anonymous memory, memfd and SysV shm have a path but no file a
 * symbolizer could open: JIT code lives there (double mapping). */
static bool anon_backed(const char *name)
{
	return !strncmp(name, "/dev/zero", 9) || !strncmp(name, "/memfd:", 7) ||
	       !strncmp(name, "/SYSV", 5) || !strncmp(name, "/[aio]", 6);
}

static int cmp_mmap(const void *a, const void *b)
{
	const struct mmap_ent *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

const struct mmap_ent *manifest__known_mapping(const struct proc_ent *p, const struct mmap_ent *me)
{
	size_t lo = 0, hi = p->nr_maps;

	while (lo < hi) { /* p->maps is sorted by start */
		size_t mid = (lo + hi) / 2;

		if (p->maps[mid].start < me->start)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < p->nr_maps && p->maps[lo].start == me->start && p->maps[lo].end == me->end &&
	    p->maps[lo].off == me->off && p->maps[lo].ino == me->ino && p->maps[lo].dev == me->dev &&
	    p->maps[lo].flags == me->flags)
		return &p->maps[lo];
	return NULL;
}

/* New mappings win; old ones are kept where they overlap none of the new
 * (a library dlclose'd since the last read stays symbolizable). */
int manifest__merge_maps(struct proc_ent *p, struct mmap_ent *nw, uint32_t nr)
{
	struct mmap_ent *out;
	uint32_t n = 0, i, j;

	if (nr == p->nr_maps && (!nr || !memcmp(nw, p->maps, nr * sizeof(*nw)))) {
		free(nw);
		return 0;
	}
	out = malloc((nr + p->nr_maps) * sizeof(*out) + 1);
	if (!out) {
		free(nw);
		return -ENOMEM;
	}
	memcpy(out, nw, nr * sizeof(*nw));
	n = nr;
	for (i = 0, j = 0; i < p->nr_maps; i++) {
		const struct mmap_ent *o = &p->maps[i];
		bool overlap = false;

		while (j < nr && nw[j].end <= o->start)
			j++;
		if (j < nr && nw[j].start < o->end)
			overlap = true;
		if (!overlap)
			out[n++] = *o;
	}
	free(nw);
	qsort(out, n, sizeof(*out), cmp_mmap);
	free(p->maps);
	p->maps = out;
	p->nr_maps = n;
	return 0;
}

static void read_ns_pid(struct proc_ent *p)
{
	char path[64], *buf, *s;
	size_t len;
	int err;

	snprintf(path, sizeof(path), "/proc/%u/status", p->pid);
	buf = read_file(path, 65536, &len, &err);
	if (!buf)
		return;
	s = strstr(buf, "\nNSpid:");
	if (s) {
		char *end = strchr(s + 1, '\n'), *last = NULL, *t;

		if (end)
			*end = 0;
		for (t = strtok(s + 7, " \t"); t; t = strtok(NULL, " \t"))
			last = t;
		if (last)
			p->ns_pid = strtoul(last, NULL, 10);
	}
	free(buf);
}

/* The image's perf map, as far as written: see perfmap.c.  final: the image
 * ended or the recording does. */
int manifest__read_perf_map(struct manifest *m, struct proc_ent *p, bool final)
{
	bool anon = p->pm.pinned;
	int err = 0;

	/* only JIT code (anonymous executable memory, now or earlier) is named
	 * by a perf map: a process without any costs nothing here (most) */
	for (uint32_t i = 0; i < p->nr_maps && !anon; i++)
		anon = p->maps[i].flags & BPROF_MAP_ANON;
	for (uint32_t i = 0; i < p->nr_hist && !anon; i++)
		anon = p->hist[i].flags & BPROF_MAP_ANON;
	if (anon)
		err = perfmap_update(m->perfmaps, &p->pm, p->pid, p->ns_pid, final);
	return err ? err : perfmap_dump_update(m->perfmaps, &p->jd, final);
}

/*
 * Read /proc/PID/maps into the snapshot of the image it belongs to.  The
 * image is hint_exec unless the BPF side saw the process exec since.
 * Returns 0, -ESRCH when the process is gone, -ENOMEM.
 */
int manifest__snapshot(struct manifest *m, uint32_t pid, uint32_t hint_exec)
{
	struct mmap_ent *nw = NULL;
	uint32_t gen0 = 0, gen1 = 0, nr = 0, exec_id, mg0, mg1, read_gen;
	bool have0, have1;
	struct proc_ent *p;
	char path[64], *buf = NULL, *line, *save = NULL;
	size_t len, nlines = 0;
	int err, tries = 0;

	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	do {
		free(buf);
		have0 = manifest__exec_gen(m, pid, &gen0);
		mg0 = map_gen(m, pid, have0 ? gen0 : hint_exec);
		buf = read_file(path, 64u << 20, &len, &err);
		have1 = manifest__exec_gen(m, pid, &gen1);
		mg1 = map_gen(m, pid, have1 ? gen1 : hint_exec);
	} while (buf && (have0 != have1 || gen0 != gen1 || mg0 != mg1) && ++tries < 3);
	/* a read that raced with a new mapping cannot say which generation
	 * it saw: its mappings confirm nothing and its table is not used */
	read_gen = mg0 == mg1 ? mg1 : MANIFEST_GEN_NONE;
	if (!buf) {
		m->st.failed++;
		/* another user's process, and no CAP_SYS_PTRACE */
		if ((err == EACCES || err == EPERM) && (p = manifest__proc_find(m, pid, hint_exec)))
			p->denied = true;
		if (err == ENOMEM)
			return -ENOMEM;
		return -ESRCH;
	}
	exec_id = have1 ? gen1 : hint_exec;
	p = manifest__proc_get(m, pid, exec_id);
	if (!p) {
		free(buf);
		return -ENOMEM;
	}
	for (char *c = buf; *c; c++)
		nlines += *c == '\n';
	if (!nlines) { /* zombie or kernel thread: nothing mapped */
		free(buf);
		m->st.failed++;
		if (exec_id == hint_exec)
			p->dead = true;
		return -ESRCH;
	}
	nw = malloc(nlines * sizeof(*nw) + 1);
	if (!nw) {
		free(buf);
		return -ENOMEM;
	}
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long long start, end, off, ino;
		unsigned int maj, min;
		char perms[8], *name;
		int pos = 0;
		struct mmap_ent me = {0};
		const struct mmap_ent *k;
		size_t nl;
		const char *sp = strchr(line, ' ');

		/* most mappings are not executable: skip them before sscanf,
		 * which costs about a microsecond a line on every rescan */
		if (!sp || !sp[1] || sp[1] == ' ' || !sp[2] || sp[2] == ' ' || sp[3] != 'x')
			continue;
		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &off, &maj,
			   &min, &ino, &pos) < 7 || pos == 0)
			continue;
		if (strlen(perms) < 3 || perms[2] != 'x')
			continue;
		name = line + pos;
		me.start = start;
		me.end = end;
		me.off = off;
		me.dev = makedev(maj, min);
		me.ino = ino;
		me.obj = BPROF_NO_OBJECT;
		me.read_gen = read_gen;
		if (perms[0] == 'r')
			me.flags |= BPROF_MAP_READ;
		if (perms[1] == 'w')
			me.flags |= BPROF_MAP_WRITE;
		if (!strcmp(name, "[vsyscall]"))
			continue; /* fixed, not in any object we could name */
		if (!strcmp(name, "[vdso]"))
			me.flags |= BPROF_MAP_VDSO;
		else if (!ino || name[0] != '/' || anon_backed(name))
			me.flags |= BPROF_MAP_ANON;
		k = manifest__known_mapping(p, &me);
		if (k) {
			me.obj = k->obj;
		} else if (me.flags & BPROF_MAP_VDSO) {
			me.obj = manifest__vdso_object(m, pid, &me);
		} else if (!(me.flags & BPROF_MAP_ANON)) {
			bool deleted = false;

			nl = strlen(name);
			if (nl > 10 && !strcmp(name + nl - 10, " (deleted)")) {
				name[nl - 10] = 0;
				deleted = true;
			}
			me.obj = manifest__object_for(m, pid, &me, name, deleted);
			if (me.obj == BPROF_NO_OBJECT) {
				free(nw);
				free(buf);
				return -ENOMEM;
			}
			/* a JIT's jitdump: mapped (executable) so that perf sees it */
			if (!p->jd.found && perfmap_is_jitdump(name) &&
			    perfmap_dump_found(m->perfmaps, &p->jd, pid, me.start, me.end, name)) {
				free(nw);
				free(buf);
				return -ENOMEM;
			}
		}
		nw[nr++] = me;
	}
	free(buf);
	if (!nr) {
		/* no executable mapping: caught in the middle of exec (new mm,
		 * nothing mapped yet); not this image's layout */
		free(nw);
		m->st.failed++;
		return -ESRCH;
	}
	qsort(nw, nr, sizeof(*nw), cmp_mmap);
	uint32_t before = p->nr_maps;
	const void *before_maps = p->maps;
	if (manifest__merge_maps(p, nw, nr))
		return -ENOMEM;
	/* manifest__merge_maps() keeps the old array when nothing changed
	 * (the table then needs only its generation: the unwinder rewrites it) */
	if (p->maps != before_maps || p->nr_maps != before || read_gen != p->table_gen) {
		manifest__observe_image(m, p, read_gen);
		p->table_gen = read_gen;
	}
	if (!p->snapped)
		p->snapshot_ns = manifest__now_ns() - m->start_ns;
	p->snapped = true;
	m->st.snapshots++;
	if (!p->ns_pid)
		read_ns_pid(p);
	if (!p->comm[0]) {
		char cpath[64], *c;
		size_t cl;

		snprintf(cpath, sizeof(cpath), "/proc/%u/comm", pid);
		c = read_file(cpath, 64, &cl, &err);
		if (c) {
			c[strcspn(c, "\n")] = 0;
			strncpy(p->comm, c, BPROF_COMM_LEN - 1);
			free(c);
		}
	}
	return manifest__read_perf_map(m, p, false);
}
