/* SPDX-License-Identifier: Apache-2.0 */
/*
 * adapter.c - the one place where .bprof tables become libsym inputs.
 *
 * libsym knows nothing of the file format (STYLE.md: the blazesym lesson),
 * so each recorded object, process mapping set, perf map and kernel
 * identity is translated here into bsym descriptors.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "report.h"

void rep_hex(char *out, const uint8_t *bytes, size_t len)
{
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < len; i++) {
		out[2 * i] = digits[bytes[i] >> 4];
		out[2 * i + 1] = digits[bytes[i] & 15];
	}
	out[2 * len] = '\0';
}

/*
 * What verify_fallback needs of an object recorded without a build-id,
 * copied: libsym keeps verify_arg for as long as the context lives and
 * calls it lazily, but a report that reads its files one at a time frees
 * each recording once it is walked.  The copies live until
 * rep_adapter_cleanup().  One per distinct (path, size, fallback hash):
 * libsym shares an object registered again with the same path and
 * verify_arg, so the copies of one object in many files are one libsym
 * object, its ELF and DWARF loaded once (one per file grew the memory of
 * a report over a --rotate directory by every file).
 */
struct rep_fallback {
	uint32_t flags;
	uint64_t size, fallback_hash;
	char *path;
	struct rep_fallback *next;
};
static struct rep_fallback *fallbacks;

void rep_adapter_cleanup(void)
{
	while (fallbacks) {
		struct rep_fallback *n = fallbacks->next;
		free(fallbacks->path);
		free(fallbacks);
		fallbacks = n;
	}
}

static struct rep_fallback *fallback_of(const struct bprof_object *o)
{
	const char *path = o->path ? o->path : "";
	struct rep_fallback *fb;

	for (fb = fallbacks; fb; fb = fb->next)
		if (fb->flags == o->flags && fb->size == o->size &&
		    fb->fallback_hash == o->fallback_hash && !strcmp(fb->path, path))
			return fb;
	fb = malloc(sizeof(*fb));
	if (!fb || !(fb->path = strdup(path))) {
		free(fb);
		return NULL;
	}
	fb->flags = o->flags;
	fb->size = o->size;
	fb->fallback_hash = o->fallback_hash;
	fb->next = fallbacks;
	fallbacks = fb;
	return fb;
}

/* An object recorded without a build-id may be used only if the candidate
 * file has the recorded size and fallback hash (SPEC.md). */
static bool verify_fallback(void *arg, int fd, const char *path)
{
	const struct rep_fallback *obj = arg;
	struct stat st;
	uint64_t hash;

	(void)path;
	if (!(obj->flags & BPROF_OBJ_FALLBACK_ID))
		return false;
	if (fstat(fd, &st) != 0 || (uint64_t)st.st_size != obj->size)
		return false;
	if (bprof_fallback_hash(fd, &hash) != 0)
		return false;
	return hash == obj->fallback_hash;
}

/* Set by rep_adapter_kernels_prescanned(). */
static bool kernels_prescanned;

void rep_adapter_kernels_prescanned(bool on)
{
	kernels_prescanned = on;
}

static int register_kernel(struct rep_input *in, struct bsym_ctx *sym)
{
	const struct bprof_kernel *k = &in->rec->kernel;
	struct bsym_kmodule *mods = NULL;
	int err;

	in->kernel = BSYM_NO_OBJECT;
	if (k->nr_modules) {
		mods = calloc(k->nr_modules, sizeof(*mods));
		if (!mods)
			return -ENOMEM;
		for (uint32_t i = 0; i < k->nr_modules; i++) {
			mods[i].name = k->modules[i].name;
			mods[i].base = k->modules[i].base;
			mods[i].size = k->modules[i].size;
			mods[i].build_id = k->modules[i].build_id;
			mods[i].build_id_len = k->modules[i].build_id_len;
		}
	}
	if (k->nr_ksyms) {
		in->ksyms = calloc(k->nr_ksyms, sizeof(*in->ksyms));
		if (!in->ksyms) {
			free(mods);
			return -ENOMEM;
		}
		for (uint32_t i = 0; i < k->nr_ksyms; i++) {
			in->ksyms[i].addr = k->ksyms[i].addr;
			in->ksyms[i].name = k->ksyms[i].name;
			in->ksyms[i].module_index = k->ksyms[i].module_index == BPROF_NO_OBJECT
							    ? BSYM_NO_OBJECT
							    : k->ksyms[i].module_index;
		}
	}
	struct bsym_kernel_desc desc = {
		.sz = sizeof(desc),
		.release = k->release,
		.build_id = k->build_id,
		.build_id_len = k->build_id_len,
		.stext = k->stext,
		.modules = mods,
		.nr_modules = k->nr_modules,
		.ksyms = in->ksyms,
		.nr_ksyms = k->nr_ksyms,
		.reuse_answered = kernels_prescanned,
	};
	err = bsym_kernel_register(sym, &desc, &in->kernel);
	free(mods);
	/* libsym copied what it needs */
	free(in->ksyms);
	in->ksyms = NULL;
	return err;
}

int rep_kernel_preregister(struct bsym_ctx *sym, struct bprof_recording *rec)
{
	struct rep_input in = { .rec = rec };
	bool on = kernels_prescanned;
	int err;

	kernels_prescanned = false; /* as rep_input_adopt would, before the walks */
	err = register_kernel(&in, sym);
	kernels_prescanned = on;
	return err;
}

/* The recording's mappings as libsym's, objects by their libsym ids: the
 * snapshot and the history of earlier generations are converted alike. */
static void to_bsym_mappings(const struct rep_input *in, const struct bprof_mapping *from,
			     uint32_t n, struct bsym_mapping *to)
{
	for (uint32_t j = 0; j < n; j++) {
		const struct bprof_mapping *m = &from[j];

		to[j] = (struct bsym_mapping){
			.start = m->start,
			.end = m->end,
			.file_offset = m->file_offset,
			.object = m->object_index == BPROF_NO_OBJECT ? BSYM_NO_OBJECT
								     : in->object_ids[m->object_index],
			.flags = (m->flags & BPROF_MAP_ANON) ? BSYM_MAP_ANON : 0,
		};
	}
}

int rep_input_open(struct rep_input *in, struct bsym_ctx *sym, const char *path,
		   char *errbuf, size_t errlen)
{
	struct bprof_error berr = {0};
	int err;

	struct bprof_recording *rec = NULL;

	err = bprof_read_file(&rec, path, NULL, &berr);
	if (err) {
		memset(in, 0, sizeof(*in));
		snprintf(errbuf, errlen, "%s", berr.message[0] ? berr.message : bprof_strerror(err));
		return err;
	}
	return rep_input_adopt(in, sym, rec, path, errbuf, errlen);
}

int rep_input_adopt(struct rep_input *in, struct bsym_ctx *sym, struct bprof_recording *rec,
		    const char *name, char *errbuf, size_t errlen)
{
	int err;

	memset(in, 0, sizeof(*in));
	in->path = name;
	in->kernel = BSYM_NO_OBJECT;
	in->rec = rec;

	in->object_ids = calloc(rec->nr_objects ? rec->nr_objects : 1, sizeof(uint32_t));
	in->procs = calloc(rec->nr_processes ? rec->nr_processes : 1, sizeof(*in->procs));
	if (!in->object_ids || !in->procs)
		goto nomem;

	for (uint64_t i = 0; i < rec->nr_objects; i++) {
		struct bprof_object *o = &rec->objects[i];
		struct bsym_object_desc d = {
			.sz = sizeof(d),
			.path = o->path,
			.build_id = (o->flags & BPROF_OBJ_HAS_BUILD_ID) ? o->build_id : NULL,
			.build_id_len = (o->flags & BPROF_OBJ_HAS_BUILD_ID) ? o->build_id_len : 0,
			.verify = verify_fallback,
		};
		if (!d.build_id_len && !(d.verify_arg = fallback_of(o)))
			goto nomem;
		/* images are sorted by object: the one of object i, if any */
		for (uint64_t k = 0; k < rec->nr_images; k++)
			if (rec->images[k].object_index == i) {
				d.image = rec->images[k].data;
				d.image_len = rec->images[k].len;
			}
		err = bsym_object_register(sym, &d, &in->object_ids[i]);
		if (err) {
			snprintf(errbuf, errlen, "cannot register object %s: %s", o->path,
				 strerror(-err));
			goto fail;
		}
	}

	for (uint64_t i = 0; i < rec->nr_processes; i++) {
		const struct bprof_process *p = &rec->processes[i];
		struct rep_process_map *pm = &in->procs[i];

		pm->proc = p;
		pm->perfmap = BSYM_NO_OBJECT;
		pm->jitdump = BSYM_NO_OBJECT;
		pm->maps = calloc(p->nr_mappings ? p->nr_mappings : 1, sizeof(*pm->maps));
		if (!pm->maps)
			goto nomem;
		to_bsym_mappings(in, p->mappings, p->nr_mappings, pm->maps);
		if (p->has_gens && p->nr_history) {
			pm->hmaps = calloc(p->nr_history, sizeof(*pm->hmaps));
			if (!pm->hmaps)
				goto nomem;
			to_bsym_mappings(in, p->history, p->nr_history, pm->hmaps);
		}
		if (p->perf_map && p->perf_map_len) {
			err = bsym_perfmap_register(sym, p->perf_map, p->perf_map_len, &pm->perfmap);
			if (err) {
				snprintf(errbuf, errlen, "cannot load perf map of pid %u: %s", p->pid,
					 strerror(-err));
				goto fail;
			}
		}
		const struct bprof_jitdump *jd = bprof_jitdump_find(rec, p->pid, p->exec_id);
		if (jd) {
			/* a jitdump libsym cannot read names nothing: the perf
			 * map (if any) still does */
			err = bsym_jitdump_register(sym, jd->data, (size_t)jd->len, &pm->jitdump);
			if (err == -ENOMEM) {
				snprintf(errbuf, errlen, "cannot load the jitdump of pid %u: %s", p->pid,
					 strerror(-err));
				goto fail;
			}
		}
	}

	err = register_kernel(in, sym);
	if (err) {
		snprintf(errbuf, errlen, "cannot register kernel: %s", strerror(-err));
		goto fail;
	}
	if (rep_runtimes_open(in))
		goto nomem;
	return 0;

nomem:
	err = -ENOMEM;
	snprintf(errbuf, errlen, "out of memory");
fail:
	rep_input_close(in);
	return err;
}

void rep_input_close(struct rep_input *in)
{
	if (in->rec && in->procs) {
		for (uint64_t i = 0; i < in->rec->nr_processes; i++) {
			free(in->procs[i].maps);
			free(in->procs[i].hmaps);
		}
	}
	free(in->procs);
	free(in->object_ids);
	free(in->ksyms);
	rep_runtimes_close(in);
	bprof_recording_free(in->rec);
	memset(in, 0, sizeof(*in));
}

const struct rep_process_map *rep_input_process(const struct rep_input *in, uint32_t pid,
						uint32_t exec_id)
{
	const struct bprof_process *p = bprof_recording_process(in->rec, pid, exec_id);

	if (!p)
		return NULL;
	return &in->procs[p - in->rec->processes];
}
