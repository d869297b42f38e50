/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kernel.c - kernel addresses: a vmlinux with the recorded build-id
 * (through libdwfl and the DWARF index, at bias = runtime _stext -
 * link-time _stext) when one is found, else the recorded kallsyms.
 * Module addresses are named from kallsyms.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bsym_internal.h"

/* kallsyms carries no sizes: a symbol covers up to the next one, within its
 * module, and never more than this (no kernel function is anywhere near). */
#define KSYM_MAX_SPAN (1u << 20)

/* A text section of a module: where the kernel put it (offset from the
 * module base) and where libdwfl's offline layout put it. */
struct ksec {
	uint64_t rt_off, size, dwfl_addr;
};

struct kmod {
	uint64_t base, size;
	const char *name;
	uint8_t build_id[BSYM_MAX_BUILD_ID];
	size_t build_id_len;
	bool loaded;
	Dwfl_Callbacks cb;
	Dwfl *dwfl;
	Dwfl_Module *mod;
	struct bsym_dwidx *idx;
	Dwarf_Addr dwbias;
	struct ksec *secs;
	size_t nsecs;
};

struct ksym {
	uint64_t addr;
	const char *name;
	uint32_t mod; /* index into mods or BSYM_NO_OBJECT */
	uint32_t seq;
};

struct bsym_kernel {
	uint8_t build_id[BSYM_MAX_BUILD_ID];
	size_t build_id_len;
	char *release;
	uint64_t stext;
	struct kmod *mods;
	size_t nmods;
	struct ksym *syms;
	size_t nsyms;

	bool loaded;
	char *vmlinux_path;
	Dwfl_Callbacks cb;
	Dwfl *dwfl;
	Dwfl_Module *mod;
	struct bsym_dwidx *idx;
	Dwarf_Addr dwbias;
	uint64_t bias; /* runtime - link time */

	struct bsym_map cache;
};

void bsym_kernel_free(struct bsym_kernel *k)
{
	if (!k)
		return;
	bsym_dwidx_free(k->idx);
	if (k->dwfl)
		dwfl_end(k->dwfl);
	for (size_t i = 0; i < k->nmods; i++) {
		bsym_dwidx_free(k->mods[i].idx);
		if (k->mods[i].dwfl)
			dwfl_end(k->mods[i].dwfl);
		free(k->mods[i].secs);
	}
	free(k->vmlinux_path);
	free(k->release);
	free(k->mods);
	free(k->syms);
	bsym_map_free(&k->cache);
	free(k);
}

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static bool same_modules(const struct bsym_kernel *k, const struct bsym_kernel_desc *d)
{
	if (k->nmods != d->nr_modules)
		return false;
	for (size_t i = 0; i < k->nmods; i++) {
		const struct kmod *a = &k->mods[i];
		const struct bsym_kmodule *b = &d->modules[i];
		size_t blen = b->build_id && b->build_id_len <= BSYM_MAX_BUILD_ID ? b->build_id_len : 0;
		if (a->base != b->base || a->size != b->size || strcmp(a->name, b->name ? b->name : "?") ||
		    a->build_id_len != blen || (blen && memcmp(a->build_id, b->build_id, blen)))
			return false;
	}
	return true;
}

/*
 * One kernel, booted the same way (build-id, _stext, modules), seen by
 * several recordings: each kept the kallsyms entries of its own sampled
 * addresses, so the tables are merged.  Named from the first table alone,
 * an address only another recording sampled would take the nearest entry
 * below it: a wrong name.  Entries already present are skipped; new ones
 * come after the old at the same address (the first registered name wins).
 */
static int merge_ksyms(struct bsym_ctx *ctx, struct bsym_kernel *k, const struct bsym_kernel_desc *d)
{
	struct ksym *in = NULL, *out = NULL;
	size_t n = 0, i = 0, j = 0, o = 0;

	if (!d->nr_ksyms)
		return 0;
	in = calloc(d->nr_ksyms, sizeof(*in));
	out = calloc(k->nsyms + d->nr_ksyms, sizeof(*out));
	if (!in || !out)
		goto oom;
	for (size_t x = 0; x < d->nr_ksyms; x++) {
		const struct bsym_ksym *s = &d->ksyms[x];
		if (!s->name)
			continue;
		in[n] = (struct ksym){ .addr = s->addr, .name = s->name, .seq = (uint32_t)n,
				       .mod = s->module_index < k->nmods ? s->module_index : BSYM_NO_OBJECT };
		n++;
	}
	qsort(in, n, sizeof(*in), cmp_ksym);
	uint32_t seq = (uint32_t)k->nsyms;
	while (i < k->nsyms || j < n) {
		if (j == n || (i < k->nsyms && k->syms[i].addr <= in[j].addr)) {
			out[o++] = k->syms[i++];
			continue;
		}
		bool dup = false; /* the old entries at this address are already out */
		for (size_t b = o; b > 0 && out[b - 1].addr == in[j].addr && !dup; b--)
			dup = out[b - 1].mod == in[j].mod && !strcmp(out[b - 1].name, in[j].name);
		if (!dup) {
			out[o] = in[j];
			out[o].seq = seq++;
			if (!(out[o].name = bsym_arena_strdup(&ctx->arena, in[j].name)))
				goto oom;
			o++;
		}
		j++;
	}
	free(in);
	free(k->syms);
	k->syms = out;
	k->nsyms = o;
	return 0;
oom:
	free(in);
	free(out);
	return -ENOMEM;
}

/* Whether every named entry of d is in k's table already (same address,
 * module and name): merging d would change nothing k has answered. */
static bool ksyms_contained(const struct bsym_kernel *k, const struct bsym_kernel_desc *d)
{
	for (size_t x = 0; x < d->nr_ksyms; x++) {
		const struct bsym_ksym *s = &d->ksyms[x];
		uint32_t mod = s->module_index < k->nmods ? s->module_index : BSYM_NO_OBJECT;
		size_t lo = 0, hi = k->nsyms;
		bool found = false;

		if (!s->name)
			continue;
		while (lo < hi) { /* first entry at s->addr or above */
			size_t mid = lo + (hi - lo) / 2;
			if (k->syms[mid].addr < s->addr)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (size_t i = lo; i < k->nsyms && k->syms[i].addr == s->addr && !found; i++)
			found = k->syms[i].mod == mod && !strcmp(k->syms[i].name, s->name);
		if (!found)
			return false;
	}
	return true;
}

int bsym_kernel_register(struct bsym_ctx *ctx, const struct bsym_kernel_desc *desc,
			 uint32_t *id_out)
{
	if (!ctx || !desc || !id_out)
		return -EINVAL;
	*id_out = BSYM_NO_OBJECT;
	size_t blen = desc->build_id ? desc->build_id_len : 0;
	bool reuse = desc->sz >= offsetof(struct bsym_kernel_desc, reuse_answered) + sizeof(bool) &&
		     desc->reuse_answered;
	if (blen > BSYM_MAX_BUILD_ID || (desc->nr_modules && !desc->modules) ||
	    (desc->nr_ksyms && !desc->ksyms))
		return -EINVAL;
	if (blen) {
		/* newest first: after answers, a recording is named from the
		 * kernel registered after them, as when it was new */
		for (size_t i = ctx->nr_kernels; i-- > 0;) {
			struct bsym_kernel *k = ctx->kernels[i];
			/* answers already given were read from the table as it
			 * was: a kernel that has answered is not extended */
			if (k->build_id_len != blen || memcmp(k->build_id, desc->build_id, blen) ||
			    k->stext != desc->stext || !same_modules(k, desc))
				continue;
			if (k->cache.len == 0) {
				*id_out = (uint32_t)i;
				return merge_ksyms(ctx, k, desc);
			}
			/* one that adds nothing changes no answer: a report
			 * that reads its files one at a time (registering
			 * each after the last was walked) keeps one kernel */
			if (reuse && ksyms_contained(k, desc)) {
				*id_out = (uint32_t)i;
				return 0;
			}
		}
	}
	if (ctx->nr_kernels >= BSYM_NO_OBJECT - 1)
		return -ENOMEM;
	struct bsym_kernel *k = calloc(1, sizeof(*k));
	if (!k)
		return -ENOMEM;
	if (blen)
		memcpy(k->build_id, desc->build_id, blen);
	k->build_id_len = blen;
	k->stext = desc->stext;
	if (desc->release && !(k->release = strdup(desc->release)))
		goto oom;
	if (desc->nr_modules) {
		k->mods = calloc(desc->nr_modules, sizeof(*k->mods));
		if (!k->mods)
			goto oom;
		for (size_t i = 0; i < desc->nr_modules; i++) {
			const struct bsym_kmodule *m = &desc->modules[i];
			k->mods[i].base = m->base;
			k->mods[i].size = m->size;
			k->mods[i].name = bsym_arena_strdup(&ctx->arena, m->name ? m->name : "?");
			if (!k->mods[i].name)
				goto oom;
			if (m->build_id && m->build_id_len <= BSYM_MAX_BUILD_ID) {
				memcpy(k->mods[i].build_id, m->build_id, m->build_id_len);
				k->mods[i].build_id_len = m->build_id_len;
			}
		}
		k->nmods = desc->nr_modules;
	}
	if (desc->nr_ksyms) {
		k->syms = calloc(desc->nr_ksyms, sizeof(*k->syms));
		if (!k->syms)
			goto oom;
		for (size_t i = 0; i < desc->nr_ksyms; i++) {
			const struct bsym_ksym *s = &desc->ksyms[i];
			if (!s->name)
				continue;
			struct ksym *d = &k->syms[k->nsyms];
			d->addr = s->addr;
			d->name = bsym_arena_strdup(&ctx->arena, s->name);
			if (!d->name)
				goto oom;
			d->mod = s->module_index < k->nmods ? s->module_index : BSYM_NO_OBJECT;
			d->seq = (uint32_t)k->nsyms;
			k->nsyms++;
		}
		/* "sorted by addr" is a promise from a file: make sure. */
		qsort(k->syms, k->nsyms, sizeof(*k->syms), cmp_ksym);
	}
	if (ctx->nr_kernels == ctx->cap_kernels) {
		size_t nc = ctx->cap_kernels ? ctx->cap_kernels * 2 : 4;
		struct bsym_kernel **n = realloc(ctx->kernels, nc * sizeof(*n));
		if (!n)
			goto oom;
		ctx->kernels = n;
		ctx->cap_kernels = nc;
	}
	*id_out = (uint32_t)ctx->nr_kernels;
	ctx->kernels[ctx->nr_kernels++] = k;
	return 0;
oom:
	bsym_kernel_free(k);
	return -ENOMEM;
}

static int kcb_find_elf(Dwfl_Module *mod, void **userdata, const char *modname,
			Dwarf_Addr base, char **file_name, Elf **elfp)
{
	return -1;
}

static int kcb_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			      Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			      GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	return -1; /* a vmlinux is only used when it carries its DWARF or symbols */
}

static bool find_link_stext(Dwfl_Module *mod, uint64_t *out)
{
	int n = dwfl_module_getsymtab(mod);
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &addr, NULL, NULL, NULL);
		if (name && !strcmp(name, "_stext")) {
			*out = addr;
			return true;
		}
	}
	return false;
}

static void kernel_load(struct bsym_ctx *ctx, struct bsym_kernel *k)
{
	k->loaded = true;
	if (!k->build_id_len)
		return; /* an unverifiable vmlinux could name the wrong kernel */
	char *cands[9] = { 0 }; /* the last slot: debuginfod, asked only if all else fails */
	size_t nc = 0;
	if (ctx->vmlinux)
		cands[nc++] = strdup(ctx->vmlinux);
	bool rel_ok = k->release && *k->release && !strchr(k->release, '/') &&
		      strcmp(k->release, "..") != 0;
	for (size_t d = 0; d < ctx->nr_debug_dirs && nc < 6; d++) {
		if (k->build_id_len < 2)
			break;
		char *p = NULL;
		char hex[2 * BSYM_MAX_BUILD_ID + 1];
		for (size_t i = 1; i < k->build_id_len; i++)
			sprintf(hex + 2 * (i - 1), "%02x", k->build_id[i]);
		if (asprintf(&p, "%s/.build-id/%02x/%s.debug", ctx->debug_dirs[d], k->build_id[0],
			     hex) >= 0)
			cands[nc++] = p;
	}
	if (rel_ok && !(ctx->flags & BSYM_NO_SYSTEM_DEBUG)) {
		char *p;
		if (nc < 8 && asprintf(&p, "/usr/lib/debug/boot/vmlinux-%s", k->release) >= 0)
			cands[nc++] = p;
		if (nc < 8 && asprintf(&p, "/boot/vmlinux-%s", k->release) >= 0)
			cands[nc++] = p;
	}
	bool asked = false;
	for (size_t i = 0; !k->mod; i++) {
		if (i == nc) {
			char *p = NULL;
			int dfd = asked ? -1 : bsym_debuginfod_find(ctx, k->build_id, k->build_id_len,
								   false, &p);
			asked = true;
			if (dfd < 0)
				break;
			close(dfd);
			cands[nc++] = p;
		}
		if (!cands[i])
			continue;
		Elf *elf;
		bool mm = false;
		int fd = bsym_open_elf_checked(ctx, cands[i], k->build_id, k->build_id_len, &elf, &mm);
		if (fd < 0) {
			if (mm)
				bsym_log(ctx, BSYM_LOG_INFO, "%s: build-id differs, refused", cands[i]);
			continue;
		}
		elf_end(elf);
		k->cb.find_elf = kcb_find_elf;
		k->cb.find_debuginfo = kcb_find_debuginfo;
		k->cb.section_address = dwfl_offline_section_address;
		k->cb.debuginfo_path = &ctx->debuginfo_path;
		k->dwfl = dwfl_begin(&k->cb);
		if (!k->dwfl) {
			close(fd);
			break;
		}
		dwfl_report_begin(k->dwfl);
		k->mod = dwfl_report_elf(k->dwfl, "kernel", cands[i], fd, 0, true);
		if (!k->mod)
			close(fd);
		dwfl_report_end(k->dwfl, NULL, NULL);
		if (!k->mod) {
			dwfl_end(k->dwfl);
			k->dwfl = NULL;
			continue;
		}
		k->vmlinux_path = strdup(cands[i]);
	}
	for (size_t i = 0; i < nc; i++)
		free(cands[i]);
	if (!k->mod)
		return;
	uint64_t link_stext;
	if (k->stext && find_link_stext(k->mod, &link_stext))
		k->bias = k->stext - link_stext;
	Dwarf_Addr b = 0;
	Dwarf *dw = dwfl_module_getdwarf(k->mod, &b);
	if (dw) {
		k->dwbias = b;
		k->idx = bsym_dwidx_new(dw);
	}
}

static bool is_core_text(const char *name, const GElf_Shdr *sh)
{
	return (sh->sh_flags & (SHF_ALLOC | SHF_EXECINSTR)) == (SHF_ALLOC | SHF_EXECINSTR) &&
	       name && strncmp(name, ".init", 5) != 0;
}

/* The kernel lays a module's core text out as layout_sections() does: the
 * allocated executable sections, .init* excepted, in section order, each
 * aligned, from the module base (/proc/modules).  libdwfl lays an ET_REL
 * file out its own way; keep both to translate. */
static void kmod_load(struct bsym_ctx *ctx, struct bsym_kernel *k, struct kmod *m)
{
	m->loaded = true;
	if (m->build_id_len < 2)
		return;
	Elf *elf = NULL;
	int fd = -1;
	char *path = NULL;
	for (size_t d = 0; d < ctx->nr_debug_dirs && fd < 0; d++) {
		for (int v = 0; v < 2 && fd < 0; v++) {
			char hex[2 * BSYM_MAX_BUILD_ID + 1];
			for (size_t i = 1; i < m->build_id_len; i++)
				sprintf(hex + 2 * (i - 1), "%02x", m->build_id[i]);
			free(path);
			path = NULL;
			if (asprintf(&path, "%s/.build-id/%02x/%s%s", ctx->debug_dirs[d],
				     m->build_id[0], hex, v == 0 ? ".debug" : "") < 0) {
				path = NULL;
				continue;
			}
			bool mm = false;
			fd = bsym_open_elf_checked(ctx, path, m->build_id, m->build_id_len, &elf, &mm);
		}
	}
	if (fd < 0) {
		free(path);
		path = NULL;
		int dfd = bsym_debuginfod_find(ctx, m->build_id, m->build_id_len, false, &path);
		if (dfd >= 0) {
			close(dfd);
			bool mm = false;
			fd = bsym_open_elf_checked(ctx, path, m->build_id, m->build_id_len, &elf, &mm);
		}
		if (fd < 0) {
			free(path);
			return;
		}
	}
	GElf_Ehdr eh;
	size_t shstr, cap = 0;
	if (!gelf_getehdr(elf, &eh) || eh.e_type != ET_REL || elf_getshdrstrndx(elf, &shstr))
		goto out;
	uint64_t off = 0;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || !is_core_text(elf_strptr(elf, shstr, sh.sh_name), &sh))
			continue;
		uint64_t al = sh.sh_addralign > 1 && sh.sh_addralign < (1u << 20) ? sh.sh_addralign : 1;
		off = (off + al - 1) & ~(al - 1);
		if (m->nsecs == cap) {
			size_t nc = cap ? cap * 2 : 8;
			struct ksec *n = realloc(m->secs, nc * sizeof(*n));
			if (!n)
				goto out;
			m->secs = n;
			cap = nc;
		}
		/* dwfl_addr: the section index for now */
		m->secs[m->nsecs++] = (struct ksec){ off, sh.sh_size, elf_ndxscn(scn) };
		off += sh.sh_size;
	}
	if (!m->nsecs)
		goto out;
	m->cb.find_elf = kcb_find_elf;
	m->cb.find_debuginfo = kcb_find_debuginfo;
	m->cb.section_address = dwfl_offline_section_address;
	m->cb.debuginfo_path = &ctx->debuginfo_path;
	m->dwfl = dwfl_begin(&m->cb);
	if (!m->dwfl)
		goto out;
	int dfd = dup(fd);
	dwfl_report_begin(m->dwfl);
	m->mod = dfd >= 0 ? dwfl_report_elf(m->dwfl, m->name, path, dfd, 0x100000000ULL, true) : NULL;
	if (!m->mod && dfd >= 0)
		close(dfd);
	dwfl_report_end(m->dwfl, NULL, NULL);
	GElf_Addr bias = 0;
	Elf *de = m->mod ? dwfl_module_getelf(m->mod, &bias) : NULL;
	for (size_t i = 0; de && i < m->nsecs; i++) {
		GElf_Shdr sh;
		Elf_Scn *scn = elf_getscn(de, (size_t)m->secs[i].dwfl_addr);
		if (!scn || !gelf_getshdr(scn, &sh)) {
			de = NULL;
			break;
		}
		m->secs[i].dwfl_addr = sh.sh_addr + bias;
	}
	if (!de) {
		m->nsecs = 0;
		goto out;
	}
	Dwarf_Addr b = 0;
	Dwarf *dw = dwfl_module_getdwarf(m->mod, &b);
	if (dw) {
		m->dwbias = b;
		m->idx = bsym_dwidx_new(dw);
	}
out:
	elf_end(elf);
	close(fd);
	free(path);
}

/* Name addr inside module m from its debuginfo; NULL when not possible. */
static const struct bsym_result *kmod_lookup(struct bsym_ctx *ctx, struct bsym_kernel *k,
					     struct kmod *m, uint64_t addr, int *err)
{
	if (!m->loaded)
		kmod_load(ctx, k, m);
	uint64_t rt = addr - m->base;
	for (size_t i = 0; i < m->nsecs; i++) {
		if (rt < m->secs[i].rt_off || rt - m->secs[i].rt_off >= m->secs[i].size)
			continue;
		uint64_t a = m->secs[i].dwfl_addr + (rt - m->secs[i].rt_off);
		const struct bsym_result *r;
		*err = bsym_frames_from_dwarf(ctx, m->idx, NULL, m->mod, a - m->dwbias, a,
					      BSYM_FRAME_KERNEL, &r);
		if (*err || r->reason != BSYM_OK)
			return NULL;
		return r;
	}
	return NULL;
}

static const struct bsym_result *kallsyms_lookup(struct bsym_ctx *ctx, struct bsym_kernel *k,
						 uint64_t addr, int *err)
{
	size_t lo = 0, hi = k->nsyms;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (k->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return bsym_result_reason(BSYM_R_NO_SYMBOL);
	/* Several names at one address: take the first registered. */
	size_t i = lo - 1;
	while (i > 0 && k->syms[i - 1].addr == k->syms[i].addr)
		i--;
	const struct ksym *s = &k->syms[i];
	if (addr - s->addr >= KSYM_MAX_SPAN)
		return bsym_result_reason(BSYM_R_NO_SYMBOL);
	/* A symbol does not run past the end of its module, nor into one. */
	int in_mod = -1;
	for (size_t m = 0; m < k->nmods; m++) {
		if (addr >= k->mods[m].base && addr - k->mods[m].base < k->mods[m].size) {
			in_mod = (int)m;
			break;
		}
	}
	if (s->mod != BSYM_NO_OBJECT ? in_mod != (int)s->mod : in_mod >= 0)
		return bsym_result_reason(BSYM_R_NO_SYMBOL);
	struct bsym_result *r = bsym_result_new(ctx, 1);
	if (!r) {
		*err = -ENOMEM;
		return NULL;
	}
	struct bsym_frame *f = (struct bsym_frame *)r->frames;
	f->raw_name = s->name;
	f->name = s->name;
	f->offset = addr - s->addr;
	f->kind = BSYM_FRAME_KERNEL;
	return r;
}

int bsym_symbolize_kernel(struct bsym_ctx *ctx, uint32_t kernel, uint64_t addr,
			  const struct bsym_result **out)
{
	if (!ctx || !out)
		return -EINVAL;
	*out = NULL;
	if (kernel >= ctx->nr_kernels)
		return -EINVAL;
	struct bsym_kernel *k = ctx->kernels[kernel];
	const struct bsym_result *r = bsym_map_get(&k->cache, addr);
	if (r) {
		*out = r;
		return 0;
	}
	if (!k->loaded)
		kernel_load(ctx, k);
	int err = 0;
	r = NULL;
	bool in_module = false;
	for (size_t m = 0; m < k->nmods && !r; m++) {
		if (addr >= k->mods[m].base && addr - k->mods[m].base < k->mods[m].size) {
			in_module = true;
			r = kmod_lookup(ctx, k, &k->mods[m], addr, &err);
			if (err)
				return err;
		}
	}
	if (k->mod && !in_module) {
		uint64_t a = addr - k->bias;
		err = bsym_frames_from_dwarf(ctx, k->idx, NULL, k->mod, a - k->dwbias, a,
					     BSYM_FRAME_KERNEL, &r);
		if (err)
			return err;
		if (r->reason != BSYM_OK && k->nsyms)
			r = NULL; /* try kallsyms */
	}
	if (!r) {
		if (k->nsyms)
			r = kallsyms_lookup(ctx, k, addr, &err);
		else
			r = bsym_result_reason(k->mod ? BSYM_R_NO_SYMBOL : BSYM_R_KERNEL_NO_SYMBOLS);
		if (err)
			return err;
	}
	if (bsym_map_put(&k->cache, addr, (void *)r))
		return -ENOMEM;
	*out = r;
	return 0;
}
