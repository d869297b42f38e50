/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The BPF Python frame walk (bpf/python/python_walk.h) in user space, on a live
 * interpreter and on the memory it read, against the interpreter's own
 * view of the same moment.
 *
 * tests/workloads/python/pyreplay.py parks two threads in known frames and
 * prints them (co_qualname, f_lineno, innermost first).  The test finds
 * the interpreter as prof-record does (record/python/pyrec.c on the
 * process's executable mappings), walks each thread with the step over
 * process_vm_readv while capturing every read, names the frames through
 * the recorder's copies of the code objects (pyrec_code, the PYTHON
 * section's lookup and libsym's line table decoder) and compares with the
 * printout, and again after the process has exited, from the copies the
 * BPF walk makes in its event (python_copy_names) alone.  Then it replays the walk on the captured reads alone (same
 * words), and on damaged copies of them: a frame that is its own
 * previous, a previous pointer to unmapped memory, a code object that is
 * not one, an instruction outside its code, a cycle of two frames.  Each
 * ends the walk with its counted reason (the cycle at the depth bound),
 * and never yields a frame that is not one of the true frames.
 *
 * Interpreters: Debian's /usr/bin/python3.11 (required: the test fails
 * without it) and the pyenv 3.11/3.12/3.13 builds where present.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <gelf.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <linux/types.h>

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

#include "bprof.h"
#include "bsym.h"
#include "python/pyrec.h"

struct region {
	uint64_t addr;
	size_t len;
	uint8_t *data;
};

struct env {
	pid_t pid;            /* > 0: read the live process, capturing */
	struct region *r;
	size_t nr, cap;
	uint64_t stats[PYTHON_STAT_MAX];
};

static int env_read(struct env *e, void *dst, size_t len, uint64_t addr)
{
	if (e->pid > 0) {
		struct iovec l = { dst, len }, rm = { (void *)(uintptr_t)addr, len };

		if (process_vm_readv(e->pid, &l, 1, &rm, 1, 0) != (ssize_t)len)
			return -1;
		if (e->nr == e->cap) {
			e->cap = e->cap ? 2 * e->cap : 64;
			e->r = realloc(e->r, e->cap * sizeof(*e->r));
			cr_assert_not_null(e->r);
		}
		e->r[e->nr].addr = addr;
		e->r[e->nr].len = len;
		e->r[e->nr].data = malloc(len);
		memcpy(e->r[e->nr].data, dst, len);
		e->nr++;
		return 0;
	}
	/* replay: the latest capture that covers the read */
	for (size_t i = e->nr; i-- > 0;)
		if (addr >= e->r[i].addr && addr + len <= e->r[i].addr + e->r[i].len) {
			memcpy(dst, e->r[i].data + (addr - e->r[i].addr), len);
			return 0;
		}
	return -1;
}

#define PY_ENV struct env *
#define PY_READ(env, dst, size, addr) env_read((env), (dst), (size), (addr))
#define PY_STAT(env, s) ((env)->stats[(s)]++)
#include "python/python_walk.h"

#define MAX_FRAMES 127

struct walked {
	uint64_t w[2 * MAX_FRAMES];
	uint64_t frame_addr[MAX_FRAMES]; /* the interpreter frame each came from */
	size_t n;
	int last;                        /* the last step's result */
};

/* The whole Python stack of thread tid, every segment, at most
 * MAX_FRAMES steps (the BPF walk's bound: its stack's depth). */
static void walk_thread(struct env *e, const struct python_proc *p, uint32_t tid, struct walked *out)
{
	static struct python_walk w;
	__u64 ts = 0, next, frame = 0;
	int i;

	memset(out, 0, sizeof(*out));
	memset(&w, 0, sizeof(w));
	cr_assert_eq(python_first_thread(e, p, &ts), 0);
	for (i = 0; i < 256 && ts; i++) {
		int r = python_thread_is(e, p, ts, tid, &next);

		cr_assert_geq(r, 0, "thread list unreadable");
		if (r)
			break;
		ts = next;
	}
	cr_assert(ts && i < 256, "thread %u not in the interpreter's list", tid);
	cr_assert_eq(python_current_frame(e, p, ts, &frame), 0);
	w.frame = frame;
	for (int step = 0; step < MAX_FRAMES; step++) {
		__u64 at = w.frame, w0, w1;
		int r = python_step(e, p, &w, &w0, &w1);

		out->last = r;
		if (r == PYTHON_STEP_FRAME || r == PYTHON_STEP_LAST) {
			out->frame_addr[out->n / 2] = at;
			out->w[out->n++] = w0;
			out->w[out->n++] = w1;
		} else if (r == PYTHON_STEP_STOP || !w.frame) {
			break;
		}
	}
}

struct thread_truth {
	uint32_t tid;
	char *frames[64]; /* "qualname line", innermost first */
	int nr;
};

static int read_truth(FILE *f, struct thread_truth *t, int max)
{
	char line[512];
	int n = -1;

	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (!strcmp(line, "READY"))
			return n + 1;
		if (!strncmp(line, "THREAD ", 7)) {
			cr_assert_lt(n + 1, max);
			t[++n].tid = (uint32_t)strtoul(line + 7, NULL, 10);
			t[n].nr = 0;
		} else if (n >= 0 && t[n].nr < 64) {
			t[n].frames[t[n].nr++] = strdup(line);
		}
	}
	return -1;
}

/* Register the process's executable mappings with pyrec as the manifest
 * would (objects by path). */
static void find_interpreter(struct pyrec *py, pid_t pid)
{
	char path[64], line[4200], names[64][4096];
	struct manifest_mapping maps[256];
	uint32_t nr = 0, nobj = 0;
	FILE *f;

	elf_version(EV_CURRENT);
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "r");
	cr_assert_not_null(f);
	while (fgets(line, sizeof(line), f) && nr < 256) {
		unsigned long long s, e, off;
		char perm[8], file[4096] = "";
		uint32_t idx;

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095s", &s, &e, perm, &off, file) < 4 ||
		    perm[2] != 'x' || file[0] != '/')
			continue;
		for (idx = 0; idx < nobj && strcmp(names[idx], file); idx++)
			;
		if (idx == nobj && nobj < 64) {
			int fd = open(file, O_RDONLY);
			Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;

			strcpy(names[nobj++], file);
			pyrec_object(py, idx, elf);
			if (elf)
				elf_end(elf);
			if (fd >= 0)
				close(fd);
		}
		maps[nr++] = (struct manifest_mapping){ s, e, off, idx };
	}
	fclose(f);
	pyrec_image(py, (uint32_t)pid, 0, maps, nr);
}

/* "qualname line" of a frame's words, through the recorder's copy. */
static void name_frame(const struct bprof_recording *rec, pid_t pid, uint64_t w0, uint64_t w1,
		       char *out, size_t len)
{
	const struct bprof_python_code *c =
		bprof_python_code_find(rec, (uint32_t)pid, 0, w0 & BPROF_PY_ADDR_MASK,
				       (uint32_t)(w1 >> BPROF_PY_GUARD_SHIFT));
	int32_t line = -1;

	cr_assert_not_null(c, "no copy of code object 0x%llx", (unsigned long long)w0);
	cr_assert_eq(bsym_python_line(c->linetable, c->linetable_len, c->firstlineno,
				      (int64_t)(w1 & BPROF_PY_OFFSET_MASK) - c->code_offset, &line),
		     0);
	snprintf(out, len, "%s %d", c->qualname, line);
}

/* A damaged copy of the captured reads: the region read at addr. */
static struct region *region_at(struct env *e, uint64_t addr)
{
	for (size_t i = e->nr; i-- > 0;)
		if (e->r[i].addr == addr)
			return &e->r[i];
	return NULL;
}

static void check_prefix(const struct walked *got, const struct walked *truth, const char *what)
{
	cr_assert_leq(got->n, truth->n, "%s: more frames than there are", what);
	for (size_t i = 0; i < got->n; i++)
		cr_assert_eq(got->w[i], truth->w[i], "%s: word %zu is not the true one", what, i);
}

static void run_interpreter(const char *python)
{
	const char *script = BPROF_SRC "/tests/workloads/python/pyreplay.py";
	int in[2], outp[2];
	struct thread_truth truth[4];
	struct python_proc pp;
	struct pyrec *py, *gone;
	struct bprof_recording *rec;
	struct {
		struct python_code_event *ev;
		uint64_t w0, w1;
		const char *truth;
	} fulls[256];
	size_t nfull = 0;
	pid_t pid;
	FILE *out;
	int nt;

	cr_assert_eq(pipe(in), 0);
	cr_assert_eq(pipe(outp), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (!pid) {
		dup2(in[0], 0);
		dup2(outp[1], 1);
		close(in[1]);
		close(outp[0]);
		execl(python, python, script, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(outp[1]);
	out = fdopen(outp[0], "r");
	nt = read_truth(out, truth, 4);
	cr_assert_eq(nt, 2, "%s: no READY from %s", python, script);

	cr_assert_eq(pyrec_create(&py, -1, -1, 1), 0);
	find_interpreter(py, pid);
	cr_assert_eq(pyrec_create(&gone, -1, -1, 1), 0);
	find_interpreter(gone, pid);
	cr_assert_eq(pyrec_walk_info(py, (uint32_t)pid, 0, &pp), 0, "%s: interpreter not found",
		     python);

	for (int t = 0; t < nt; t++) {
		static struct walked live, again, bad;
		struct env e = { .pid = pid };
		char name[4200];

		walk_thread(&e, &pp, truth[t].tid, &live);
		cr_assert_eq(live.n / 2, (size_t)truth[t].nr, "%s thread %u: %zu frames, %d true",
			     python, truth[t].tid, live.n / 2, truth[t].nr);
		for (size_t i = 0; i < live.n; i += 2) {
			struct python_code_event ev = {
				.type = PYTHON_EVENT_CODE, .pid = (uint32_t)pid, .exec_id = 0,
				.guard = (uint32_t)(live.w[i + 1] >> PYTHON_GUARD_SHIFT),
				.code = live.w[i] & PYTHON_ADDR_MASK,
			};
			/* no copies in the event: read from the process */
			pyrec_code(py, &ev, offsetof(struct python_code_event, qualname));

			/* the copies the BPF walk makes, for after the exit */
			struct python_code_event *full = calloc(1, sizeof(*full));
			uint8_t hdr[PYTHON_CODE_READ];

			cr_assert_not_null(full);
			cr_assert_lt(nfull, sizeof(fulls) / sizeof(fulls[0]));
			*full = ev;
			cr_assert_eq(env_read(&e, hdr, sizeof(hdr), ev.code), 0);
			python_copy_names(&e, &pp, hdr, full);
			cr_expect_eq(full->qualname_len, PYTHON_COPY_NAME, "%s: qualname not copied", python);
			cr_expect_gt(full->linetable_len, 0, "%s: line table not copied", python);
			fulls[nfull].ev = full;
			fulls[nfull].w0 = live.w[i];
			fulls[nfull].w1 = live.w[i + 1];
			fulls[nfull].truth = truth[t].frames[i / 2];
			nfull++;
		}
		cr_assert_eq(bprof_recording_create(&rec), 0);
		cr_assert_eq(pyrec_emit(py, rec), 0);
		for (size_t i = 0; i < live.n; i += 2) {
			name_frame(rec, pid, live.w[i], live.w[i + 1], name, sizeof(name));
			cr_expect_str_eq(name, truth[t].frames[i / 2], "%s thread %u frame %zu",
					 python, truth[t].tid, i / 2);
		}
		bprof_recording_free(rec);

		/* the captured reads alone give the same words */
		e.pid = 0;
		walk_thread(&e, &pp, truth[t].tid, &again);
		cr_assert_eq(again.n, live.n);
		cr_assert_eq(memcmp(again.w, live.w, live.n * 8), 0, "%s: replay differs", python);

		/* damage: each a copy of the captured reads, changed once */
		cr_assert_geq(live.n / 2, 3);
		uint64_t f1 = live.frame_addr[1], f2 = live.frame_addr[2];
		struct region *r;
		uint64_t keep;
		uint8_t *cp;

#define DAMAGE(region, off, value, stat, what)                                        \
	do {                                                                             \
		r = (region);                                                            \
		cr_assert_not_null(r, "%s: %s: read not captured", python, what);        \
		memcpy(&keep, r->data + (off), 8);                                       \
		uint64_t v_ = (value);                                                   \
		memcpy(r->data + (off), &v_, 8);                                         \
		memset(e.stats, 0, sizeof(e.stats));                                     \
		walk_thread(&e, &pp, truth[t].tid, &bad);                                \
		memcpy(r->data + (off), &keep, 8);                                       \
		check_prefix(&bad, &live, what);                                         \
		cr_expect_eq(bad.last, PYTHON_STEP_STOP, "%s: %s: not stopped", python, what); \
		cr_expect_eq(e.stats[stat], 1, "%s: %s: not counted", python, what);    \
	} while (0)

		DAMAGE(region_at(&e, f1), pp.off.fr_previous, f1, PYTHON_STAT_STOP_LOOP,
		       "a frame that is its own previous");
		DAMAGE(region_at(&e, f1), pp.off.fr_previous, 0x10, PYTHON_STAT_STOP_READ,
		       "previous in unmapped memory");
		DAMAGE(region_at(&e, live.w[2] & PYTHON_ADDR_MASK), 8, 0x1234, PYTHON_STAT_STOP_NOT_CODE,
		       "a code object that is not one");
		DAMAGE(region_at(&e, f1), pp.off.fr_instr, (live.w[2] & PYTHON_ADDR_MASK) + (1 << 23),
		       PYTHON_STAT_STOP_BAD_INSTR, "an instruction outside its code");
		/* a cycle of two frames: bounded by the depth, counted by the
		 * caller (BPF: stop_depth at the stack's limit) */
		r = region_at(&e, f2);
		cr_assert_not_null(r);
		cp = r->data + pp.off.fr_previous;
		memcpy(&keep, cp, 8);
		memcpy(cp, &f1, 8);
		walk_thread(&e, &pp, truth[t].tid, &bad);
		memcpy(cp, &keep, 8);
		cr_expect_leq(bad.n, 2 * MAX_FRAMES, "%s: a cycle was not bounded", python);
	}
	close(in[1]); /* the script exits on end of file */
	fclose(out);
	waitpid(pid, NULL, 0);
	pyrec_destroy(py);

	/* The process is gone: the names come from the walk's copies alone
	 * (a script's last function, sampled just before it exits). */
	cr_assert_eq(kill(pid, 0), -1, "%s: still running", python);
	for (size_t i = 0; i < nfull; i++)
		pyrec_code(gone, fulls[i].ev, sizeof(*fulls[i].ev));
	cr_assert_eq(bprof_recording_create(&rec), 0);
	cr_assert_eq(pyrec_emit(gone, rec), 0);
	cr_expect_eq(rec->python.counters[PYTHON_STAT_MAX + 2], 0, "%s: codes unreadable", python);
	cr_expect_eq(rec->python.counters[PYTHON_STAT_MAX + 3], 0, "%s: codes read live", python);
	for (size_t i = 0; i < nfull; i++) {
		char name[4200];

		name_frame(rec, pid, fulls[i].w0, fulls[i].w1, name, sizeof(name));
		cr_expect_str_eq(name, fulls[i].truth, "%s: after exit, frame %zu", python, i);
		free(fulls[i].ev);
	}
	bprof_recording_free(rec);
	pyrec_destroy(gone);
}

Test(python_replay, debian_python311)
{
	cr_assert(access("/usr/bin/python3.11", X_OK) == 0,
		  "/usr/bin/python3.11 missing (python3.11 in tools/install-deps.sh)");
	run_interpreter("/usr/bin/python3.11");
}

Test(python_replay, pyenv_versions)
{
	static const char *const v[] = { "3.11.7/bin/python3.11", "3.12.1/bin/python3.12",
					  "3.13.0/bin/python3.13" };
	const char *root = getenv("PYENV_ROOT");
	char path[4096];
	int ran = 0;

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		snprintf(path, sizeof(path), "%s/versions/%s", root ? root : "/root/.pyenv", v[i]);
		if (access(path, X_OK))
			continue; /* per version: absent here */
		run_interpreter(path);
		ran++;
	}
	cr_log_info("%d pyenv interpreters replayed", ran);
}
