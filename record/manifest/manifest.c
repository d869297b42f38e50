// SPDX-License-Identifier: Apache-2.0
/*
 * manifest.c - snapshots of /proc/PID/maps for sampled process images and
 * the identity of each executable object they map.
 *
 * Objects are identified by (st_dev, st_ino, mtime) of the file behind
 * /proc/PID/map_files/START-END, which reaches the mapped inode even when it
 * was deleted or lives in another mount namespace (containers).  Each object
 * is opened once per recording to read its build-id; rescans of a process
 * skip mappings they already know, so a rescan costs one read of
 * /proc/PID/maps.
 */
#include "manifest_internal.h"

uint64_t manifest__mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

static int tab_grow(struct idx_table *t)
{
	size_t ncap = t->cap ? t->cap * 2 : 1024;
	uint64_t *nk = calloc(ncap, sizeof(*nk));
	uint32_t *nv = malloc(ncap * sizeof(*nv));

	if (!nk || !nv) {
		free(nk);
		free(nv);
		return -ENOMEM;
	}
	memset(nv, 0xff, ncap * sizeof(*nv));
	for (size_t i = 0; i < t->cap; i++) {
		size_t j;

		if (t->vals[i] == UINT32_MAX)
			continue;
		for (j = t->keys[i] & (ncap - 1); nv[j] != UINT32_MAX; j = (j + 1) & (ncap - 1))
			;
		nk[j] = t->keys[i];
		nv[j] = t->vals[i];
	}
	free(t->keys);
	free(t->vals);
	t->keys = nk;
	t->vals = nv;
	t->cap = ncap;
	return 0;
}

int manifest__tab_insert(struct idx_table *t, uint64_t key, uint32_t val)
{
	size_t j;

	if ((t->used + 1) * 2 > t->cap && tab_grow(t))
		return -ENOMEM;
	for (j = key & (t->cap - 1); t->vals[j] != UINT32_MAX; j = (j + 1) & (t->cap - 1))
		;
	t->keys[j] = key;
	t->vals[j] = val;
	t->used++;
	return 0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

void manifest__proc_free(struct manifest *m, struct proc_ent *p)
{
	perfmap_copy_release(m->perfmaps, &p->pm);
	perfmap_dump_release(m->perfmaps, &p->jd);
	free(p->maps);
	free(p->hist);
	free(p->gen_seen);
	free(p->partial);
}

int manifest_new(struct manifest **out, int exec_gen_fd, int map_gens_fd, uint64_t start_ns)
{
	struct manifest *m = calloc(1, sizeof(*m));

	*out = NULL;
	if (!m)
		return -ENOMEM;
	elf_version(EV_CURRENT);
	if (perfmap_dirs_new(&m->perfmaps, NULL)) {
		free(m);
		return -ENOMEM;
	}
	m->exec_gen_fd = exec_gen_fd;
	m->map_gens_fd = map_gens_fd;
	m->start_ns = start_ns;
	*out = m;
	return 0;
}

void manifest_free(struct manifest *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nr_procs; i++)
		manifest__proc_free(m, &m->procs[i]);
	perfmap_dirs_free(m->perfmaps);
	for (size_t i = 0; i < m->nr_objs; i++) {
		free(m->objs[i].o.path);
		free(m->objs[i].image);
	}
	free(m->procs);
	free(m->obs_buf);
	free(m->dirty);
	free(m->objs);
	free(m->proc_idx.keys);
	free(m->proc_idx.vals);
	free(m->obj_idx.keys);
	free(m->obj_idx.vals);
	free(m);
}

void manifest_set_observer(struct manifest *m, const struct manifest_observer *obs)
{
	m->obs = *obs;
}

/* Tell the observer an image's mappings (after a change), read in
 * generation gen. */
static void observe_image(struct manifest *m, const struct proc_ent *p, uint32_t gen)
{
	if (!m->obs.image)
		return;
	if (p->nr_maps > m->obs_cap) {
		void *n = realloc(m->obs_buf, p->nr_maps * sizeof(*m->obs_buf));

		if (!n)
			return; /* the image keeps its old table: its walks fall back */
		m->obs_buf = n;
		m->obs_cap = p->nr_maps;
	}
	for (uint32_t i = 0; i < p->nr_maps; i++) {
		m->obs_buf[i].start = p->maps[i].start;
		m->obs_buf[i].end = p->maps[i].end;
		m->obs_buf[i].offset = p->maps[i].off;
		m->obs_buf[i].obj = p->maps[i].obj;
	}
	m->obs.image(m->obs.ctx, p->pid, p->exec_id, gen, m->obs_buf, p->nr_maps);
}

static void observe_gone(struct manifest *m, const struct proc_ent *p)
{
	if (m->obs.image_gone && p->snapped)
		m->obs.image_gone(m->obs.ctx, p->pid, p->exec_id);
}

void manifest_stats(const struct manifest *m, struct manifest_stats *st)
{
	*st = m->st;
}

struct proc_ent *manifest__proc_find(struct manifest *m, uint32_t pid, uint32_t exec_id)
{
	uint64_t key = (uint64_t)pid << 32 | exec_id, h = manifest__mix64(key);
	struct idx_table *t = &m->proc_idx;

	if (!t->cap)
		return NULL;
	for (size_t j = h & (t->cap - 1); t->vals[j] != UINT32_MAX; j = (j + 1) & (t->cap - 1)) {
		struct proc_ent *p = &m->procs[t->vals[j]];

		if (t->keys[j] == h && p->pid == pid && p->exec_id == exec_id)
			return p;
	}
	return NULL;
}

/* Pointers into m->procs are valid until the next proc_get(). */
static struct proc_ent *proc_get(struct manifest *m, uint32_t pid, uint32_t exec_id)
{
	struct proc_ent *p = manifest__proc_find(m, pid, exec_id);

	if (p)
		return p;
	if (m->nr_procs == m->cap_procs) {
		size_t nc = m->cap_procs ? m->cap_procs * 2 : 256;
		void *np = realloc(m->procs, nc * sizeof(*m->procs));

		if (!np)
			return NULL;
		m->procs = np;
		m->cap_procs = nc;
	}
	if (manifest__tab_insert(&m->proc_idx, manifest__mix64((uint64_t)pid << 32 | exec_id), m->nr_procs))
		return NULL;
	p = &m->procs[m->nr_procs++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->exec_id = exec_id;
	return p;
}

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
static bool exec_gen(struct manifest *m, uint32_t pid, uint32_t *gen)
{
	if (m->exec_gen_fd < 0)
		return false;
	return bpf_map_lookup_elem(m->exec_gen_fd, &pid, gen) == 0;
}

/* ---- objects -------------------------------------------------------- */

static bool scan_notes(Elf_Data *d, struct bprof_object *o)
{
	size_t off = 0, name_off, desc_off, next;
	GElf_Nhdr nh;

	if (!d)
		return false;
	while ((next = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    !memcmp((char *)d->d_buf + name_off, "GNU", 4) && nh.n_descsz > 0 &&
		    nh.n_descsz <= BPROF_BUILD_ID_MAX) {
			memcpy(o->build_id, (char *)d->d_buf + desc_off, nh.n_descsz);
			o->build_id_len = nh.n_descsz;
			return true;
		}
		off = next;
	}
	return false;
}

/* NT_GNU_BUILD_ID from the PT_NOTE segments, else from SHT_NOTE sections. */
static bool elf_build_id(Elf *elf, struct bprof_object *o)
{
	Elf_Scn *scn = NULL;
	size_t phnum;

	if (!elf || elf_kind(elf) != ELF_K_ELF)
		return false;
	if (elf_getphdrnum(elf, &phnum) == 0) {
		for (size_t i = 0; i < phnum; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_NOTE)
				continue;
			if (scan_notes(elf_getdata_rawchunk(elf, ph.p_offset, ph.p_filesz,
							    ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR),
				       o))
				return true;
		}
	}
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		if (scan_notes(elf_getdata(scn, NULL), o))
			return true;
	}
	return false;
}

static int obj_add(struct manifest *m, const struct bprof_object *o, uint64_t h, uint32_t *idx)
{
	if (m->nr_objs == m->cap_objs) {
		size_t nc = m->cap_objs ? m->cap_objs * 2 : 128;
		void *no = realloc(m->objs, nc * sizeof(*m->objs));

		if (!no)
			return -ENOMEM;
		m->objs = no;
		m->cap_objs = nc;
	}
	if (manifest__tab_insert(&m->obj_idx, h, m->nr_objs))
		return -ENOMEM;
	m->objs[m->nr_objs] = (struct obj_ent){ .o = *o, .out_index = UINT32_MAX,
						.alias = UINT32_MAX };
	*idx = m->nr_objs++;
	return 0;
}

static uint64_t obj_hash(uint64_t dev, uint64_t ino, uint64_t mtime, uint32_t flags)
{
	return manifest__mix64(dev ^ manifest__mix64(ino ^ manifest__mix64(mtime ^ flags)));
}

static struct obj_ent *obj_find(struct manifest *m, uint64_t h, uint64_t dev, uint64_t ino,
				uint64_t mtime, uint32_t flags, uint32_t *idx)
{
	struct idx_table *t = &m->obj_idx;

	if (!t->cap)
		return NULL;
	for (size_t j = h & (t->cap - 1); t->vals[j] != UINT32_MAX; j = (j + 1) & (t->cap - 1)) {
		struct obj_ent *e = &m->objs[t->vals[j]];

		if (t->keys[j] == h && e->o.dev == dev && e->o.inode == ino &&
		    e->o.mtime_ns == mtime && (e->o.flags & BPROF_OBJ_VDSO) == (flags & BPROF_OBJ_VDSO)) {
			*idx = t->vals[j];
			return e;
		}
	}
	return NULL;
}

enum ident {
	IDENT_MAP_FILES, /* through /proc/PID/map_files */
	IDENT_ROOT_PATH, /* through /proc/PID/root/PATH or PATH, device and inode checked */
	IDENT_GONE,      /* the process or the mapping went away */
	IDENT_DENIED,    /* not permitted either way */
	IDENT_UNVERIFIED /* the path holds another file now, or none */
};

static bool same_inode(const struct stat *st, const struct mmap_ent *me)
{
	return S_ISREG(st->st_mode) && st->st_dev == me->dev && st->st_ino == me->ino;
}

/*
 * Where to open the file behind an executable mapping, and its identity
 * (*st) when one was found.
 *
 * /proc/PID/map_files/START-END reaches the mapped inode itself, deleted
 * or in another mount namespace, but the kernel lets only CAP_SYS_ADMIN or
 * CAP_CHECKPOINT_RESTORE look there.  Without either (a recorder given
 * only CAP_BPF and CAP_PERFMON), the path the maps line names is looked up
 * in the process's own root (/proc/PID/root, so containers resolve; another
 * user's needs CAP_SYS_PTRACE), else in ours (processes of the host's
 * mount namespace), and believed only when the file's device and inode are
 * the mapping's.  A mapped inode cannot be freed, so no other file can
 * carry its (device, inode) meanwhile; a file replaced or deleted since it
 * was mapped has another inode, and its build-id must not be recorded as
 * the mapping's.
 */
static enum ident identify(uint32_t pid, const struct mmap_ent *me, const char *path,
			   bool deleted, struct stat *st, char *file, size_t len)
{
	int err;

	snprintf(file, len, "/proc/%u/map_files/%llx-%llx", pid, (unsigned long long)me->start,
		 (unsigned long long)me->end);
	if (stat(file, st) == 0)
		return IDENT_MAP_FILES;
	err = errno;
	if (err != EPERM && err != EACCES)
		return IDENT_GONE;
	if (deleted || path[0] != '/' || strlen(path) >= len - 32)
		return IDENT_UNVERIFIED;
	snprintf(file, len, "/proc/%u/root%s", pid, path);
	if (stat(file, st) == 0)
		return same_inode(st, me) ? IDENT_ROOT_PATH : IDENT_UNVERIFIED;
	snprintf(file, len, "%s", path);
	if (stat(file, st) == 0)
		return same_inode(st, me) ? IDENT_ROOT_PATH : IDENT_UNVERIFIED;
	return errno == EACCES || errno == EPERM ? IDENT_DENIED : IDENT_UNVERIFIED;
}

/* The object behind a file-backed executable mapping; BPROF_NO_OBJECT only
 * on allocation failure. */
uint32_t manifest__object_for(struct manifest *m, uint32_t pid, const struct mmap_ent *me,
			   const char *path, bool deleted)
{
	struct bprof_object o = {0};
	char file[PATH_MAX + 64];
	struct stat st, fst;
	enum ident how;
	Elf *elf = NULL;
	uint64_t h;
	uint32_t idx;
	int fd = -1;

	how = identify(pid, me, path, deleted, &st, file, sizeof(file));
	if (how == IDENT_MAP_FILES || how == IDENT_ROOT_PATH) {
		o.dev = st.st_dev;
		o.inode = st.st_ino;
		o.size = st.st_size;
		o.mtime_ns = st.st_mtim.tv_sec * 1000000000ULL + st.st_mtim.tv_nsec;
	} else {
		o.dev = me->dev;
		o.inode = me->ino;
		o.flags |= BPROF_OBJ_UNREADABLE;
	}
	h = obj_hash(o.dev, o.inode, o.mtime_ns, 0);
	struct obj_ent *known = obj_find(m, h, o.dev, o.inode, o.mtime_ns, 0, &idx);
	/* An entry made from a BPF walk of a process already gone (exit,
	 * prepare_exec) has a basename and no build-id.  Now that a live
	 * mapping shows the same file, read its identity; otherwise every
	 * later image mapping it (the command prof-record starts, after its
	 * exec) would inherit the unreadable entry. */
	if (known && ((known->o.flags & BPROF_OBJ_UNREADABLE) == 0 ||
		      (o.flags & BPROF_OBJ_UNREADABLE))) {
		/* a preloaded file is this mapping's by device, inode and
		 * mtime: identified as any other file is, count it so */
		if (known->preloaded && !(o.flags & BPROF_OBJ_UNREADABLE)) {
			known->preloaded = false;
			m->st.objects_by_path += how == IDENT_ROOT_PATH;
		}
		return idx;
	}

	if (deleted)
		o.flags |= BPROF_OBJ_DELETED;
	o.path = strdup(path);
	if (!o.path)
		return BPROF_NO_OBJECT;
	if (!(o.flags & BPROF_OBJ_UNREADABLE)) {
		fd = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		if (fd < 0 && (errno == EACCES || errno == EPERM))
			how = IDENT_DENIED;
		/* what was opened must be what was stat'ed (the path may have
		 * been replaced in between) */
		if (fd >= 0 && (fstat(fd, &fst) || fst.st_dev != st.st_dev ||
				fst.st_ino != st.st_ino)) {
			close(fd);
			fd = -1;
			how = IDENT_UNVERIFIED;
		}
	}
	if (fd < 0) {
		o.flags |= BPROF_OBJ_UNREADABLE;
		m->st.objects_denied += how == IDENT_DENIED;
		m->st.objects_unverified += how == IDENT_UNVERIFIED;
	} else {
		elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
		m->st.objects_opened++;
		m->st.objects_by_path += how == IDENT_ROOT_PATH;
		if (elf_build_id(elf, &o))
			o.flags |= BPROF_OBJ_HAS_BUILD_ID;
		else if (bprof_fallback_hash(fd, &o.fallback_hash) == 0)
			o.flags |= BPROF_OBJ_FALLBACK_ID;
	}
	if (known) {
		if (o.flags & BPROF_OBJ_UNREADABLE) {
			free(o.path); /* no better than what we had */
			return idx;
		}
		free(known->o.path);
		known->o = o; /* out_index stays: mappings refer to idx */
	} else if (obj_add(m, &o, h, &idx)) {
		free(o.path);
		idx = BPROF_NO_OBJECT;
	}
	/* the ELF is open now: the unwinder builds its table from it */
	if (idx != BPROF_NO_OBJECT && m->obs.object)
		m->obs.object(m->obs.ctx, idx, elf, &m->objs[idx].o);
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	return idx;
}

int manifest_preload(struct manifest *m, const char *path)
{
	struct bprof_object o = {0};
	char real[PATH_MAX];
	struct stat st;
	Elf *elf;
	uint64_t h;
	uint32_t idx;
	int fd;

	/* the path a maps line will show: symbolic links resolved */
	if (!realpath(path, real))
		return -errno;
	fd = open(real, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	o.dev = st.st_dev;
	o.inode = st.st_ino;
	o.size = st.st_size;
	o.mtime_ns = st.st_mtim.tv_sec * 1000000000ULL + st.st_mtim.tv_nsec;
	h = obj_hash(o.dev, o.inode, o.mtime_ns, 0);
	if (obj_find(m, h, o.dev, o.inode, o.mtime_ns, 0, &idx)) {
		close(fd);
		return 0;
	}
	o.path = strdup(real);
	if (!o.path) {
		close(fd);
		return -ENOMEM;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	m->st.objects_opened++;
	if (elf_build_id(elf, &o))
		o.flags |= BPROF_OBJ_HAS_BUILD_ID;
	else if (bprof_fallback_hash(fd, &o.fallback_hash) == 0)
		o.flags |= BPROF_OBJ_FALLBACK_ID;
	if (obj_add(m, &o, h, &idx)) {
		free(o.path);
		idx = BPROF_NO_OBJECT;
	} else {
		m->objs[idx].preloaded = true;
	}
	if (idx != BPROF_NO_OBJECT && m->obs.object)
		m->obs.object(m->obs.ctx, idx, elf, &m->objs[idx].o);
	if (elf)
		elf_end(elf);
	close(fd);
	return idx == BPROF_NO_OBJECT ? -ENOMEM : 0;
}

/* Our own [vdso] mapping (its extent), read once. */
static const struct mmap_ent *own_vdso(struct manifest *m)
{
	FILE *f;
	char line[256];

	if (m->own_vdso_read)
		return m->own_vdso.end ? &m->own_vdso : NULL;
	m->own_vdso_read = true;
	f = fopen("/proc/self/maps", "re");
	if (!f)
		return NULL;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long a, b;

		if (strstr(line, "[vdso]") && sscanf(line, "%llx-%llx", &a, &b) == 2 && b > a) {
			m->own_vdso.start = a;
			m->own_vdso.end = b;
			break;
		}
	}
	fclose(f);
	return m->own_vdso.end ? &m->own_vdso : NULL;
}

/* [vdso]: read the image from the process memory for its build-id.  All
 * processes of one ABI share it, so it is keyed by build-id. */
static uint32_t vdso_object(struct manifest *m, uint32_t pid, const struct mmap_ent *me)
{
	struct bprof_object o = {0};
	size_t len = me->end - me->start;
	char path[64];
	uint32_t idx;
	void *buf;
	int fd;

	if (len > (1u << 20))
		return BPROF_NO_OBJECT;
	snprintf(path, sizeof(path), "/proc/%u/mem", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	buf = malloc(len);
	if (fd >= 0 && buf && pread(fd, buf, len, me->start) != (ssize_t)len) {
		free(buf);
		buf = NULL;
	}
	/*
	 * Another user's process without CAP_SYS_PTRACE: its memory is
	 * closed, but the kernel maps one 64-bit vDSO image into every native
	 * 64-bit process, ours included.  A vDSO above 4 GiB is a native one
	 * (32-bit and x32 processes have theirs below), so ours, of the same
	 * size, is its copy.
	 */
	if (fd < 0 && buf && me->start >= (1ULL << 32) && sizeof(void *) == 8) {
		const void *own = (const void *)getauxval(AT_SYSINFO_EHDR);
		const struct mmap_ent *ours = own ? own_vdso(m) : NULL;

		if (ours && ours->end - ours->start == len)
			memcpy(buf, own, len);
		else {
			free(buf);
			buf = NULL;
		}
	} else if (fd < 0) {
		free(buf);
		buf = NULL;
	}
	if (buf) {
		Elf *elf = elf_memory(buf, len);

		if (elf_build_id(elf, &o))
			o.flags |= BPROF_OBJ_HAS_BUILD_ID;
		if (elf)
			elf_end(elf);
	}
	if (fd >= 0)
		close(fd);
	if (!(o.flags & BPROF_OBJ_HAS_BUILD_ID)) {
		free(buf);
		return BPROF_NO_OBJECT;
	}
	/* deduplicated by build-id below; no file, so no dev/inode */
	uint64_t key = 0;

	for (uint32_t i = 0; i < o.build_id_len; i++)
		key = key * 131 + o.build_id[i];
	o.size = len;
	o.flags |= BPROF_OBJ_VDSO;
	for (size_t i = 0; i < m->nr_objs; i++) {
		struct bprof_object *x = &m->objs[i].o;

		if ((x->flags & BPROF_OBJ_VDSO) && x->build_id_len == o.build_id_len &&
		    !memcmp(x->build_id, o.build_id, o.build_id_len)) {
			free(buf);
			return i;
		}
	}
	o.path = strdup("[vdso]");
	if (!o.path || obj_add(m, &o, obj_hash(0, key, 0, BPROF_OBJ_VDSO), &idx)) {
		free(o.path);
		free(buf);
		return BPROF_NO_OBJECT;
	}
	/* the unwinder wants its .eh_frame too (the vdso has one) */
	if (m->obs.object) {
		Elf *elf = elf_memory(buf, len);

		m->obs.object(m->obs.ctx, idx, elf, &m->objs[idx].o);
		if (elf)
			elf_end(elf);
	}
	/* no workstation has this kernel's vdso: the file carries it */
	m->objs[idx].image = buf;
	m->objs[idx].image_len = len;
	return idx;
}

/* ---- snapshots -------------------------------------------------------- */

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

static const struct mmap_ent *known_mapping(const struct proc_ent *p, const struct mmap_ent *me)
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
static int merge_maps(struct proc_ent *p, struct mmap_ent *nw, uint32_t nr)
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
		have0 = exec_gen(m, pid, &gen0);
		mg0 = map_gen(m, pid, have0 ? gen0 : hint_exec);
		buf = read_file(path, 64u << 20, &len, &err);
		have1 = exec_gen(m, pid, &gen1);
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
	p = proc_get(m, pid, exec_id);
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
		k = known_mapping(p, &me);
		if (k) {
			me.obj = k->obj;
		} else if (me.flags & BPROF_MAP_VDSO) {
			me.obj = vdso_object(m, pid, &me);
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
	if (merge_maps(p, nw, nr))
		return -ENOMEM;
	/* merge_maps keeps the old array when nothing changed (the table
	 * then needs only its generation: the unwinder rewrites it) */
	if (p->maps != before_maps || p->nr_maps != before || read_gen != p->table_gen) {
		observe_image(m, p, read_gen);
		p->table_gen = read_gen;
	}
	if (!p->snapped)
		p->snapshot_ns = now_ns() - m->start_ns;
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
	struct proc_ent *p = proc_get(m, pid, exec_id);
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

/*
 * The object of a mapping the kernel described (dev, inode, mtime, basename):
 * normally known already (the process was read once, or another one maps the
 * same file).  Else, with make, one named by its basename but unreadable
 * (resolve_unreadable() may still find its file at the end); without,
 * BPROF_NO_OBJECT.  BPROF_NO_OBJECT with make only when out of memory.
 */
static uint32_t event_object(struct manifest *m, uint64_t dev, uint64_t ino, uint64_t mtime_ns,
			     const char *name, bool make)
{
	uint32_t idx = BPROF_NO_OBJECT;
	struct bprof_object o = {0};

	if (!obj_find(m, obj_hash(dev, ino, mtime_ns, 0), dev, ino, mtime_ns, 0, &idx)) {
		for (size_t i = 0; i < m->nr_objs && idx == BPROF_NO_OBJECT; i++)
			if (m->objs[i].o.dev == dev && m->objs[i].o.inode == ino &&
			    (!mtime_ns || !m->objs[i].o.mtime_ns || m->objs[i].o.mtime_ns == mtime_ns) &&
			    !(m->objs[i].o.flags & BPROF_OBJ_VDSO))
				idx = i;
	}
	if (idx != BPROF_NO_OBJECT || !make)
		return idx;
	o.dev = dev;
	o.inode = ino;
	o.mtime_ns = mtime_ns;
	o.flags = BPROF_OBJ_UNREADABLE;
	o.path = strdup(name);
	if (!o.path || obj_add(m, &o, obj_hash(dev, ino, mtime_ns, 0), &idx)) {
		free(o.path);
		return BPROF_NO_OBJECT;
	}
	return idx;
}

int manifest_vma(struct manifest *m, uint32_t pid, uint32_t exec_id, uint64_t start, uint64_t end,
		 uint64_t offset, uint64_t dev, uint64_t ino, uint64_t mtime_ns, uint32_t vm_flags,
		 const char *name)
{
	struct proc_ent *p = proc_get(m, pid, exec_id);
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
	k = known_mapping(p, me);
	if (k) {
		free(me);
		return 0;
	}
	idx = event_object(m, dev, ino, mtime_ns, name, true);
	if (idx == BPROF_NO_OBJECT) {
		free(me);
		return -ENOMEM;
	}
	me->obj = idx;
	if (merge_maps(p, me, 1))
		return -ENOMEM;
	if (!p->snapped)
		p->snapshot_ns = now_ns() - m->start_ns;
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
		h->obj = event_object(m, h->dev, h->ino, h->mtime, h->name, true);
		if (h->obj == BPROF_NO_OBJECT)
			return -ENOMEM;
		h->need_obj = false;
	}
	return 0;
}

int manifest_map_event(struct manifest *m, const struct manifest_map_ev *ev)
{
	struct proc_ent *p = proc_get(m, ev->pid, ev->exec_id);
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
		h->obj = event_object(m, h->dev, h->ino, h->mtime, h->name, false);
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
		if (merge_maps(p, me, 1))
			return -ENOMEM;
		p->table_gen = ev->gen;
		observe_image(m, p, ev->gen);
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
	struct proc_ent *p = proc_get(m, pid, exec_id);

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
		if (exec_gen(m, p->pid, &gen) && gen != p->exec_id) {
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
	struct proc_ent *p = proc_get(m, pid, exec_id);

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
