// SPDX-License-Identifier: Apache-2.0
/*
 * prof-record - sample on-CPU stacks with BPF, count them in the kernel and
 * write the raw tables plus everything needed to symbolize them elsewhere
 * (mappings, build-ids, kernel identity) into one .bprof file.  Never
 * symbolizes on the target.
 *
 * main reads as the recording goes: options -> checks -> load -> attach ->
 * sample -> dump -> write -> one cleanup label; with --rotate, sample ->
 * dump -> write repeats, one file per interval, while sampling goes on
 * (write_file()).  The rooms it walks through are listed in
 * record/DESIGN.md ("Files").
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "bprof.h"
#include "heap.h"
#include "access.h"
#include "offcpu/offcpu_rec.h"
#include "dump.h"
#include "kernel.h"
#include "knames.h"
#include "runtimes.h"
#include "loader.h"
#include "manifest/manifest.h"
#include "preload.h"
#include "options.h"
#include "preflight.h"
#include "rotate.h"
#include "sampler.h"
#include "status.h"
#include "unwinder.h"

/* Signal state: the only mutable globals.  exiting counts SIGINT/SIGTERM;
 * a second one aborts unless the (atomic) write has already begun.  After
 * the last file's write begins, writing stays set to the end: a signal then
 * must not say "no file written" of a file just written (and exit non-zero),
 * it only waits for the few milliseconds of cleanup. */
static volatile sig_atomic_t exiting;
static volatile sig_atomic_t writing;
static volatile sig_atomic_t rotated; /* --rotate wrote a file already */

static void sig_handler(int sig)
{
	exiting++;
	if (exiting >= 2 && !writing) {
		static const char msg[] = "prof-record: second signal: aborted, no file written\n";
		static const char msg_rot[] = "prof-record: second signal: aborted, the current interval not written (the files before it are complete)\n";
		const char *m = rotated ? msg_rot : msg;
		size_t len = rotated ? sizeof(msg_rot) - 1 : sizeof(msg) - 1;

		if (write(STDERR_FILENO, m, len) < 0) {
			/* nothing to do */
		}
		_exit(128 + sig);
	}
}

/* Start COMMAND stopped on a pipe so its pid can go into the filter before
 * it runs a single instruction of its own. */
static pid_t spawn_command(char **argv, int *release_fd)
{
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		int e = errno;

		close(p[0]);
		close(p[1]);
		return -e;
	}
	if (pid == 0) {
		char c;

		close(p[1]);
		if (read(p[0], &c, 1) != 1)
			_exit(127); /* the recorder gave up */
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		execvp(argv[0], argv);
		fprintf(stderr, "prof-record: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(p[0]);
	*release_fd = p[1];
	return pid;
}

/* ---- the unwinder's tables ------------------------------------------- */

/* Who learns what the manifest learns: the unwinder, and the runtimes'
 * recorder sides (runtimes.h), which need the same objects and mappings. */
struct observers {
	struct loader *ld; /* the runtimes' walks, loaded when first met */
	struct unwinder *unw;
	struct runtime_set *rt;
};

static void obs_object(void *ctx, uint32_t idx, Elf *elf, const struct bprof_object *o)
{
	struct observers *ob = ctx;

	unwinder_object(ob->unw, idx, elf, o);
	runtime_set_object(ob->rt, idx, elf);
}

static void obs_image(void *ctx, uint32_t pid, uint32_t exec_id, uint32_t gen,
		      const struct manifest_mapping *maps, uint32_t nr)
{
	struct observers *ob = ctx;

	unwinder_image(ob->unw, pid, exec_id, gen, maps, nr);
	runtime_set_image(ob->rt, pid, exec_id, maps, nr);
}

static void obs_image_gone(void *ctx, uint32_t pid, uint32_t exec_id)
{
	struct observers *ob = ctx;

	unwinder_image_gone(ob->unw, pid, exec_id);
	runtime_set_image_gone(ob->rt, pid, exec_id);
}

/* the event loop's tick: tables walks asked for, when the budget was
 * spent; the runtimes' own (JVMs whose code cache was not made yet), and
 * the walks of the runtimes met, loaded */
static int unwinder_tick_cb(void *ctx)
{
	struct observers *ob = ctx;
	int ms = unwinder_tick(ob->unw);

	loader_runtimes_tick(ob->ld, runtime_set_tick(ob->rt));
	return ms;
}

/* The end pass of --off-cpu/--wall announced the images of threads still
 * blocked: their mappings are read and their unwind tables loaded (the
 * manifest feeds the unwinder) before their stacks are walked. */
struct end_ctx {
	struct sampler *smp;
	struct manifest *man;
};

static void end_before_walk(void *arg)
{
	struct end_ctx *c = arg;

	/* errors (out of memory) are met again, and reported, by the drain
	 * after the end pass */
	if (!sampler_drain(c->smp))
		manifest_flush(c->man);
}

/* Let the manifest feed the unwinder what it learns: objects and their
 * ELF as it opens them, images' mappings as they change. */
static int start_unwinder(struct loader *ld, struct profile_bpf *obj, struct manifest *man,
			  const struct env *env,
			  struct unwinder **out, struct tabcache **cache, struct runtime_set **rt,
			  struct observers *observers)
{
	struct unwinder_maps um;
	const char *why;
	int err;

	loader_unwinder_maps(obj, env, &um);
	err = unwinder_create(out, &um);

	if (err) {
		fprintf(stderr, "prof-record: cannot map the unwind tables: %s\n", strerror(-err));
		return err;
	}
	/* Without the cache every table is built, as always: a default
	 * directory that cannot be used (not root) is not worth a word; one
	 * asked for is. */
	if (!env->no_table_cache) {
		err = tabcache_open(cache, env->table_cache, &why);
		if (err && (env->table_cache || env->verbose))
			fprintf(stderr, "prof-record: %s: no table cache: %s (%s)\n",
				env->table_cache ? env->table_cache : TABCACHE_DEFAULT_DIR, why,
				strerror(-err));
		unwinder_set_cache(*out, *cache);
	}
	err = runtime_set_create(rt, ld);
	if (err)
		return err;
	observers->ld = ld;
	observers->unw = *out;
	observers->rt = *rt;
	struct manifest_observer obs = {
		.ctx = observers,
		.object = obs_object,
		.image = obs_image,
		.image_gone = obs_image_gone,
	};
	manifest_set_observer(man, &obs);
	return 0;
}

/* What writing one file needs of the recording that goes on. */
struct recorder {
	const struct env *env;
	struct profile_bpf *obj;
	struct manifest *man;
	struct unwinder *unw;
	struct runtime_set *rt;         /* the runtimes' frames' names, or NULL */
	struct sampler *smp;
	bool cfi;
	int nr_cpus, nr_sampled;
	const char *event;
	const char *options;
	struct bprof_access acc;        /* as probed before sampling */
	struct kernel_cache *kcache;    /* --rotate: kallsyms read once, mostly */
	struct knames *kn;              /* kernel addresses named in the kernel */
	bool kn_tried;
	bool kn_able;                   /* the kernel runs syscall programs (knames) */
	struct dump_base base;          /* the BPF counters earlier files carried */
	uint64_t slice_origin;          /* --slice: CLOCK_REALTIME at slice 0 */
	struct manifest_stats mst_base; /* the ACCESS counters earlier files carried */
	bool hidden_said;
	uint64_t samples_written;       /* over all files */
	uint64_t samples_unwritten;     /* in files that could not be written */
	uint64_t files_failed;
	bool access_failed;
	uint32_t meta_lacks;            /* BPROF_META_NO_*: what the kernel could not give */
	const struct loader *ld;        /* and the runtimes' walks it could not load */
};

/*
 * Dump set gen of the maps (quiet: no sample adds to it any more) and what
 * the manifest knows of its images into one recording, and write it to
 * output.  0: written; 1: not written, said why (a second signal, a full
 * disk, ...); -ENOMEM.
 */
static int write_file(struct recorder *r, unsigned gen, const char *output, uint64_t start_real,
		      uint64_t duration_ns)
{
	struct bprof_recording *rec = NULL;
	struct bprof_write_opts wopts = { .sz = sizeof(wopts) };
	struct bprof_error berr = {0};
	struct dump_totals tot = {0};
	struct manifest_stats mst;
	char *options = strdup(r->options);
	bool hidden = false;
	int err;

	if (!options || bprof_recording_create(&rec))
		goto nomem;
	if (dump_counts(r->obj, gen, rec, r->man, &tot))
		goto nomem;
	/* every file of a --rotate run has the same origin: they join into
	 * one timeline */
	rec->slices.slice_ns = (uint64_t)r->env->slice_ms * 1000000ULL;
	rec->slices.origin_ns = rec->slices.slice_ns ? r->slice_origin : 0;
	dump_losses(r->obj, &rec->losses, r->nr_cpus, &r->base);
	if (!r->env->kernel_only)
		dump_unwind(rec, r->obj, r->env, r->cfi, r->unw, r->nr_cpus, &r->base);
	offcpu_dump(r->obj, &rec->offcpu, r->nr_cpus, r->base.offcpu);
	/* the snapshot's symbols asked of kallsyms address by address, not
	 * read from all of /proc/kallsyms (knames.h), where the kernel can */
	if (!r->kn_tried && !r->env->no_kallsyms && !r->env->full_kallsyms && kernel_sampled(rec)) {
		r->kn_tried = true;
		err = r->kn_able ? knames_open(&r->kn) : -EOPNOTSUPP;
		if (!r->kn_able && r->env->verbose)
			fprintf(stderr, "prof-record: this kernel lacks %s: kernel addresses are named from /proc/kallsyms\n",
				kfeat_describe(KFEAT_SYSCALL_PROG));
		else if (err && r->env->verbose)
			fprintf(stderr, "prof-record: cannot name kernel addresses in the kernel (%s): reading /proc/kallsyms\n",
				strerror(-err));
	}
	struct kernel_namer namer = r->kn ? knames_namer(r->kn) : (struct kernel_namer){0};

	if (manifest_emit(r->man, rec, &rec->losses.manifest_lost) ||
	    runtime_set_emit(r->rt, rec) ||
	    (r->unw && dump_unwind_misses(rec, r->unw, r->man)) ||
	    kernel_collect_for(&rec->kernel, rec, !r->env->no_kallsyms, r->env->full_kallsyms,
			       r->kcache, r->kn ? &namer : NULL, &hidden))
		goto nomem;
	/* access_check() said so before sampling unless it changed since */
	if (hidden && (r->acc.flags & BPROF_ACCESS_KALLSYMS) && !r->hidden_said) {
		fprintf(stderr, "prof-record: kernel addresses are hidden (kernel.kptr_restrict); no kallsyms snapshot, kernel frames may stay unsymbolized\n");
		r->hidden_said = true;
	}
	rec->access = r->acc;
	if (hidden)
		rec->access.flags &= ~BPROF_ACCESS_KALLSYMS;
	manifest_stats(r->man, &mst);
	rec->access.counters[BPROF_ACC_OBJECTS_BY_PATH] =
		mst.objects_by_path - r->mst_base.objects_by_path;
	rec->access.counters[BPROF_ACC_OBJECTS_UNVERIFIED] =
		mst.objects_unverified - r->mst_base.objects_unverified;
	rec->access.counters[BPROF_ACC_OBJECTS_DENIED] =
		mst.objects_denied - r->mst_base.objects_denied;
	rec->access.counters[BPROF_ACC_PROCESSES_DENIED] =
		mst.procs_denied - r->mst_base.procs_denied;
	r->mst_base = mst;

	if (dump_meta(&rec->meta, r->env, &options, r->event, start_real, duration_ns,
		      r->nr_sampled))
		goto nomem;
	rec->meta.flags |= r->meta_lacks | loader_runtimes_lacking(r->ld);

	writing = 1;
	if (exiting >= 2) {
		fprintf(stderr, "prof-record: second signal: aborted, %s\n",
			rotated ? "the current interval not written (the files before it are complete)" :
				  "no file written");
		goto unwritten;
	}
	wopts.flags = r->env->force ? 0 : BPROF_WRITE_NO_CLOBBER;
	wopts.mode = 0600;
	struct stat before;
	bool existed = lstat(output, &before) == 0;

	err = bprof_write_file(rec, output, &wopts, &berr);
	if (err) {
		struct stat after;
		/* The last step, syncing the directory, can fail after the file
		 * took its name: then the file is there (but may not survive a
		 * crash), and "nothing written" would be a lie. */
		bool placed = lstat(output, &after) == 0 &&
			      (!existed || after.st_ino != before.st_ino || after.st_dev != before.st_dev);
		if (err == BPROF_E_IO && placed) {
			fprintf(stderr, "prof-record: wrote %s, but syncing its directory failed: %s; the file may not survive a crash\n",
				output, strerror(berr.sys_errno));
			r->samples_written += tot.samples;
		} else if (err == BPROF_E_EXISTS)
			fprintf(stderr, "prof-record: %s appeared meanwhile; not replaced (use --force); nothing written\n", output);
		else if (err == BPROF_E_IO)
			fprintf(stderr, "prof-record: cannot write %s: %s%s; nothing written\n", output,
				strerror(berr.sys_errno),
				berr.sys_errno == ENOSPC || berr.sys_errno == EDQUOT ? " (disk full: free space or write elsewhere with -o)" : "");
		else
			fprintf(stderr, "prof-record: cannot write %s: %s: %s\n", output,
				bprof_strerror(err), berr.message);
		if (placed)
			goto written;
		goto unwritten;
	}
	r->samples_written += tot.samples;
	status_report(r->env, rec, &tot, &mst, sampler_events(r->smp), output);
	if (access_report(&rec->access, rec)) {
		/* written (kernel stacks and counts may still help), but a
		 * privilege problem must not pass as success */
		fprintf(stderr, "prof-record: error: no sampled object could be identified with this recorder's privileges: the user stacks in %s cannot be symbolized (see the warnings above)\n",
			output);
		r->access_failed = true;
	}
	bprof_recording_free(rec);
	return 0;
written:
	bprof_recording_free(rec);
	r->files_failed++;
	return 1;
unwritten:
	r->samples_unwritten += tot.samples;
	r->files_failed++;
	bprof_recording_free(rec);
	return 1;
nomem:
	fprintf(stderr, "prof-record: out of memory\n");
	free(options);
	bprof_recording_free(rec);
	return -ENOMEM;
}

/* --rotate, at an interval's end: samples go on into the other set while
 * this one is written, then emptied for the interval after next. */
static int next_interval(struct recorder *r, struct rotate *rot, uint64_t start_real,
			 uint64_t start_mono)
{
	const char *path;
	unsigned old;
	int err;

	/* before the flip: an image dead by now cannot be in later counts */
	manifest_boundary(r->man);
	old = sampler_flip(r->smp);
	if (manifest_flush(r->man))
		goto nomem;
	path = rotate_next_path(rot, start_real);
	if (!path)
		goto nomem;
	err = write_file(r, old, path, start_real, sampler_mono_ns() - start_mono);
	writing = 0; /* sampling goes on: a second signal may abort again */
	if (err < 0)
		return err;
	if (!err) {
		rotate_written(rot, r->env->quiet);
		rotated = 1;
	}
	err = dump_clear(r->obj, old);
	if (err) {
		fprintf(stderr, "prof-record: cannot empty the BPF maps for the next interval: %s\n",
			strerror(-err));
		return err;
	}
	if (manifest_next_file(r->man))
		goto nomem;
	if (r->env->verbose)
		fprintf(stderr, "prof-record: %zu process images held for the next file\n",
			manifest_images(r->man));
	return 0;
nomem:
	fprintf(stderr, "prof-record: out of memory\n");
	return -ENOMEM;
}

int main(int argc, char **argv)
{
	struct env env;
	struct profile_bpf *obj = NULL;
	struct loader *ld = NULL;
	struct sampler *smp = NULL;
	struct manifest *man = NULL;
	struct unwinder *unw = NULL;
	struct runtime_set *rt = NULL;
	struct observers observers = { 0 };
	struct tabcache *tcache = NULL;
	struct rotate *rot = NULL;
	struct sampler_run run = { .exiting = &exiting };
	struct recorder r = {0};
	struct sigaction sa = { .sa_handler = sig_handler };
	char *output = NULL, *options = NULL;
	const char *event = "cpu-clock";
	int nr_cpus = 0, nr_sampled = 0, release_fd = -1, err = 0;
	int cgroup_fd = -1, exit_code = 1;
	struct bprof_access acc = {0};
	bool cfi = false;
	uint64_t start_mono, start_real, stop_mono;

	/* libbpf copies the kernel's BTF and the unwind tables are built in
	 * fresh memory: huge pages make that a few faults (heap.h) */
	bprof_heap_tune((size_t)128 << 20);
	err = opts_parse(&env, argc, argv);
	if (err)
		return err;
	options = opts_join_args(argc, argv);
	output = env.output ? strdup(env.output) : opts_default_output(env.rotate > 0);
	if (!options || !output) {
		fprintf(stderr, "prof-record: out of memory\n");
		goto cleanup;
	}

	/* Everything that can be checked is checked before recording. */
	if (preflight_check(&env, output))
		goto cleanup;
	if (env.rotate && rotate_create(&rot, output, env.keep, env.max_disk))
		goto cleanup;
	if (env.rotate && kernel_cache_create(&r.kcache)) {
		fprintf(stderr, "prof-record: out of memory\n");
		goto cleanup;
	}
	/* What this recorder may read decides what the file can name: say
	 * before sampling what it will lack (access.h). */
	access_probe(&acc);
	if (access_check(&acc, env.pids, env.nr_pids,
			 !env.nr_pids && !env.nr_tids && !env.cgroup && !env.command,
			 !env.kernel_only, !env.user_only))
		goto cleanup;
	if (env.cgroup) {
		cgroup_fd = open(env.cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (cgroup_fd < 0) {
			fprintf(stderr, "prof-record: cannot open cgroup %s: %s; give a cgroup v2 directory such as /sys/fs/cgroup/system.slice\n",
				env.cgroup, strerror(errno));
			goto cleanup;
		}
	}
	nr_cpus = libbpf_num_possible_cpus();
	if (nr_cpus <= 0) {
		fprintf(stderr, "prof-record: cannot count the possible CPUs\n");
		goto cleanup;
	}
	if (env.cpu >= nr_cpus) {
		fprintf(stderr, "prof-record: no CPU %d (this machine has %d)\n", env.cpu, nr_cpus);
		goto cleanup;
	}
	if (env.rotate && nr_cpus > PROFILE_MAX_CPUS) {
		fprintf(stderr, "prof-record: --rotate follows at most %d CPUs; this machine has %d\n",
			PROFILE_MAX_CPUS, nr_cpus);
		goto cleanup;
	}

	/* The command is forked now, while this process is small, and waits
	 * on release_fd.  Forked after loading, every page the recorder then
	 * wrote (the command's unwind tables are built before it runs) was a
	 * copy-on-write fault and a TLB flush on every CPU: ~15 % of the
	 * fixed cost of prof-record -- true. */
	if (env.command) {
		run.child = spawn_command(env.command, &release_fd);
		if (run.child < 0) {
			fprintf(stderr, "prof-record: cannot fork: %s\n", strerror(-run.child));
			run.child = 0;
			goto cleanup;
		}
	}

	loader_set_log(env.verbose);
	ld = loader_open(&env, &cfi, &err);
	if (!ld) {
		/* -EOPNOTSUPP: the loader said what the kernel lacks */
		if (err != -EOPNOTSUPP)
			fprintf(stderr, "prof-record: cannot load the BPF program: %s; needs Linux 5.8+ with BPF, BTF and CONFIG_BPF_EVENTS (run with -v for libbpf's log)\n",
				strerror(-err));
		goto cleanup;
	}
	obj = loader_skeleton(ld);
	if (loader_set_filters(obj, &env, cgroup_fd))
		goto cleanup;

	start_mono = sampler_mono_ns();
	err = manifest_new(&man, loader_exec_gen_fd(obj),
			   loader_map_gens_fd(ld), start_mono);
	if (err) {
		fprintf(stderr, "prof-record: out of memory\n");
		goto cleanup;
	}
	if (cfi && start_unwinder(ld, obj, man, &env, &unw, &tcache, &rt, &observers))
		goto cleanup;
	if (sampler_create(&smp, obj, loader_sampler_fd(ld), man, nr_cpus))
		goto cleanup;
	sampler_set_runtimes(smp, rt);
	if (loader_attach(ld, &env))
		goto cleanup;

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	if (env.command) {
		loader_follow(obj, run.child);
		/* the command waits for release_fd: build the tables of its
		 * program and libraries now, not in its first milliseconds */
		if (unw) {
			size_t n = preload_command(man, env.command[0]);

			unwinder_flush(unw); /* placed before it starts too */

			if (env.verbose)
				fprintf(stderr, "prof-record: %zu objects of %s opened before it starts\n", n,
					env.command[0]);
		}
	}

	/* --slice: slice 0 starts here, in both clocks (the kernel counts in
	 * CLOCK_MONOTONIC, the file says CLOCK_REALTIME) */
	if (env.slice_ms) {
		sampler_slice_base(smp, sampler_mono_ns());
		r.slice_origin = sampler_real_ns();
	}
	if (sampler_start(smp, &env, &nr_sampled, &event))
		goto cleanup;

	/* threads blocked since before the recording count from its start */
	err = offcpu_start(obj, loader_prog_fd(ld, offcpu_start_prog(obj)));
	if (err)
		fprintf(stderr, "prof-record: warning: cannot count the blocks under way at the start (%s): threads blocked since before it count from their first switch\n",
			strerror(-err));
	if (!env.quiet)
		status_header(&env);
	start_mono = sampler_mono_ns();
	start_real = sampler_real_ns();
	if (release_fd >= 0) {
		if (write(release_fd, "g", 1) != 1) {
			fprintf(stderr, "prof-record: cannot start %s\n", env.command[0]);
			goto cleanup;
		}
		close(release_fd);
		release_fd = -1;
	}

	r = (struct recorder){
		.env = &env, .obj = obj, .man = man, .unw = unw, .rt = rt, .smp = smp, .cfi = cfi,
		.nr_cpus = nr_cpus, .nr_sampled = nr_sampled, .event = event,
		.options = options, .acc = acc, .kcache = r.kcache,
		.kn_able = loader_kernel_has(ld, KFEAT_SYSCALL_PROG),
		.slice_origin = r.slice_origin,
		/* said in the file too, not only at the start (META flags) */
		.ld = ld,
		.meta_lacks = (!env.kernel_only && !loader_tracks_gens(ld) ? BPROF_META_NO_GENERATIONS : 0) |
			      /* the kernel's lack, not --no-* or a recording
			       * that meets no such runtime (runtimes.h); the
			       * tail walk's Python frames: loader_runtimes_lacking() */
			      (cfi && !env.no_v8 && !env.kernel_only && loader_walks_by_tail_calls(obj)
				       ? BPROF_META_NO_V8_WALK : 0) |
			      (cfi && !env.no_jvm && !env.kernel_only && loader_walks_by_tail_calls(obj)
				       ? BPROF_META_NO_JVM_WALK : 0),
	};
	run.start_ns = start_mono;
	run.duration = env.duration;
	if (unw) {
		run.tick = unwinder_tick_cb;
		run.tick_ctx = &observers;
	}
	/* --rotate's boundaries keep to their schedule (first + k x SECONDS):
	 * the time a file takes to write is not added to every interval */
	uint64_t next_ns = start_mono;

	for (;;) {
		if (env.rotate) {
			uint64_t now = sampler_mono_ns();

			do
				next_ns += env.rotate * 1000000000ULL;
			while (next_ns <= now); /* a write that took longer than SECONDS */
			run.until_ns = next_ns;
		}
		run.boundary = false;
		if (sampler_run(smp, &run))
			goto cleanup;
		if (!run.boundary)
			break;
		/* the next interval starts at the flip, inside next_interval */
		uint64_t next_real = sampler_real_ns(), next_mono = sampler_mono_ns();

		if (next_interval(&r, rot, start_real, start_mono) == -ENOMEM)
			goto cleanup;
		if (exiting >= 2)
			goto cleanup; /* said by write_file() */
		start_real = next_real;
		start_mono = next_mono;
	}
	if (run.child && exiting && !run.child_done)
		kill(run.child, SIGTERM); /* a signal to us ends the command too */

	/* Stop sampling, then drain what the kernel already queued. */
	sampler_stop(smp);
	stop_mono = sampler_mono_ns();
	/* the blocks still under way count up to the end, in the last file */
	{
		uint64_t found, left, walked;

		struct end_ctx ec = { smp, man };

		err = offcpu_end(obj, loader_prog_fd(ld, offcpu_end_prog(obj)), end_before_walk,
				 &ec, &found, &left, &walked);
		if (err)
			fprintf(stderr, "prof-record: warning: cannot count the blocks under way at the end (%s): threads still blocked have no samples for them\n",
				strerror(-err));
		else if (left)
			fprintf(stderr, "prof-record: warning: %llu thread states left after the end pass\n",
				(unsigned long long)left);
		if (env.verbose && offcpu_enabled(obj))
			fprintf(stderr, "prof-record: off-CPU: %llu thread states at the end, %llu user stacks of blocked threads walked, %llu left\n",
				(unsigned long long)found, (unsigned long long)walked,
				(unsigned long long)left);
	}
	if (sampler_drain(smp) || manifest_flush(man) || manifest_rescan(man)) {
		fprintf(stderr, "prof-record: out of memory\n");
		goto cleanup;
	}
	runtime_set_tick(rt); /* what was met after the last tick */
	if (rot) {
		const char *path = rotate_next_path(rot, start_real);

		err = path ? write_file(&r, sampler_gen(smp), path, start_real, stop_mono - start_mono) :
			     -ENOMEM;
		if (!err)
			rotate_written(rot, env.quiet);
	} else {
		err = write_file(&r, 0, output, start_real, stop_mono - start_mono);
	}
	if (err < 0 || (!rot && err))
		goto cleanup;

	/* Every sample the BPF program counted is in a file, or was in one
	 * that could not be written: the boundaries between --rotate's files
	 * lose nothing, and this says so when it is not true. */
	uint64_t counted = r.base.losses[PROFILE_STAT_COUNTED];

	if (counted != r.samples_written + r.samples_unwritten)
		fprintf(stderr, "prof-record: warning: the kernel counted %llu samples, the files hold %llu (%llu more in files not written)\n",
			(unsigned long long)counted, (unsigned long long)r.samples_written,
			(unsigned long long)r.samples_unwritten);
	if (rot && !env.quiet)
		fprintf(stderr, "prof-record: %llu files written into %s (%llu kept), %llu samples%s\n",
			(unsigned long long)rotate_files_written(rot), output,
			(unsigned long long)rotate_files_kept(rot), (unsigned long long)r.samples_written,
			r.files_failed ? "; some intervals could not be written (see above)" : "");
	if (env.verbose)
		fprintf(stderr, "prof-record: %llu samples counted in the kernel, %llu in the files, %llu in files not written\n",
			(unsigned long long)counted, (unsigned long long)r.samples_written,
			(unsigned long long)r.samples_unwritten);
	if (env.verbose)
		loader_report_runs(ld);
	if (offcpu_unseen(obj, nr_cpus))
		fprintf(stderr, "prof-record: warning: %llu off-CPU blocks ended unseen (the kernel skipped %llu runs of the switch program): their samples are counted without stacks\n",
			(unsigned long long)offcpu_unseen(obj, nr_cpus),
			(unsigned long long)loader_prog_misses(ld, offcpu_switch_prog(obj)));
	if (unw && env.verbose)
		status_unwinder(unw, obj, nr_cpus);
	if (unw)
		status_unwind_misses(unw, man);
	exit_code = r.files_failed || r.access_failed ? 1 : 0;
	if (run.child) {
		if (!run.child_done) {
			/* give the command a moment to act on the signal (a
			 * second signal cuts it short: the file is written) */
			for (int i = 0; i < 20 && !run.child_done && exiting < 2; i++) {
				if (waitpid(run.child, &run.status, WNOHANG) == run.child)
					run.child_done = true;
				else
					usleep(50000);
			}
		}
		if (exit_code == 0 && run.child_done)
			exit_code = WIFEXITED(run.status) ? WEXITSTATUS(run.status) : 128 + WTERMSIG(run.status);
		else if (exit_code == 0)
			exit_code = 130;
		run.child = 0;
	}

cleanup:
	if (release_fd >= 0)
		close(release_fd); /* the command never starts */
	if (run.child) {
		kill(run.child, SIGKILL);
		waitpid(run.child, NULL, 0);
	}
	sampler_destroy(smp);
	manifest_free(man);
	unwinder_destroy(unw);
	runtime_set_destroy(rt);
	if (tcache && env.verbose) {
		struct tabcache_stats ts;

		tabcache_stats(tcache, &ts);
		fprintf(stderr, "prof-record: table cache: %llu tables read, %llu built and written, %llu rejected, %llu evicted\n",
			(unsigned long long)ts.hits, (unsigned long long)ts.written,
			(unsigned long long)ts.rejected, (unsigned long long)ts.evicted);
	}
	tabcache_close(tcache);
	loader_destroy(ld);
	rotate_destroy(rot);
	kernel_cache_destroy(r.kcache);
	knames_close(r.kn);
	if (cgroup_fd >= 0)
		close(cgroup_fd);
	free(output);
	free(options);
	return exit_code;
}
