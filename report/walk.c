/* SPDX-License-Identifier: Apache-2.0 */
/*
 * walk.c - the count rows of a recording as structured frames: the one
 * place that decides what a stack is.  The text outputs (render.c: folded,
 * multi-line, --diff, the SVG's input) and the exporters (pprof,
 * speedscope, --missing-buildids) all consume it, so every output agrees
 * on totals and names.  The rules: -p/--comm/-U/-K filters; the interrupted kernel ip is put first
 * unless the kernel stack already starts with it; return addresses (every
 * frame but the leaf) are looked up at addr-1; lost stacks become
 * "[Missed User Stack]" / "[Missed Kernel Stack]" pseudo-frames, a
 * caller the frame-pointer walk skipped a "[missing caller]" one, and a
 * frame-pointer walk ends where the CFI says it went astray.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"


static struct rep_wframe *wpush(struct rep_wbuf *w)
{
	if (w->nr == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 64;
		struct rep_wframe *v = realloc(w->v, cap * sizeof(*v));
		if (!v)
			return NULL;
		w->v = v;
		w->cap = cap;
	}
	struct rep_wframe *f = &w->v[w->nr++];
	memset(f, 0, sizeof(*f));
	f->object = BSYM_NO_OBJECT;
	f->object_index = BPROF_NO_OBJECT;
	return f;
}

static bool named(const struct bsym_result *res) { return res && res->reason == BSYM_OK && res->nr_frames; }

static int add_kernel(struct rep_wbuf *w, struct bsym_ctx *sym, const struct rep_input *in, uint64_t addr,
		      size_t depth, bool symbolize)
{
	struct rep_wframe *f = wpush(w);

	if (!f)
		return -ENOMEM;
	f->kind = REP_W_KERNEL;
	f->addr = addr;
	f->lookup = rep_lookup_addr(addr, depth);
	f->reason = BSYM_R_KERNEL_NO_SYMBOLS;
	if (symbolize && in->kernel != BSYM_NO_OBJECT &&
	    bsym_symbolize_kernel(sym, in->kernel, f->lookup, &f->res) == 0) {
		f->reason = f->res->reason;
		if (!named(f->res))
			f->res = NULL;
	}
	return 0;
}

void rep_row_window(const struct rep_input *in, const struct bprof_count *c, uint64_t win[2])
{
	const struct bprof_recording *rec = in->rec;
	uint64_t r0, r1;

	win[0] = win[1] = 0;
	if (!rec->jit.present)
		return;
	if (rec->slices.slice_ns) {
		r0 = rec->slices.origin_ns + (uint64_t)c->slice * rec->slices.slice_ns;
		r1 = r0 + rec->slices.slice_ns;
	} else {
		r0 = rec->meta.start_time_ns;
		r1 = r0 + rec->meta.duration_ns;
	}
	/* to the jitdump's clock; a hostile offset only misplaces the window */
	win[0] = r0 + (uint64_t)rec->jit.mono_minus_real_ns;
	win[1] = r1 + (uint64_t)rec->jit.mono_minus_real_ns;
	if (!win[1] || win[1] <= win[0])
		win[0] = win[1] = 0;
}

/* A JIT frame: the image's jitdump first (it has times), then its perf
 * map for what the jitdump does not cover (SPEC.md 6.16). */
static void name_jit(struct rep_wframe *f, struct bsym_ctx *sym, const struct rep_process_map *pm,
		     const uint64_t win[2])
{
	const struct bsym_result *res = NULL;

	if (pm->jitdump != BSYM_NO_OBJECT &&
	    bsym_symbolize_jitdump(sym, pm->jitdump, f->lookup, win ? win[0] : 0, win ? win[1] : 0,
				   &res) == 0 &&
	    res->reason != BSYM_R_JIT)
		f->res = res;
	else if (pm->perfmap != BSYM_NO_OBJECT &&
		 bsym_symbolize_perfmap(sym, pm->perfmap, f->lookup, &res) == 0)
		f->res = res;
	if (f->res) {
		f->reason = f->res->reason;
		if (!named(f->res))
			f->res = NULL;
	}
}

void rep_wframe_user(struct rep_wframe *f, struct bsym_ctx *sym, const struct rep_process_map *pm,
		     uint64_t addr, size_t depth, uint32_t gen, const uint64_t win[2], bool symbolize)
{
	const struct bsym_mapping *bm;
	uint32_t obj, mflags;
	uint64_t off;

	memset(f, 0, sizeof(*f));
	f->object = BSYM_NO_OBJECT;
	f->object_index = BPROF_NO_OBJECT;
	f->kind = REP_W_USER;
	f->addr = addr;
	f->lookup = rep_lookup_addr(addr, depth);
	f->reason = BSYM_R_UNMAPPED;
	if (!pm)
		return;
	/* the mapping holding the address (pm->maps and the recorded ones
	 * are parallel, sorted and disjoint: SPEC.md); libsym normalizes in
	 * it.  A fleet's merge does this for every frame of every stack. */
	if (pm->proc->has_gens) {
		/* the mapping live at the row's generation (SPEC.md 6.12):
		 * where that cannot be known, no name at all */
		const struct bprof_mapping *m;
		int r = bprof_process_mapping_at(pm->proc, f->lookup, gen, &m);

		if (r <= 0)
			return;
		f->map = m;
		bm = m >= pm->proc->mappings && m < pm->proc->mappings + pm->proc->nr_mappings
			     ? &pm->maps[m - pm->proc->mappings]
			     : &pm->hmaps[m - pm->proc->history];
	} else {
		size_t lo = 0, hi = pm->proc->nr_mappings;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (pm->maps[mid].start <= f->lookup)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (!lo)
			return;
		f->map = &pm->proc->mappings[lo - 1];
		bm = &pm->maps[lo - 1];
	}
	if (bsym_normalize(bm, 1, f->lookup, &obj, &off, &mflags)) {
		f->map = NULL;
		return;
	}
	f->object_index = f->map->object_index;
	f->file_offset = off + (addr - f->lookup);
	if (obj == BSYM_NO_OBJECT) {
		f->reason = (mflags & BSYM_MAP_ANON) ? BSYM_R_JIT : BSYM_R_UNMAPPED;
		if (mflags & BSYM_MAP_ANON)
			f->kind = REP_W_JIT;
		if (symbolize && (mflags & BSYM_MAP_ANON))
			name_jit(f, sym, pm, win);
		return;
	}
	f->object = obj;
	f->reason = BSYM_R_NO_DEBUGINFO;
	if (symbolize && bsym_symbolize_offset(sym, obj, off, &f->res) == 0) {
		f->reason = f->res->reason;
		if (!named(f->res))
			f->res = NULL;
	}
}

static int add_user(struct rep_wbuf *w, struct bsym_ctx *sym, const struct rep_process_map *pm,
		    uint64_t addr, size_t depth, uint32_t gen, const uint64_t win[2], bool symbolize)
{
	struct rep_wframe *f = wpush(w);

	if (!f)
		return -ENOMEM;
	rep_wframe_user(f, sym, pm, addr, depth, gen, win, symbolize);
	return 0;
}

/* A runtime's frame (runtime.h): its two words, named from the
 * recording's section of the runtime. */
static int add_runtime(struct rep_wbuf *w, const struct rep_input *in, const struct bprof_count *c,
		       int rt, uint64_t w0, uint64_t w1, bool leaf, bool symbolize)
{
	struct rep_wframe *f = wpush(w);

	if (!f)
		return -ENOMEM;
	f->kind = REP_W_RUNTIME;
	f->rt = rep_runtimes[rt];
	f->addr = w0;
	f->reason = BSYM_R_INVALID;
	if (symbolize) {
		f->res = rep_runtime_name(in, rt, c->pid, c->exec_id, w0, w1, leaf, &f->lookup);
		if (f->res)
			f->reason = BSYM_OK;
	}
	return 0;
}

static int add_missed(struct rep_wbuf *w, enum rep_wkind kind)
{
	struct rep_wframe *f = wpush(w);

	if (!f)
		return -ENOMEM;
	f->kind = kind;
	f->reason = BSYM_R_INVALID;
	return 0;
}

/*
 * A frame-pointer walk (the kernel's, or the recorder's before a process's
 * tables arrived) reads each caller at rbp + 8 and the next rbp at rbp.
 * Whether that is right depends on what the frame it stepped from did with
 * rbp there, which the object's CFI says (bsym_fp_state):
 *   FRAME      rbp is this frame's base: the step found the true caller;
 *   NO_FRAME   rbp is untouched, still the caller's: the step found the
 *              caller's caller (a "[missing caller]" in between);
 *   CLOBBERED  rbp was saved and may hold anything (code built without
 *              frame pointers using it as a general register): the
 *              "callers" are whatever the stack held there, so the stack
 *              ends at this frame rather than print made-up names;
 *   UNKNOWN    no CFI (no binary, JIT code): nothing to check.
 * After a skipped caller, the next frame came through the skipped
 * function's rbp, unchecked: it is kept only if it keeps a frame itself
 * (FRAME) or is JIT code, which a value that merely happened to be in rbp
 * rarely leads to.
 */
/*
 * Go's thread roots (runtime.goexit under every goroutine, runtime.mstart
 * under every g0 stack, runtime.rt0_go under the first thread's; the Go
 * runtime's TOPFRAME functions): nothing above them is a caller, whatever
 * a frame pointer or the recorder's walk found there (mstart's rbp is the
 * creating thread's, clone leaves it).  The outermost name of the frame;
 * assembly functions carry ".abi0" in symbol tables, not in pclntab.
 */
static bool go_named(const struct rep_wframe *f, const char *const *names, size_t nr)
{
	const char *n;

	if (f->kind != REP_W_USER || !f->res || !f->res->nr_frames)
		return false;
	n = f->res->frames[f->res->nr_frames - 1].raw_name;
	if (!n || strncmp(n, "runtime.", 8) != 0)
		return false;
	for (size_t i = 0; i < nr; i++) {
		size_t l = strlen(names[i]);
		if (!strncmp(n, names[i], l) && (!n[l] || !strcmp(n + l, ".abi0")))
			return true;
	}
	return false;
}

static bool go_root(const struct rep_wframe *f)
{
	static const char *const roots[] = { "runtime.goexit", "runtime.mstart", "runtime.rt0_go" };

	return go_named(f, roots, sizeof(roots) / sizeof(roots[0]));
}

/*
 * Go's stack switches (runtime.systemstack, mcall, morestack, asmcgocall):
 * frameless assembly that moves to another stack, which Go's tables do not
 * describe, so even the unwinder's walk left them by frame pointer, which
 * skips their caller.  In a walk the report does not check step by step,
 * the skip is marked here.
 */
static bool go_asmcgocall(const struct rep_wframe *f)
{
	static const char *const n[] = { "runtime.asmcgocall" };

	return go_named(f, n, 1);
}

static bool go_cgocall(const struct rep_wframe *f)
{
	static const char *const n[] = { "runtime.cgocall" };

	return go_named(f, n, 1);
}

static bool go_switch(const struct rep_wframe *f)
{
	static const char *const sw[] = { "runtime.systemstack", "runtime.mcall", "runtime.morestack",
					  "runtime.morestack_noctxt", "runtime.asmcgocall" };

	return go_named(f, sw, sizeof(sw) / sizeof(sw[0]));
}

static enum bsym_fp_state frame_fp_state(struct bsym_ctx *sym, const struct rep_wframe *f)
{
	enum bsym_fp_state st;

	if (f->kind != REP_W_USER || f->object == BSYM_NO_OBJECT)
		return BSYM_FP_UNKNOWN;
	/* the CFI at the address looked up (a return address - 1) */
	if (bsym_fp_state(sym, f->object, f->file_offset - (f->addr - f->lookup), &st) != 0)
		return BSYM_FP_UNKNOWN;
	return st;
}

void rep_wbuf_free(struct rep_wbuf *b)
{
	free(b->v);
	memset(b, 0, sizeof(*b));
}

int rep_walk_row(struct rep_wbuf *b, const struct rep_config *cfg, struct bsym_ctx *sym,
		 const struct rep_input *in, const struct bprof_count *c, bool symbolize,
		 rep_walk_fn fn, void *arg, struct rep_stats *st)
{
	const struct bprof_recording *rec = in->rec;
	struct rep_wbuf *w = b;
	bool show_user = !cfg->kernel_only, show_kernel = !cfg->user_only;
	int err = 0;

	w->nr = 0;
	bool kmiss = show_kernel && rep_stack_missed(c->kernel_stack_id);
	bool umiss = show_user && rep_stack_missed(c->user_stack_id);
	/* an off-CPU row's leaf says so, whatever else is shown */
	if (c->state != BPROF_STATE_ON_CPU) {
		struct rep_wframe *f = wpush(w);
		if (!f)
			return -ENOMEM;
		f->kind = REP_W_OFFCPU;
		f->addr = c->state;
		f->reason = BSYM_R_INVALID;
	}
	if (kmiss)
		err = add_missed(w, REP_W_MISSED_KERNEL);
	if (show_kernel && !kmiss && !err) {
		const struct bprof_stack *s = c->kernel_stack_id >= 0
						      ? bprof_recording_stack(rec, c->kernel_stack_id)
						      : NULL;
		size_t depth = 0;
		if (c->kernel_ip && (!s || s->nr_ips == 0 || s->ips[0] != c->kernel_ip))
			err = add_kernel(w, sym, in, c->kernel_ip, depth++, symbolize);
		for (uint32_t i = 0; s && i < s->nr_ips && !err; i++)
			err = add_kernel(w, sym, in, s->ips[i], depth++, symbolize);
	}
	size_t nr_kernel = w->nr;
	if (show_user && !umiss && c->user_stack_id >= 0 && !err) {
		const struct bprof_stack *s = bprof_recording_stack(rec, c->user_stack_id);
		const struct rep_process_map *pm = rep_input_process(in, c->pid, c->exec_id);
		bool fp_walk = symbolize && !bprof_stack_unwound(c->user_stack_id);
		/* The unwinder's walk whose leaf step alone is in doubt: it
		 * followed the frame pointer out of the interrupted frame
		 * (code without CFI, a frameless leaf), and the table after
		 * (the steps of an exact stack, trusted alike: a program with
		 * frame pointers and few FDEs calling into libraries with
		 * only CFI lost everything above the first library frame,
		 * whose rbp is the library's own) */
		bool leaf_only = fp_walk && c->user_stack_id >= BPROF_STACK_ID_UNWOUND;
		uint64_t win[2];
		rep_row_window(in, c, win);
		enum bsym_fp_state prev = BSYM_FP_UNKNOWN; /* of the frame just added */
		for (uint32_t i = 0; s && i < s->nr_ips && !err; i++) {
			int rt = rep_runtime_at(s->ips, i, s->nr_ips);

			if (rt >= 0) {
				err = add_runtime(w, in, c, rt, s->ips[i], s->ips[i + 1], i == 0, symbolize);
				i++;
				/* the native frame its frames stand for (a
				 * Python loop's, SPEC.md 6.15), after its last */
				if (rep_runtimes[rt]->stands_for_native && !cfg->python_native &&
				    i + 1 < s->nr_ips && rep_runtime_at(s->ips, i + 1, s->nr_ips) != rt)
					i++;
				prev = BSYM_FP_UNKNOWN;
				continue;
			}
			/* the step from frame i-1 to i, by frame i-1's CFI */
			bool skipped = prev == BSYM_FP_NO_FRAME;
			if (prev == BSYM_FP_CLOBBERED)
				break;
			if (skipped)
				err = add_missed(w, REP_W_MISSING_CALLER);
			if (!err)
				err = add_user(w, sym, pm, s->ips[i], i, c->map_gen, win, symbolize);
			/* asmcgocall's own caller: the recorder's walk came back
			 * from C by the goroutine's saved stack pointer
			 * (UNWIND_CFA_GO_STACK), not by a frame pointer that skips
			 * it: no caller is missing */
			if (!err && skipped && w->nr >= 3 && go_cgocall(&w->v[w->nr - 1]) &&
			    go_asmcgocall(&w->v[w->nr - 3])) {
				w->v[w->nr - 2] = w->v[w->nr - 1];
				w->nr--;
			}
			if (!err && go_root(&w->v[w->nr - 1]))
				break; /* a thread's outermost frame */
			if (!err && !fp_walk) {
				prev = symbolize && i + 1 < s->nr_ips && go_switch(&w->v[w->nr - 1])
					       ? BSYM_FP_NO_FRAME
					       : BSYM_FP_UNKNOWN;
				continue;
			}
			if (err || !fp_walk || (!skipped && i + 1 == s->nr_ips))
				continue; /* nothing left to check */
			const struct rep_wframe *f = &w->v[w->nr - 1];
			prev = frame_fp_state(sym, f);
			/* the frame after a skipped caller was found through
			 * that caller's rbp, which nothing vouches for unless
			 * this frame keeps one (JIT code has no CFI to ask and
			 * keeps frame pointers, perf's convention for JITs; an
			 * address in no mapping is what a stray rbp leads to) */
			if (skipped && f->kind != REP_W_JIT && prev != BSYM_FP_FRAME) {
				w->nr--;
				break;
			}
			/* past the leaf's step (and the frame after a caller
			 * it skipped, or a leaf that clobbered rbp, whose next
			 * step ends the stack) */
			if (leaf_only && (i >= 1 || prev == BSYM_FP_FRAME || prev == BSYM_FP_UNKNOWN)) {
				fp_walk = false;
				prev = BSYM_FP_UNKNOWN;
			}
		}
	}
	if (umiss && !err)
		err = add_missed(w, REP_W_MISSED_USER);
	if (err)
		return err;
	if (st) {
		/* saturate rather than wrap: counts come from hostile files */
		st->samples = st->samples + c->count < st->samples ? UINT64_MAX
								   : st->samples + c->count;
		if (kmiss)
			st->missed_kernel++;
		if (umiss)
			st->missed_user++;
	}
	return fn(arg, in, c, w->v, w->nr, nr_kernel);
}

int rep_walk(const struct rep_config *cfg, struct bsym_ctx *sym, const struct rep_input *in,
	     bool symbolize, rep_walk_fn fn, void *arg, struct rep_stats *st)
{
	const struct bprof_recording *rec = in->rec;
	struct rep_wbuf b = {0};
	int err = 0;

	for (uint64_t n = 0; n < rec->nr_counts && !err; n++) {
		if (cfg->progress && (n & 4095) == 0)
			cfg->progress(cfg->progress_arg, in->path, n, rec->nr_counts);
		if (rep_row_selected(cfg, &rec->counts[n]))
			err = rep_walk_row(&b, cfg, sym, in, &rec->counts[n], symbolize, fn, arg, st);
	}
	if (cfg->progress)
		cfg->progress(cfg->progress_arg, in->path, rec->nr_counts, rec->nr_counts);
	rep_wbuf_free(&b);
	return err;
}

const char *rep_offcpu_frame_name(uint32_t state)
{
	static const char *const names[] = {
		[BPROF_STATE_S] = "[off-cpu:S]", [BPROF_STATE_D] = "[off-cpu:D]",
		[BPROF_STATE_R] = "[off-cpu:R]", [BPROF_STATE_T] = "[off-cpu:T]",
	};

	return state >= 1 && state <= BPROF_STATE_MAX ? names[state] : "[off-cpu]";
}

const char *rep_process_name(const struct rep_config *cfg, const struct rep_input *in,
			     const struct bprof_count *c, char *buf)
{
	const char *name = c->comm;

	if (cfg->threads) {
		const struct rep_process_map *pm = rep_input_process(in, c->pid, c->exec_id);
		if (pm && pm->proc->comm[0])
			name = pm->proc->comm;
	}
	/* comm fields hold a NUL (SPEC.md); copied so that none is trusted */
	size_t n = strnlen(name, BPROF_COMM_LEN);
	memcpy(buf, name, n);
	buf[n] = '\0';
	/* an empty name would start a folded line with ';' (or leave no frame) */
	return n ? buf : REP_UNKNOWN_FRAME;
}

void rep_thread_frame_name(char *buf, size_t len, const struct bprof_count *c)
{
	size_t n = strnlen(c->comm, BPROF_COMM_LEN);

	snprintf(buf, len, "%.*s (tid %u)", (int)(n ? n : strlen(REP_UNKNOWN_FRAME)),
		 n ? c->comm : REP_UNKNOWN_FRAME, c->tid);
}

bool rep_input_per_thread(const struct rep_input *in)
{
	return in->rec->meta.flags & BPROF_META_PER_THREAD;
}

const char *rep_wframe_missed_name(enum rep_wkind kind)
{
	return kind == REP_W_MISSED_USER     ? "[Missed User Stack]"
	       : kind == REP_W_MISSED_KERNEL ? "[Missed Kernel Stack]"
					     : REP_MISSING_CALLER_FRAME;
}
