/* SPDX-License-Identifier: Apache-2.0 */
/* bsym.c - the context, object registry, result cache, frame-pointer states and normalization. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <dwarf.h>
#include <gelf.h>

#include "bsym_internal.h"

/* ---- context ---------------------------------------------------------------- */

static char *xstrdup_opt(const char *s, int *err)
{
	if (!s)
		return NULL;
	char *d = strdup(s);
	if (!d)
		*err = -ENOMEM;
	return d;
}

/* Drops s's trailing slashes ("/" stays); returns its length. */
static size_t trim_slashes(char *s)
{
	size_t l = s ? strlen(s) : 0;
	while (l > 1 && s[l - 1] == '/')
		s[--l] = '\0';
	return l;
}

int bsym_create(struct bsym_ctx **out, const struct bsym_opts *opts)
{
	if (!out)
		return -EINVAL;
	*out = NULL;
	struct bsym_opts o = { 0 };
	if (opts) {
		/* Callers built against an older, shorter struct pass their sz:
		 * read no further than that. */
		size_t n = opts->sz && opts->sz < sizeof(o) ? opts->sz : sizeof(o);
		memcpy(&o, opts, n);
		if (o.nr_debug_dirs && !o.debug_dirs)
			return -EINVAL;
	}
	struct bsym_ctx *ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return -ENOMEM;
	int err = 0;
	ctx->flags = o.flags;
	ctx->log = o.log;
	ctx->log_arg = o.log_arg;
	ctx->debug_dirs = calloc(o.nr_debug_dirs + 1, sizeof(char *));
	if (!ctx->debug_dirs)
		goto oom;
	size_t pathlen = 1;
	for (size_t i = 0; i < o.nr_debug_dirs; i++) {
		if (!o.debug_dirs[i] || !*o.debug_dirs[i])
			continue;
		/* absolute: libdwfl's build-id helper (dwz alt files, below)
		 * ignores relative entries, and --debug-dir ./debug is common */
		char *d = o.debug_dirs[i][0] != '/' ? realpath(o.debug_dirs[i], NULL) : NULL;
		if (!d)
			d = strdup(o.debug_dirs[i]);
		if (!d)
			goto oom;
		size_t l = trim_slashes(d);
		ctx->debug_dirs[ctx->nr_debug_dirs++] = d;
		pathlen += l + 1;
	}
	ctx->nr_user_dirs = ctx->nr_debug_dirs;
	if (!(o.flags & BSYM_NO_SYSTEM_DEBUG)) {
		if (!(ctx->debug_dirs[ctx->nr_debug_dirs] = strdup("/usr/lib/debug")))
			goto oom;
		pathlen += strlen("/usr/lib/debug") + 1;
		ctx->nr_debug_dirs++;
	}
	/* For libdwfl's build-id helper (dwz alt files): it only searches
	 * absolute entries, and without any it would use its default path,
	 * /usr/lib/debug included, hence the placeholder. */
	ctx->debuginfo_path = calloc(1, pathlen + sizeof("/nonexistent"));
	if (!ctx->debuginfo_path)
		goto oom;
	for (size_t i = 0; i < ctx->nr_debug_dirs; i++) {
		if (ctx->debug_dirs[i][0] != '/')
			continue;
		if (ctx->debuginfo_path[0])
			strcat(ctx->debuginfo_path, ":");
		strcat(ctx->debuginfo_path, ctx->debug_dirs[i]);
	}
	if (!ctx->debuginfo_path[0])
		strcpy(ctx->debuginfo_path, "/nonexistent");
	if (o.sysroot && *o.sysroot && strcmp(o.sysroot, "/") != 0)
		ctx->sysroot = xstrdup_opt(o.sysroot, &err);
	trim_slashes(ctx->sysroot);
	ctx->vmlinux = xstrdup_opt(o.vmlinux, &err);
	if (o.cache_dir && *o.cache_dir)
		ctx->cache_dir = xstrdup_opt(o.cache_dir, &err);
	trim_slashes(ctx->cache_dir);
	ctx->cache_max_bytes = o.cache_max_bytes ? o.cache_max_bytes : 256ull << 20;
	if (err)
		goto oom;
	elf_version(EV_CURRENT);
	*out = ctx;
	return 0;
oom:
	bsym_destroy(ctx);
	return -ENOMEM;
}

void bsym_destroy(struct bsym_ctx *ctx)
{
	if (!ctx)
		return;
	for (size_t i = 0; i < ctx->nr_objs; i++)
		bsym_obj_release(ctx->objs[i]);
	free(ctx->objs);
	for (size_t i = 0; i < ctx->nr_kernels; i++)
		bsym_kernel_free(ctx->kernels[i]);
	free(ctx->kernels);
	for (size_t i = 0; i < ctx->nr_perfmaps; i++)
		bsym_perfmap_free(ctx->perfmaps[i]);
	free(ctx->perfmaps);
	for (size_t i = 0; i < ctx->nr_jitdumps; i++)
		bsym_jitdump_free(ctx->jitdumps[i]);
	free(ctx->jitdumps);
	bsym_dirscans_free(ctx);
	if (ctx->dinfod_client)
		((void (*)(void *))ctx->dinfod_end)(ctx->dinfod_client);
	/* The library stays loaded: libdebuginfod registers atexit-like
	 * state (curl) that must not be unmapped under it. */
	for (size_t i = 0; ctx->debug_dirs && i < ctx->nr_debug_dirs; i++)
		free(ctx->debug_dirs[i]);
	free(ctx->debug_dirs);
	free(ctx->debuginfo_path);
	free(ctx->sysroot);
	free(ctx->vmlinux);
	free(ctx->cache_dir);
	bsym_map_free(&ctx->demangled);
	bsym_arena_free(&ctx->arena);
	free(ctx);
}

/* ---- objects ---------------------------------------------------------------- */

static int set_image(struct bsym_obj *o, const struct bsym_object_desc *desc)
{
	if (!desc->sz || desc->sz < offsetof(struct bsym_object_desc, image_len) + sizeof(size_t) ||
	    !desc->image || !desc->image_len || !desc->build_id_len)
		return 0; /* older callers; without a build-id an image proves nothing */
	if (!(o->image = malloc(desc->image_len)))
		return -ENOMEM;
	memcpy(o->image, desc->image, desc->image_len);
	o->image_len = desc->image_len;
	return 0;
}

int bsym_object_register(struct bsym_ctx *ctx, const struct bsym_object_desc *desc,
			 uint32_t *id_out)
{
	if (!ctx || !desc || !id_out)
		return -EINVAL;
	*id_out = BSYM_NO_OBJECT;
	if (desc->sz && desc->sz < offsetof(struct bsym_object_desc, verify_arg) + sizeof(void *))
		return -EINVAL;
	size_t len = desc->build_id ? desc->build_id_len : 0;
	if (len > BSYM_MAX_BUILD_ID)
		return -EINVAL;
	uint64_t h = bsym_hash_bytes(desc->build_id, len, len);
	for (size_t i = 0; i < ctx->nr_objs; i++) {
		struct bsym_obj *o = ctx->objs[i];
		if (len) {
			if (o->bid_hash == h && o->build_id_len == len &&
			    !memcmp(o->build_id, desc->build_id, len)) {
				/* A later description may know the path the first
				 * lacked; the build-id decides anyway. */
				if (!o->path && !o->located && desc->path &&
				    !(o->path = strdup(desc->path)))
					return -ENOMEM;
				if (!o->image && !o->located && set_image(o, desc))
					return -ENOMEM;
				*id_out = (uint32_t)i;
				return 0;
			}
		} else if (!o->build_id_len && o->verify == desc->verify &&
			   o->verify_arg == desc->verify_arg && o->path && desc->path &&
			   !strcmp(o->path, desc->path)) {
			*id_out = (uint32_t)i;
			return 0;
		}
	}
	if (ctx->nr_objs >= BSYM_NO_OBJECT - 1)
		return -ENOMEM;
	if (ctx->nr_objs == ctx->cap_objs) {
		size_t nc = ctx->cap_objs ? ctx->cap_objs * 2 : 16;
		struct bsym_obj **n = realloc(ctx->objs, nc * sizeof(*n));
		if (!n)
			return -ENOMEM;
		ctx->objs = n;
		ctx->cap_objs = nc;
	}
	struct bsym_obj *o = calloc(1, sizeof(*o));
	if (!o)
		return -ENOMEM;
	o->ctx = ctx;
	o->pending_debug_fd = -1;
	if (len)
		memcpy(o->build_id, desc->build_id, len);
	o->build_id_len = len;
	o->bid_hash = h;
	if (desc->path && !(o->path = strdup(desc->path))) {
		free(o);
		return -ENOMEM;
	}
	o->verify = desc->verify;
	o->verify_arg = desc->verify_arg;
	if (set_image(o, desc)) {
		free(o->path);
		free(o);
		return -ENOMEM;
	}
	*id_out = (uint32_t)ctx->nr_objs;
	ctx->objs[ctx->nr_objs++] = o;
	return 0;
}

static bool off_to_vaddr(const struct bsym_obj *o, uint64_t off, uint64_t *vaddr)
{
	for (size_t i = 0; i < o->nr_segs; i++) {
		const struct bsym_seg *s = &o->segs[i];
		if (off >= s->offset && off - s->offset < s->filesz) {
			*vaddr = s->vaddr + (off - s->offset);
			return true;
		}
	}
	return false;
}

/* Phase 1 and the persistent cache: after this, the maps hold what the
 * cache file knew for this run's key (CACHE.md). */
static void locate(struct bsym_ctx *ctx, struct bsym_obj *o)
{
	if (!o->located)
		bsym_obj_locate(ctx, o);
	if (!o->cache_tried)
		bsym_cache_attach(ctx, o);
}

/* Phase 2, counted for the cache's figures. */
static void load(struct bsym_ctx *ctx, struct bsym_obj *o)
{
	locate(ctx, o);
	if (!o->loaded) {
		bsym_obj_load(ctx, o);
		ctx->cache_stats.objects_read++;
	}
}

int bsym_symbolize_offset(struct bsym_ctx *ctx, uint32_t object, uint64_t file_offset,
			  const struct bsym_result **out)
{
	if (!ctx || !out)
		return -EINVAL;
	*out = NULL;
	if (object >= ctx->nr_objs)
		return -EINVAL;
	struct bsym_obj *o = ctx->objs[object];
	const struct bsym_result *r = bsym_map_get(&o->cache, file_offset);
	if (!r && !o->cache_tried) {
		locate(ctx, o);
		r = bsym_map_get(&o->cache, file_offset);
	}
	if (r) {
		*out = r;
		return 0;
	}
	load(ctx, o);
	uint64_t vaddr;
	if (o->status != BSYM_OK) {
		r = bsym_result_reason(o->status);
	} else if (!off_to_vaddr(o, file_offset, &vaddr)) {
		r = bsym_result_reason(BSYM_R_INVALID);
	} else if (o->go) {
		int err = bsym_frames_from_go(ctx, o->go, vaddr, &r);
		if (err)
			return err;
	} else {
		int err = bsym_frames_from_dwarf(ctx, o->idx, &o->symtab, o->mod, vaddr - o->dwbias, vaddr,
						 BSYM_FRAME_USER, &r);
		if (err)
			return err;
	}
	if (bsym_map_put(&o->cache, file_offset, (void *)r))
		return -ENOMEM;
	o->cache_dirty = true;
	*out = r;
	return 0;
}

/* DWARF register numbers of the frame and stack pointers, per machine. */
static bool fp_sp_regs(Dwfl_Module *mod, unsigned *fp, unsigned *sp)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	GElf_Ehdr eh;

	if (!elf || !gelf_getehdr(elf, &eh))
		return false;
	switch (eh.e_machine) {
	case EM_X86_64: *fp = 6; *sp = 7; return true;   /* rbp, rsp */
	case EM_AARCH64: *fp = 29; *sp = 31; return true; /* x29, sp */
	default: return false;
	}
}

/* x86-64's frame-pointer prologue is "push %rbp; mov %rsp,%rbp": at the
 * mov, the CFI already says rbp is saved, but rbp still holds the caller's
 * frame pointer (not clobbered yet).  Only meaningful for an interrupted
 * pc (a leaf): a return address - 1 is never an instruction's start. */
static bool at_fp_setup(Dwfl_Module *mod, uint64_t file_offset)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	size_t size = 0;
	/* The file's image, not elf_getdata_rawchunk(): libelf (0.188) adds
	 * every chunk it makes to a list that each later call walks, so one
	 * call per leaf made a report of many leaves quadratic (30,000
	 * unique leaves: 8.6 s, 92 % of it in that walk). */
	const unsigned char *p = elf ? (const unsigned char *)elf_rawfile(elf, &size) : NULL;

	if (!p || file_offset > size || size - file_offset < 3)
		return false;
	p += file_offset;
	/* 48 89 e5 and 48 8b ec both encode mov %rsp,%rbp */
	return p[0] == 0x48 &&
	       ((p[1] == 0x89 && p[2] == 0xe5) || (p[1] == 0x8b && p[2] == 0xec));
}

/* The CFA rule's register and offset (a register+offset rule), for
 * cfa_state's *sp_off. */
static enum bsym_fp_state cfa_state(Dwarf_CFI *cfi, Dwarf_Addr addr, unsigned fp, unsigned sp,
				    int64_t *sp_off)
{
	Dwarf_Frame *frame = NULL;
	Dwarf_Op *ops = NULL, fp_mem[3];
	size_t nops = 0;
	enum bsym_fp_state st = BSYM_FP_UNKNOWN;

	*sp_off = -1;
	if (!cfi || dwarf_cfi_addrframe(cfi, addr, &frame) != 0)
		return BSYM_FP_UNKNOWN;
	/* libdw presents a register+offset CFA rule as one DW_OP_bregx */
	if (dwarf_frame_cfa(frame, &ops, &nops) == 0 && nops == 1) {
		unsigned reg = ~0u;
		int64_t off = 0;
		if (ops[0].atom == DW_OP_bregx) {
			reg = (unsigned)ops[0].number;
			off = (int64_t)ops[0].number2;
		} else if (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31) {
			reg = ops[0].atom - DW_OP_breg0;
			off = (int64_t)ops[0].number;
		}
		if (reg == sp)
			*sp_off = off;
		if (reg == fp) {
			st = BSYM_FP_FRAME;
		} else if (reg == sp) {
			/* the frame pointer's own rule: "same value" (no
			 * location, ops NULL) means this function has not
			 * touched it; saved, in another register or undefined,
			 * it may hold anything */
			ops = NULL;
			nops = 0;
			if (dwarf_frame_register(frame, (int)fp, fp_mem, &ops, &nops) == 0 &&
			    nops == 0 && ops == NULL)
				st = BSYM_FP_NO_FRAME;
			else
				st = BSYM_FP_CLOBBERED;
		}
	}
	free(frame);
	return st;
}

/* A Go object: its linker's .debug_frame gives the CFA but never says
 * where rbp is (Go 1.19: CIE version 3, def_cfa and the return address
 * only), yet every Go function with a frame saves rbp just below its
 * return address and points rbp there (cmd/internal/obj/x86, since Go
 * 1.7).  Marked by the sections Go's linker always writes. */
static bool is_go_object(struct bsym_obj *o)
{
	GElf_Addr bias;
	Elf *elf = o->mod ? dwfl_module_getelf(o->mod, &bias) : NULL;
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (o->go_checked)
		return o->is_go;
	o->go_checked = true;
	if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0)
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name = gelf_getshdr(scn, &sh) ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;
		if (name && (!strcmp(name, ".gopclntab") || !strcmp(name, ".note.go.buildid"))) {
			o->is_go = true;
			break;
		}
	}
	return o->is_go;
}

/*
 * What rbp holds at a Go function's pc whose CFA is rsp + sp_off (x86-64).
 * A frame of 8 bytes is the return address alone: a frameless leaf, or
 * the prologue's first instruction, rbp untouched.  A bigger frame saved
 * rbp at CFA - 16 and set it there, except in the few instructions around
 * that, met only by an interrupted pc (the leaf): Go 1.16-1.20 "SUBQ $n,
 * SP; MOVQ BP, d(SP); LEAQ d(SP), BP" ... "MOVQ d(SP), BP; ADDQ $n, SP;
 * RET", Go 1.21+ "PUSHQ BP; MOVQ SP, BP" (at_fp_setup) ... "ADDQ $n, SP;
 * POPQ BP".
 */
static enum bsym_fp_state go_fp_state(Dwfl_Module *mod, uint64_t file_offset, int64_t sp_off)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	size_t size = 0;
	const unsigned char *p = elf ? (const unsigned char *)elf_rawfile(elf, &size) : NULL;

	if (sp_off <= 8)
		return BSYM_FP_NO_FRAME;
	if (!p || file_offset > size || size - file_offset < 9)
		return BSYM_FP_FRAME;
	p += file_offset;
	if (p[0] != 0x48)
		return BSYM_FP_FRAME;
	/* the slot of the saved rbp, from rsp; other rbp saves (around
	 * duffzero calls: "MOVQ BP, -16(SP)") are not the prologue's */
	int64_t slot = sp_off - 16, d = 0, imm = 0;
	bool disp = (p[1] == 0x89 || p[1] == 0x8d) && (p[2] == 0x6c || p[2] == 0xac) && p[3] == 0x24;
	if (disp)
		d = p[2] == 0x6c ? (int8_t)p[4] : (int32_t)((uint32_t)p[4] | (uint32_t)p[5] << 8 |
							   (uint32_t)p[6] << 16 | (uint32_t)p[7] << 24);
	/* MOVQ BP, slot(SP) and LEAQ slot(SP), BP: not set yet */
	if (disp && d == slot)
		return BSYM_FP_NO_FRAME;
	/* ADDQ $frame, SP (imm8 or imm32): restored already unless a POPQ BP
	 * follows */
	if ((p[1] == 0x83 || p[1] == 0x81) && p[2] == 0xc4) {
		imm = p[1] == 0x83 ? (int8_t)p[3] : (int32_t)((uint32_t)p[3] | (uint32_t)p[4] << 8 |
							    (uint32_t)p[5] << 16 | (uint32_t)p[6] << 24);
		if (imm == sp_off - 8)
			return p[p[1] == 0x83 ? 4 : 7] == 0x5d ? BSYM_FP_FRAME : BSYM_FP_NO_FRAME;
	}
	return BSYM_FP_FRAME;
}

int bsym_fp_state(struct bsym_ctx *ctx, uint32_t object, uint64_t file_offset,
		  enum bsym_fp_state *out)
{
	if (!ctx || !out)
		return -EINVAL;
	*out = BSYM_FP_UNKNOWN;
	if (object >= ctx->nr_objs)
		return -EINVAL;
	struct bsym_obj *o = ctx->objs[object];
	void *cached = bsym_map_get(&o->fpcache, file_offset);
	if (!cached && !o->cache_tried) {
		locate(ctx, o);
		cached = bsym_map_get(&o->fpcache, file_offset);
	}
	if (cached) {
		*out = (enum bsym_fp_state)((uintptr_t)cached - 1);
		return 0;
	}
	load(ctx, o);
	uint64_t vaddr;
	unsigned fp, sp;
	enum bsym_fp_state st = BSYM_FP_UNKNOWN;
	if (o->status == BSYM_OK && o->mod && off_to_vaddr(o, file_offset, &vaddr) &&
	    fp_sp_regs(o->mod, &fp, &sp)) {
		Dwarf_Addr bias = 0;
		int64_t sp_off;
		/* .eh_frame of the loaded ELF first (what the compiler emits on
		 * x86-64), else .debug_frame */
		Dwarf_CFI *cfi = dwfl_module_eh_cfi(o->mod, &bias);
		st = cfi ? cfa_state(cfi, vaddr - bias, fp, sp, &sp_off) : BSYM_FP_UNKNOWN;
		if (st == BSYM_FP_UNKNOWN) {
			cfi = dwfl_module_dwarf_cfi(o->mod, &bias);
			st = cfi ? cfa_state(cfi, vaddr - bias, fp, sp, &sp_off) : BSYM_FP_UNKNOWN;
			/* Go's .debug_frame leaves rbp out: Go's convention says */
			if (st == BSYM_FP_NO_FRAME && fp == 6 && sp_off >= 0 && is_go_object(o))
				st = go_fp_state(o->mod, file_offset, sp_off);
		}
		/* no CFI at all (a Go binary without DWARF): Go's own table of
		 * stack pointer offsets says the same as its .debug_frame */
		int32_t delta;
		if (st == BSYM_FP_UNKNOWN && fp == 6 && o->go && gopcln_sp_delta(o->go, vaddr, &delta) == 0)
			st = go_fp_state(o->mod, file_offset, (int64_t)delta + 8);
		if (st == BSYM_FP_CLOBBERED && fp == 6 && at_fp_setup(o->mod, file_offset))
			st = BSYM_FP_NO_FRAME;
	}
	if (bsym_map_put(&o->fpcache, file_offset, (void *)(uintptr_t)(st + 1)))
		return -ENOMEM;
	o->cache_dirty = true;
	*out = st;
	return 0;
}

int bsym_object_info(struct bsym_ctx *ctx, uint32_t object, struct bsym_object_info *out)
{
	if (!ctx || !out || object >= ctx->nr_objs)
		return -EINVAL;
	struct bsym_obj *o = ctx->objs[object];
	locate(ctx, o);
	memset(out, 0, sizeof(*out));
	if (!o->loaded && o->cache_info) {
		/* what phase 2 found for this key, without doing it: the paths
		 * are this run's (phase 1), as bsym_obj_load would set them */
		out->status = o->cached_status;
		out->elf_path = o->elf_path;
		out->debug_path = o->cached_has_dwarf ? o->cand_debug_path : NULL;
		out->has_dwarf = o->cached_has_dwarf;
		out->has_symtab = o->cached_has_symtab;
		return 0;
	}
	load(ctx, o);
	out->status = o->status;
	out->elf_path = o->elf_path;
	out->debug_path = o->debug_path;
	out->has_dwarf = o->has_dwarf;
	out->has_symtab = o->has_symtab;
	return 0;
}

/* ---- normalization -------------------------------------------------------------- */

int bsym_normalize(const struct bsym_mapping *maps, size_t nr_maps, uint64_t addr,
		   uint32_t *object, uint64_t *file_offset, uint32_t *map_flags)
{
	if ((!maps && nr_maps) || !object || !file_offset)
		return -EINVAL;
	size_t lo = 0, hi = nr_maps;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (maps[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || addr >= maps[lo - 1].end)
		return -ENOENT;
	const struct bsym_mapping *m = &maps[lo - 1];
	*object = (m->flags & BSYM_MAP_ANON) ? BSYM_NO_OBJECT : m->object;
	*file_offset = m->file_offset + (addr - m->start);
	if (map_flags)
		*map_flags = m->flags;
	return 0;
}
