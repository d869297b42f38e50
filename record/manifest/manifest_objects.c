// SPDX-License-Identifier: Apache-2.0
/*
 * manifest_objects.c - the objects that sampled process images map, and
 * the identity of each: the file behind a mapping found and opened for its
 * build-id, a file preloaded before any process maps it, the [vdso] read
 * from a process's memory, the objects the kernel described (exit walks,
 * mapping events).  It is given a pid and a mapping and knows nothing of
 * the process table; it calls only manifest.c.
 *
 * Objects are identified by (st_dev, st_ino, mtime) of the file behind
 * /proc/PID/map_files/START-END, which reaches the mapped inode even when it
 * was deleted or lives in another mount namespace (containers).  Each object
 * is opened once per recording to read its build-id.
 */
#include "manifest_internal.h"

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
uint32_t manifest__vdso_object(struct manifest *m, uint32_t pid, const struct mmap_ent *me)
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

/*
 * The object of a mapping the kernel described (dev, inode, mtime, basename):
 * normally known already (the process was read once, or another one maps the
 * same file).  Else, with make, one named by its basename but unreadable
 * (resolve_unreadable() may still find its file at the end); without,
 * BPROF_NO_OBJECT.  BPROF_NO_OBJECT with make only when out of memory.
 */
uint32_t manifest__event_object(struct manifest *m, uint64_t dev, uint64_t ino, uint64_t mtime_ns,
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
