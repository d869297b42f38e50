/* SPDX-License-Identifier: Apache-2.0 */
/*
 * prof-report - symbolize .bprof recordings offline and print them as bcc
 * profile's multi-line stacks, folded stacks for flame graphs, or a
 * difference of two recordings.
 *
 * This file runs a report: it reads the files, feeds them to the outputs,
 * talks to the user and maps errors to exit codes; options.c parses the
 * command line, and the work is in adapter.c, render.c, info.c and the
 * libraries.
 */
#define _GNU_SOURCE /* asprintf */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "heap.h"
#include "options.h"

static void log_cb(void *arg, enum bsym_log_level level, const char *msg)
{
	const bool *quiet = arg;

	if (level == BSYM_LOG_WARN && !*quiet) {
		/* libsym's messages quote recorded paths */
		fputs("prof-report: warning: ", stderr);
		rep_fputs_clean(stderr, msg);
		fputc('\n', stderr);
	}
}

/* Progress for large inputs, only on a terminal: a log or a pipe gets
 * nothing.  Rate-limited to a few updates a second. */
struct progress {
	struct timespec last;
	bool shown;
};

static void progress_cb(void *arg, const char *file, uint64_t done, uint64_t total)
{
	struct progress *p = arg;
	struct timespec now;

	if (done == total) { /* this input is done: clear the line */
		if (p->shown)
			fputs("\r\033[K", stderr);
		p->shown = false;
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (done && (now.tv_sec - p->last.tv_sec) * 1000000000L + (now.tv_nsec - p->last.tv_nsec) <
			    250000000L)
		return;
	p->last = now;
	if (done == 0 && total < 20000)
		return; /* small: done before a line would be read */
	fputs("\rprof-report: ", stderr);
	rep_fputs_clean(stderr, file);
	fprintf(stderr, ": %llu of %llu rows symbolized\033[K",
		(unsigned long long)done, (unsigned long long)total);
	p->shown = true;
}

/*
 * The recorded objects behind bsym ids, for the summary: path and build-id
 * of each id as the first file that has it recorded them.  Copied as each
 * file is opened, since the files are closed before the summary is
 * printed; one entry per libsym object, however many files.
 */
struct objnote {
	bool set;
	uint8_t build_id[BPROF_BUILD_ID_MAX];
	size_t build_id_len;
	char *path;
};
static struct objnote *notes;
static size_t nr_notes;

static int note_objects(const struct rep_input *in)
{
	for (uint64_t j = 0; j < in->rec->nr_objects; j++) {
		const struct bprof_object *o = &in->rec->objects[j];
		uint32_t id = in->object_ids[j];

		if (id == BSYM_NO_OBJECT)
			continue;
		if (id >= nr_notes) {
			size_t n = id + 1 > 2 * nr_notes ? id + 1 : 2 * nr_notes;
			struct objnote *v = realloc(notes, n * sizeof(*v));

			if (!v)
				return -ENOMEM;
			memset(v + nr_notes, 0, (n - nr_notes) * sizeof(*v));
			notes = v;
			nr_notes = n;
		}
		if (notes[id].set)
			continue;
		notes[id].build_id_len = o->build_id_len <= BPROF_BUILD_ID_MAX ? o->build_id_len : 0;
		memcpy(notes[id].build_id, o->build_id, notes[id].build_id_len);
		if (!(notes[id].path = strdup(o->path ? o->path : "")))
			return -ENOMEM;
		notes[id].set = true;
	}
	return 0;
}

static void free_notes(void)
{
	for (size_t i = 0; i < nr_notes; i++)
		free(notes[i].path);
	free(notes);
	notes = NULL;
	nr_notes = 0;
}

static void print_summary(struct bsym_ctx *sym, const struct rep_agg *agg,
			  const struct rep_stats *st)
{
	const uint32_t *ids;
	size_t n = rep_agg_unnamed_objects(agg, &ids);
	char hex[2 * BPROF_BUILD_ID_MAX + 1];

	if (st->frames_jit_ambiguous)
		fprintf(stderr, "prof-report: %llu JIT frames printed as " REP_JIT_AMBIGUOUS_FRAME
			": entries of different names cover their address (code freed and its address reused)\n",
			(unsigned long long)st->frames_jit_ambiguous);
	fprintf(stderr, "prof-report: %llu samples, %llu frames, %.1f%% named\n",
		(unsigned long long)st->samples, (unsigned long long)st->frames,
		st->frames ? 100.0 * (double)st->frames_named / (double)st->frames : 100.0);
	for (size_t i = 0; i < n; i++) {
		const struct objnote *o = ids[i] < nr_notes && notes[ids[i]].set ? &notes[ids[i]] : NULL;
		struct bsym_object_info oi = {0};
		/* objects lacking symbols get a line saying why; objects with
		 * symbols but unnamed frames, one saying what would name them */
		if (!o || bsym_object_info(sym, ids[i], &oi) != 0)
			continue;
		rep_hex(hex, o->build_id, o->build_id_len);
		if (oi.status == BSYM_OK) {
			/* symbols, but some frames unnamed and no debuginfo:
			 * internal functions (libc's start frames on a host
			 * without libc6-dbg) print as [object]; say what names them */
			if (oi.has_dwarf || oi.debug_path || !o->build_id_len)
				continue;
			fputs("prof-report: ", stderr);
			rep_fputs_clean(stderr, o->path);
			fprintf(stderr, " has unnamed frames and no debuginfo (build-id %s): its debug "
				"package (-dbg, -dbgsym), --debug-dir or DEBUGINFOD_URLS would name them\n",
				hex);
			continue;
		}
		fputs("prof-report: no symbols for ", stderr);
		rep_fputs_clean(stderr, o->path);
		fprintf(stderr, " (build-id %s): %s\n", o->build_id_len ? hex : "none",
			bsym_reason_str(oi.status));
	}
	if (st->missed_user + st->missed_kernel)
		fprintf(stderr, "WARNING: %llu stack traces could not be displayed.%s\n",
			(unsigned long long)(st->missed_user + st->missed_kernel),
			st->missed_enomem ? " Consider recording with a larger --stack-storage-size." : "");
}

/*
 * What the options ask of a file that it cannot give: --threads of a
 * recording whose counts carry no thread ids.  An error rather than a
 * warning: its rows would go under no thread, or all under one, and a
 * graph that looks per-thread but is not is worse than none.
 */
static int check_input(const struct rep_args *a, const struct rep_input *in)
{
	if (a->cfg.threads && !a->info && !rep_input_per_thread(in)) {
		fputs("prof-report: ", stderr);
		rep_fputs_clean(stderr, in->path);
		fputs(": recorded without per-thread counts: --threads needs a recording made "
		      "with prof-record --per-thread (or -L)\n", stderr);
		return -EINVAL;
	}
	return 0;
}


/* --from/--to on file i's recording, before anything else sees it; the
 * first file of each --diff side starts the count of seconds. */
static void select_time(struct rep_args *a, size_t i, struct bprof_recording *rec)
{
	bool whole;

	if (!a->time.active)
		return;
	if (i == 0 || (a->diff && i == a->nr_before))
		rep_timesel_new_set(&a->time);
	rep_timesel_apply(&a->time, rec, &whole);
	if (whole && !a->said_whole && !a->cfg.quiet) {
		fprintf(stderr, "prof-report: warning: %s has no time slices (recorded with --slice=0 or before them): taken whole though only part of it is in --from/--to\n",
			a->files[i]);
		a->said_whole = true;
	}
}

static int open_input(struct rep_args *a, struct bsym_ctx *sym, struct rep_input *in, size_t i)
{
	char errbuf[512];
	struct bprof_error berr = {0};
	struct bprof_recording *rec = NULL;
	int err = bprof_read_file(&rec, a->files[i], NULL, &berr);

	if (err) {
		memset(&in[i], 0, sizeof(in[i]));
		fprintf(stderr, "prof-report: %s: %s\n", a->files[i],
			berr.message[0] ? berr.message : bprof_strerror(err));
		return err;
	}
	select_time(a, i, rec);
	err = rep_input_adopt(&in[i], sym, rec, a->files[i], errbuf, sizeof(errbuf));
	if (err)
		fprintf(stderr, "prof-report: %s: %s\n", a->files[i], errbuf);
	if (!err && note_objects(&in[i])) {
		fprintf(stderr, "prof-report: out of memory\n");
		err = -ENOMEM;
	}
	return err ? err : check_input(a, &in[i]);
}

/*
 * The first of two passes over many files, for outputs that then read them
 * one at a time and close each once walked (memory then stays what the
 * output holds, however many files): every file read (a few ahead, on
 * another thread), --from/--to applied, checked as open_input would
 * (check_input), its kernel registered (rep_kernel_preregister: the
 * kernel's table then holds every file's symbols before the first lookup,
 * as when all files stayed open), and what pprof's sample types need of
 * the whole set noted; then rep_adapter_kernels_prescanned(true) until the
 * second pass is done.  Files [first, first + n).  0, or non-zero when a
 * file was bad (said).
 */
static int prescan(struct rep_args *a, struct bsym_ctx *sym, size_t first, size_t n, bool *by_freq,
		   bool *offcpu)
{
	struct rep_readahead *ra = NULL;
	int err = rep_readahead_create(&ra, a->files + first, n);

	*by_freq = true;
	*offcpu = false;
	if (err) {
		fprintf(stderr, "prof-report: out of memory\n");
		return err;
	}
	for (size_t i = first; i < first + n && !err; i++) {
		struct bprof_recording *rec;
		char errbuf[512];

		err = rep_readahead_next(ra, &rec, errbuf, sizeof(errbuf));
		if (err) {
			fprintf(stderr, "prof-report: %s: %s\n", a->files[i], errbuf);
			break;
		}
		select_time(a, i, rec);
		if (i == first)
			*by_freq = rep_pprof_by_freq(rec);
		*offcpu |= rec->offcpu.mode != BPROF_OFFCPU_NONE;
		struct rep_input probe = { .path = a->files[i], .rec = rec };
		err = check_input(a, &probe);
		if (!err && (err = rep_kernel_preregister(sym, rec)))
			fprintf(stderr, "prof-report: %s: cannot register kernel: %s\n", a->files[i],
				strerror(-err));
		bprof_recording_free(rec);
	}
	rep_readahead_destroy(ra);
	return err;
}

/* Files whose rows are held in a fold at most: then its rows go into the
 * aggregate and the files are closed (fold_sides).  More per fold walks
 * fewer duplicate rows; fewer holds less memory. */
#define FOLD_HOLD_MAX 16

/*
 * The text outputs: all files into agg[0] (with --diff, BEFORE into agg[0]
 * and AFTER into agg[1]), each file opened and folded in turn.  A file none
 * of whose rows is new to the fold (another recording of the same build
 * and load) is closed at once: holding every parsed recording until the
 * end cost more than reading it (100 copies of a 1 MiB recording: 5 of the
 * 8 ms per file went to memory that stayed in use).  The others are held
 * until FOLD_HOLD_MAX of them are, then their rows go into agg and they
 * are closed (a --rotate directory of a busy machine has new rows in every
 * file).  The files of a set are read a few ahead on another thread
 * (readahead.c).  The first time, the files not yet read are prescan()ned.
 * *bad_file: a file could not be read (already said).
 */

static int fold_sides(struct rep_args *a, struct rep_agg **agg, struct bsym_ctx *sym,
		      struct rep_input *in, struct rep_stats *st, bool *bad_file)
{
	size_t bound[3] = { 0, a->diff ? a->nr_before : a->nr_files, a->nr_files };
	int err = 0;

	*bad_file = false;
	for (size_t side = 0; side < (a->diff ? 2u : 1u) && !err; side++) {
		size_t first = bound[side], n = bound[side + 1] - bound[side];
		struct rep_readahead *ra = NULL;
		struct rep_fold *fold = NULL;
		size_t held = 0; /* files fold's rows point into */
		bool prescanned = false;

		if (n == 1) {
			err = open_input(a, sym, in, first);
			if (err) {
				*bad_file = true;
				return err;
			}
			err = rep_agg_add_inputs(agg[side], &a->cfg, sym, &in[first], 1, st);
			continue;
		}
		err = rep_fold_create(&fold);
		if (!err)
			err = rep_readahead_create(&ra, a->files + first, n);
		for (size_t i = first; i < first + n && !err; i++) {
			struct bprof_recording *rec;
			char errbuf[512];

			err = rep_readahead_next(ra, &rec, errbuf, sizeof(errbuf));
			if (!err)
				select_time(a, i, rec);
			if (!err)
				err = rep_input_adopt(&in[i], sym, rec, a->files[i], errbuf,
						      sizeof(errbuf));
			if (err) {
				fprintf(stderr, "prof-report: %s: %s\n", a->files[i], errbuf);
				*bad_file = true;
				break;
			}
			if ((err = check_input(a, &in[i]))) {
				*bad_file = true;
				break;
			}
			if (note_objects(&in[i])) {
				err = -ENOMEM;
				break;
			}
			err = rep_fold_add_input(fold, &a->cfg, &in[i]);
			if (!err && rep_fold_last_new(fold) == 0)
				rep_input_close(&in[i]);
			else if (!err && ++held == FOLD_HOLD_MAX && i + 1 < first + n) {
				/* the rows so far into agg and their files
				 * closed: agg sums what prints alike, so the
				 * output is the same, and memory is bounded
				 * by it, not by the files.  Before the first
				 * walk, the other files' kernels (prescan) */
				bool by_freq, offcpu;

				if (!prescanned &&
				    prescan(a, sym, i + 1, first + n - (i + 1), &by_freq, &offcpu)) {
					*bad_file = true;
					err = -EINVAL;
					break;
				}
				prescanned = true;
				rep_adapter_kernels_prescanned(true);
				err = rep_agg_add_fold(agg[side], &a->cfg, sym, fold,
						       "the recordings", st);
				rep_fold_destroy(fold);
				fold = NULL;
				for (size_t k = first; k <= i; k++)
					rep_input_close(&in[k]);
				held = 0;
				if (!err)
					err = rep_fold_create(&fold);
			}
		}
		rep_readahead_destroy(ra);
		if (!err)
			err = rep_agg_add_fold(agg[side], &a->cfg, sym, fold, "the recordings", st);
		rep_fold_destroy(fold);
		rep_adapter_kernels_prescanned(false);
	}
	return err;
}

/*
 * The exports, all from one read of the files: each file is read (a few
 * ahead, on another thread), walked by every export asked for, and closed
 * before the next is opened, so that memory is what the outputs hold, not
 * every decoded recording (a day of --rotate files would not fit).  The
 * outputs are written at the end, in the order the options are listed.
 */
/* What run_exports feeds each input to. */
struct exports {
	struct rep_missing *mb;
	struct rep_pprof *pp;
	struct rep_speedscope *ss;
	struct rep_heatmap *hm;
	struct rep_agg *agg[2];
	struct rep_config scfg; /* --svg's */
	struct rep_stats st, sst;
	bool by_freq, offcpu;   /* pprof's sample types (rep_pprof_create) */
	const char *what;       /* the export that failed */
};

/* Walk input i with every export asked for, then close it. */
static int feed(struct rep_args *a, struct exports *x, struct bsym_ctx *sym, struct rep_input *in,
		size_t i)
{
	int err = 0;

	if (a->pprof && !x->pp &&
	    (err = rep_pprof_create(&x->pp, &a->cfg, sym, !a->no_symbolize, x->by_freq, x->offcpu)))
		x->what = a->pprof;
	if (!err && x->mb) {
		x->what = "--missing-buildids";
		err = rep_missing_add(x->mb, in);
	}
	if (!err && x->pp) {
		x->what = a->pprof;
		err = rep_pprof_add(x->pp, in, &x->st);
	}
	if (!err && x->ss) {
		x->what = a->speedscope;
		err = rep_speedscope_add(x->ss, in, NULL);
	}
	if (!err && x->hm) {
		x->what = a->heatmap;
		err = rep_heatmap_add(x->hm, in, NULL);
	}
	if (!err && a->svg) {
		x->what = a->svg;
		err = rep_agg_add_input(x->agg[a->diff && i >= a->nr_before ? 1 : 0], &x->scfg, sym,
					in, &x->sst);
	}
	rep_input_close(in);
	return err;
}

static int run_exports(struct rep_args *a, struct bsym_ctx *sym, FILE *out)
{
	struct exports x = { .scfg = a->cfg, .by_freq = true };
	struct rep_missing *mb = NULL;
	struct rep_pprof *pp = NULL;
	struct rep_speedscope *ss = NULL;
	struct rep_heatmap *hm = NULL;
	struct rep_agg **agg = x.agg;
	struct rep_readahead *ra = NULL;
	/* the first files, held unwalked: a small set is read once */
	struct rep_input held[FOLD_HOLD_MAX];
	size_t nheld = 0;
	bool streaming = false;
	const char *what = NULL;
	int err = 0, ret = 1;

	memset(held, 0, sizeof(held));
	/* --svg: the merged folded stacks, annotated so frame kinds get their hues */
	x.scfg.mode = REP_FOLDED;
	x.scfg.annotate = true;
	if (a->missing_buildids)
		err = rep_missing_create(&x.mb, &a->cfg, sym);
	if (!err && a->speedscope)
		err = rep_speedscope_create(&x.ss, &a->cfg, sym);
	if (!err && a->heatmap)
		err = rep_heatmap_create(&x.hm, &a->cfg, sym);
	for (size_t i = 0; a->svg && i < (a->diff ? 2u : 1u) && !err; i++)
		err = rep_agg_create(&agg[i]);
	if (!err)
		err = rep_readahead_create(&ra, a->files, a->nr_files);
	if (err) {
		fprintf(stderr, "prof-report: %s\n", strerror(-err));
		goto out;
	}
	for (size_t i = 0; i < a->nr_files && !err; i++) {
		struct rep_input *in = &held[streaming ? 0 : nheld];
		struct bprof_recording *rec;
		char errbuf[512];

		err = rep_readahead_next(ra, &rec, errbuf, sizeof(errbuf));
		if (!err) {
			select_time(a, i, rec);
			if (i == 0)
				x.by_freq = rep_pprof_by_freq(rec);
			x.offcpu |= rec->offcpu.mode != BPROF_OFFCPU_NONE;
			err = rep_input_adopt(in, sym, rec, a->files[i], errbuf, sizeof(errbuf));
		}
		if (!err && note_objects(in)) {
			err = -ENOMEM;
			snprintf(errbuf, sizeof(errbuf), "out of memory");
		}
		if (err) {
			fprintf(stderr, "prof-report: %s: %s\n", a->files[i], errbuf);
			goto out;
		}
		if (check_input(a, in))
			goto out;
		if (streaming) {
			err = feed(a, &x, sym, in, i);
			continue;
		}
		if (++nheld < FOLD_HOLD_MAX || i + 1 == a->nr_files)
			continue;
		/* more files than are held: from here on, each is walked and
		 * closed as it is read; the other files' kernels first
		 * (prescan), and what pprof needs of them */
		bool by_freq, offcpu;

		if (prescan(a, sym, i + 1, a->nr_files - (i + 1), &by_freq, &offcpu))
			goto out;
		x.offcpu |= offcpu;
		rep_adapter_kernels_prescanned(true);
		streaming = true;
		for (size_t k = 0; k < nheld && !err; k++)
			err = feed(a, &x, sym, &held[k], i + 1 - nheld + k);
		nheld = 0;
	}
	for (size_t k = 0; k < nheld && !err; k++)
		err = feed(a, &x, sym, &held[k], a->nr_files - nheld + k);
	nheld = 0;
	if (!err && a->pprof && !x.pp &&
	    (err = rep_pprof_create(&x.pp, &a->cfg, sym, !a->no_symbolize, x.by_freq, x.offcpu)))
		x.what = a->pprof;
	what = x.what;
	mb = x.mb;
	pp = x.pp;
	ss = x.ss;
	hm = x.hm;
	if (err)
		goto fail;

	if (!err && mb) {
		what = "--missing-buildids";
		err = rep_missing_write(mb, out);
	}
	if (!err && pp) {
		what = a->pprof;
		err = rep_pprof_write(pp, a->pprof);
	}
	if (!err && ss) {
		what = a->speedscope;
		err = rep_speedscope_write(ss, a->speedscope);
	}
	if (!err && hm) {
		struct rep_heatmap_opts ho = { .title = "Heatmap",
					       .follow_ms = a->follow ? a->follow_ms : 0,
					       .inverted = a->svg_opts.inverted,
					       .min_width = a->min_width_set ? a->svg_opts.min_width : -1,
					       .min_width_pct = a->svg_opts.min_width_pct };

		what = a->heatmap;
		err = rep_heatmap_write(hm, a->heatmap, &ho);
		if (err == -EFBIG) {
			fprintf(stderr, "prof-report: %s: the recordings span too long a time for one page (over 100 million slices): select a range with --from/--to\n",
				a->heatmap);
			goto out;
		}
	}
	if (!err && a->svg) {
		char *buf = NULL;
		size_t len = 0;
		FILE *mem = NULL, *f = NULL;

		what = a->svg;
		if (!(mem = open_memstream(&buf, &len)))
			err = -errno;
		if (!err)
			err = a->diff ? rep_print_diff(mem, agg[0], agg[1], a->normalize)
				      : rep_print(mem, agg[0], &x.scfg);
		if (mem && fclose(mem) != 0 && !err)
			err = -ENOMEM;
		if (!err) {
			f = strcmp(a->svg, "-") == 0 ? out : fopen(a->svg, "w");
			if (!f)
				err = -errno;
		}
		if (!err) {
			struct rep_svg_opts so = a->svg_opts;
			so.diff = a->diff;
			so.threads = a->cfg.threads;
			err = rep_flamegraph_svg(f, buf ? buf : "", len, &so);
		}
		if (f && f != out && fclose(f) != 0 && !err)
			err = -errno;
		free(buf);
		if (!err && !a->cfg.quiet)
			print_summary(sym, agg[a->diff ? 1 : 0], &x.sst);
	}
fail:
	if (err == -EPIPE)
		err = 0;
	if (err)
		fprintf(stderr, "prof-report: %s: %s\n", what, strerror(-err));
	else
		ret = 0;
out:
	rep_adapter_kernels_prescanned(false);
	for (size_t k = 0; k < FOLD_HOLD_MAX; k++)
		rep_input_close(&held[k]);
	rep_readahead_destroy(ra);
	rep_missing_destroy(x.mb);
	rep_pprof_destroy(x.pp);
	rep_speedscope_destroy(x.ss);
	rep_heatmap_destroy(x.hm);
	rep_agg_destroy(agg[0]);
	rep_agg_destroy(agg[1]);
	return ret;
}

static int run(struct rep_args *a, struct bsym_ctx *sym, FILE *out)
{
	struct rep_input *in = calloc(a->nr_files, sizeof(*in));
	struct rep_agg *agg[2] = { NULL, NULL };
	struct rep_stats st = {0};
	int ret = 1, err;
	/* set while writing the report, so a failure names the output */
	const char *writing = NULL;
	const char *out_name = a->output ? a->output : "standard output";

	if (!in) {
		fprintf(stderr, "prof-report: out of memory\n");
		return 1;
	}
	struct rep_share *share = NULL;

	/* --min-share: which threads, from a first pass over every file */
	if (a->min_share > 0 && !a->info) {
		char errbuf[512];
		size_t threads, dropped;
		uint64_t samples, dsamples;

		err = rep_share_select(&share, &a->cfg, a->files, a->nr_files, a->min_share, &a->time,
				       a->diff ? a->nr_before : 0, errbuf, sizeof(errbuf));
		if (err) {
			fprintf(stderr, "prof-report: %s\n", errbuf);
			goto out;
		}
		a->cfg.share = share;
		rep_share_counts(share, &threads, &dropped, &samples, &dsamples);
		if (!a->cfg.quiet)
			fprintf(stderr, "prof-report: --min-share=%g: %zu of %zu threads left out, %llu of %llu samples\n",
				a->min_share, dropped, threads, (unsigned long long)dsamples,
				(unsigned long long)samples);
	}

	/* the text outputs and the exports open their files one at a time
	 * (fold_sides, run_exports) */
	for (size_t i = 0; i < a->nr_files && a->info; i++) {
		if (open_input(a, sym, in, i))
			goto out;
	}

	if (a->info) {
		for (size_t i = 0; i < a->nr_files; i++) {
			if (i)
				fputc('\n', out);
			writing = out_name;
			err = rep_print_info(out, sym, &in[i]);
			if (err)
				goto out_err;
		}
		ret = 0;
		goto out;
	}

	if (a->pprof || a->speedscope || a->svg || a->missing_buildids || a->heatmap) {
		ret = run_exports(a, sym, out);
		goto out;
	}

	size_t nagg = a->diff ? 2 : 1;
	for (size_t i = 0; i < nagg; i++) {
		err = rep_agg_create(&agg[i]);
		if (err)
			goto out_err;
	}
	bool bad_file;
	err = fold_sides(a, agg, sym, in, &st, &bad_file);
	if (bad_file)
		goto out;
	if (err)
		goto out_err;
	writing = out_name;
	err = a->diff ? rep_print_diff(out, agg[0], agg[1], a->normalize)
		      : rep_print(out, agg[0], &a->cfg);
	if (err)
		goto out_err;
	if (!a->cfg.quiet) {
		for (size_t i = 0; i < nagg; i++)
			print_summary(sym, agg[i], &st);
	}
	ret = 0;
	goto out;

out_err:
	if (err == -EPIPE) {
		ret = 0; /* a reader that closes early (| head) is not an error */
	} else {
		if (writing)
			fprintf(stderr, "prof-report: writing %s: %s\n", writing, strerror(-err));
		else
			fprintf(stderr, "prof-report: %s\n", strerror(-err));
		ret = 1;
	}
out:
	for (size_t i = 0; i < 2; i++)
		rep_agg_destroy(agg[i]);
	for (size_t i = 0; i < a->nr_files; i++)
		rep_input_close(&in[i]);
	free(in);
	free_notes();
	a->cfg.share = NULL;
	rep_share_free(share);
	return ret;
}

/* --follow: SIGINT/SIGTERM end the loop between reports. */
static volatile sig_atomic_t follow_stop;

static void follow_signal(int sig)
{
	(void)sig;
	follow_stop = 1;
}

/* What says the directory changed: its files' names, sizes and times. */
static uint64_t dir_signature(char **files, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++) {
		struct stat st;
		uint64_t v[3] = { 0, 0, 0 };

		for (const char *p = files[i]; *p; p++)
			h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
		if (stat(files[i], &st) == 0) {
			v[0] = (uint64_t)st.st_size;
			v[1] = (uint64_t)st.st_mtim.tv_sec;
			v[2] = (uint64_t)st.st_mtim.tv_nsec;
		}
		for (int k = 0; k < 3; k++)
			h = (h ^ v[k]) * 0x100000001b3ull;
	}
	return h;
}

/* Output path p of this round: written under a temporary name and renamed
 * over p when the round is done, so that a reader (the heatmap page
 * reloading itself) never sees half a file. */
static const char *follow_tmp(const char *p, char **tmp)
{
	*tmp = NULL;
	if (!p || strcmp(p, "-") == 0)
		return p;
	if (asprintf(tmp, "%s.follow-tmp", p) < 0) {
		*tmp = NULL;
		return p;
	}
	return *tmp;
}

static int run(struct rep_args *a, struct bsym_ctx *sym, FILE *out);

/*
 * --follow DIR: report on the directory's files, then again whenever they
 * change (prof-record --rotate adds one per interval and --keep removes
 * old ones), until SIGINT or SIGTERM.  Every output is replaced whole each
 * round.  0, or 1 when a round failed and nothing was ever written.
 */
static int follow(struct rep_args *a, struct bsym_ctx *sym)
{
	const char *dir = a->files[0];
	uint64_t last = 0;
	bool any = false, wrote = false;
	struct sigaction sa = { .sa_handler = follow_signal };
	struct stat st;

	if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "prof-report: --follow: %s is not a directory (prof-record --rotate writes one)\n",
			dir);
		return 1;
	}
	if (!a->output && !a->pprof && !a->speedscope && !a->svg && !a->heatmap) {
		fprintf(stderr, "prof-report: --follow rewrites files: give -o FILE or an export (--heatmap FILE, --svg FILE, ...)\n");
		return 2;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	while (!follow_stop) {
		struct rep_args r = *a;
		char *tmp[5];
		const char **outs[5] = { &r.output, &r.pprof, &r.speedscope, &r.svg, &r.heatmap };
		const char *final[5];

		size_t cap = 0;

		r.files = NULL;
		r.nr_files = 0;
		r.files_owned = true;
		r.before = NULL;
		r.nr_before = 0;
		if (rep_opts_list_dir(dir, &r.files, &r.nr_files, &cap) || !r.nr_files) {
			/* unreadable for now, or prof-record has not written yet */
			any = false;
		} else {
			uint64_t sig = dir_signature(r.files, r.nr_files);

			if (!any || sig != last) {
				FILE *out = stdout;
				int ret;

				for (int k = 0; k < 5; k++) {
					final[k] = *outs[k];
					*outs[k] = follow_tmp(*outs[k], &tmp[k]);
				}
				if (r.output && !(out = fopen(r.output, "w"))) {
					fprintf(stderr, "prof-report: cannot write %s: %s\n", r.output,
						strerror(errno));
					ret = 1;
				} else {
					ret = run(&r, sym, out);
					if (out != stdout && fclose(out) != 0)
						ret = 1;
				}
				for (int k = 0; k < 5; k++) {
					if (tmp[k] && ret == 0 && rename(tmp[k], final[k]) != 0) {
						fprintf(stderr, "prof-report: cannot replace %s: %s\n", final[k],
							strerror(errno));
						ret = 1;
					} else if (tmp[k] && ret != 0) {
						unlink(tmp[k]);
					}
					free(tmp[k]);
				}
				if (ret == 0) {
					wrote = true;
					if (!a->cfg.quiet)
						fprintf(stderr, "prof-report: --follow: %zu files reported\n",
							r.nr_files);
				}
				bsym_cache_save(sym);
				last = sig;
				any = true;
			}
			for (size_t i = 0; i < r.nr_files; i++)
				free(r.files[i]);
		}
		free(r.files);
		for (unsigned t = 0; t < a->follow_ms / 100 && !follow_stop; t++)
			usleep(100000);
	}
	return wrote ? 0 : 1;
}

/*
 * The symbol cache's directory: --cache-dir, else $XDG_CACHE_HOME/bprof,
 * else $HOME/.cache/bprof (the XDG base directory rules).  The default is
 * used only if it can be created and written: a user without a writable
 * home gets reports without a cache, not a warning on every run; a
 * --cache-dir the user named is always used (libsym warns if it fails).
 * Returns a malloc'd path, or NULL for no cache.
 */
static char *cache_dir(const struct rep_args *a)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	char *dir = NULL;

	if (a->no_cache)
		return NULL;
	if (a->cache_dir)
		return strdup(a->cache_dir);
	/* XDG: a relative $XDG_CACHE_HOME is invalid and ignored */
	if (xdg && xdg[0] == '/') {
		if (asprintf(&dir, "%s/bprof", xdg) < 0)
			return NULL;
	} else if (home && home[0] == '/') {
		if (asprintf(&dir, "%s/.cache/bprof", home) < 0)
			return NULL;
	} else {
		return NULL;
	}
	if (bsym_cache_dir_ready(dir) != 0) {
		free(dir);
		return NULL;
	}
	return dir;
}

int main(int argc, char **argv)
{
	struct rep_args a = { .cfg.mode = REP_MULTILINE };
	struct bsym_ctx *sym = NULL;
	char *cdir = NULL;
	FILE *out = stdout;
	int ret = 1, err;

	/* A closed pipe is reported by write errors (EPIPE), handled quietly. */
	signal(SIGPIPE, SIG_IGN);
	/* a cold report inflates megabytes of debug sections (heap.h) */
	bprof_heap_tune((size_t)256 << 20);

	/* libsym keeps the ELF and debug files of every object open (up to
	 * two descriptors each) for the life of the report, and a fleet's worth
	 * of recordings can name thousands of objects. */
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}

	if (rep_opts_parse(&a, argc, argv))
		return EXIT_USAGE;
	/* --follow: how often the directory is looked at; the heatmap page
	 * reloads itself as often */
	a.follow_ms = 2000;
	if (getenv("BPROF_FOLLOW_MS"))
		a.follow_ms = (unsigned)strtoul(getenv("BPROF_FOLLOW_MS"), NULL, 10);
	if (a.follow_ms < 100)
		a.follow_ms = 100;
	if (!a.follow && rep_opts_expand_dirs(&a)) {
		free(a.cfg.pids);
		free(a.debug_dirs);
		free(a.files);
		return 1;
	}
	if (a.diff)
		a.cfg.mode = REP_FOLDED;
	/* --no-symbolize reads no debuginfo: nothing to cache */
	cdir = a.no_symbolize ? NULL : cache_dir(&a);

	struct bsym_opts so = {
		.sz = sizeof(so),
		.debug_dirs = a.debug_dirs,
		.nr_debug_dirs = a.nr_debug_dirs,
		.sysroot = a.sysroot,
		.vmlinux = a.vmlinux,
		.flags = a.sym_flags,
		.log = log_cb,
		.log_arg = &a.cfg.quiet,
		.cache_dir = cdir,
	};
	err = bsym_create(&sym, &so);
	if (err) {
		fprintf(stderr, "prof-report: cannot set up symbolization: %s\n", strerror(-err));
		goto out;
	}
	if (a.follow) {
		ret = follow(&a, sym);
		goto out;
	}
	if (a.output) {
		out = fopen(a.output, "w");
		if (!out) {
			fprintf(stderr, "prof-report: cannot write %s: %s\n", a.output, strerror(errno));
			goto out;
		}
	}
	struct progress prog = {0};
	if (isatty(STDERR_FILENO) && !a.cfg.quiet) {
		a.cfg.progress = progress_cb;
		a.cfg.progress_arg = &prog;
	}
	ret = run(&a, sym, out);
	/* what this report learnt, for the next (failures are warnings: a
	 * cache costs only speed) */
	bsym_cache_save(sym);
	if (out != stdout && fclose(out) != 0 && ret == 0) {
		fprintf(stderr, "prof-report: writing %s: %s\n", a.output, strerror(errno));
		ret = 1;
	}
out:
	bsym_destroy(sym);
	rep_adapter_cleanup();
	free(cdir);
	free(a.cfg.pids);
	free(a.debug_dirs);
	for (size_t i = 0; a.files_owned && i < a.nr_files; i++)
		free(a.files[i]);
	free(a.files);
	free(a.before);
	return ret;
}
