// SPDX-License-Identifier: Apache-2.0
/*
 * sampler.c - the perf events, the ring buffer and the recording loop
 * (sampler.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "sampler.h"
#include "runtimes.h"
#include "profile.h"
#include "profile.skel.h"
#include "unwind/unwind.h"

#define RESCAN_NS 1000000000ULL

/* What the ring buffer's callback fills in. */
struct poll_ctx {
	struct manifest *man;
	struct runtime_set *rt;  /* the runtimes' recorder sides, or NULL */
	int err;
	uint64_t events;
};

struct sampler {
	struct profile_bpf *obj;
	int prog_fd;             /* the perf_event program (loader.h) */
	int nr_cpus;
	int *fds;                /* per possible CPU, -1 where none */
	int *links;              /* BPF link per possible CPU, -1 where none */
	struct ring_buffer *rb;
	struct poll_ctx pc;
};

uint64_t sampler_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

uint64_t sampler_real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* Parse /sys/devices/system/cpu/online ("0-3,5"). */
static int online_cpus(bool **online, int *nr)
{
	char buf[4096], *s = buf, *end;
	FILE *f = fopen("/sys/devices/system/cpu/online", "re");
	bool *mask = NULL;
	int n = 0;

	*online = NULL;
	*nr = 0;
	if (!f)
		return -errno;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return -EINVAL;
	}
	fclose(f);
	while (*s && *s != '\n') {
		long a = strtol(s, &end, 10), b = a;

		if (end == s || a < 0 || a > 65535)
			goto bad;
		s = end;
		if (*s == '-') {
			b = strtol(s + 1, &end, 10);
			if (end == s + 1 || b < a || b > 65535)
				goto bad;
			s = end;
		}
		if (b + 1 > n) {
			bool *nm = realloc(mask, (b + 1) * sizeof(*mask));

			if (!nm)
				goto bad;
			memset(nm + n, 0, (b + 1 - n) * sizeof(*nm));
			mask = nm;
			n = b + 1;
		}
		for (long i = a; i <= b; i++)
			mask[i] = true;
		if (*s == ',')
			s++;
	}
	*online = mask;
	*nr = n;
	return 0;
bad:
	free(mask);
	return -EINVAL;
}

/* -e cycles: is the hardware event there?  VMs often have no PMU. */
static bool hw_cycles_available(struct perf_event_attr *attr, int cpu)
{
	int fd = syscall(__NR_perf_event_open, attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/*
 * Attach the program to one perf event by fd: the program may come from
 * the loader program (loader.h), which libbpf's bpf_program knows nothing
 * of.  A BPF link where the kernel has them (5.15), else the perf ioctl;
 * either is undone by closing *link (-1 for the ioctl) and the event.
 */
static int attach_perf_event(int prog_fd, int pfd, int *link)
{
	*link = bpf_link_create(prog_fd, pfd, BPF_PERF_EVENT, NULL);
	if (*link >= 0)
		return 0;
	if (ioctl(pfd, PERF_EVENT_IOC_SET_BPF, prog_fd) || ioctl(pfd, PERF_EVENT_IOC_ENABLE, 0))
		return -1;
	return 0;
}

/* Whether kernel.perf_event_paranoid is above 2 (unreadable: no). */
static bool paranoid_above_2(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");
	int level = 0;

	if (!f)
		return false;
	if (fscanf(f, "%d", &level) != 1)
		level = 0;
	fclose(f);
	return level > 2;
}


/* One perf event per online CPU (or the -C one), the BPF program attached
 * to each.  *event is the name of the event really used. */
int sampler_start(struct sampler *s, const struct env *env, int *opened, const char **event)
{
	int *links = s->links;
	int *fds = s->fds, nr_cpus = s->nr_cpus;
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.size = sizeof(attr),
		.sample_freq = env->period ? (uint64_t)env->period : (uint64_t)env->freq,
		.freq = env->period ? 0 : 1,
	};
	bool *online = NULL;
	int nr_online = 0;

	if (online_cpus(&online, &nr_online)) {
		fprintf(stderr, "prof-record: cannot read the online CPUs from /sys/devices/system/cpu/online\n");
		return -EINVAL;
	}
	*event = "cpu-clock";
	if (env->cycles) {
		int first = env->cpu;

		for (int c = 0; first < 0 && c < nr_online; c++)
			if (online[c])
				first = c;
		attr.type = PERF_TYPE_HARDWARE;
		attr.config = PERF_COUNT_HW_CPU_CYCLES;
		if (hw_cycles_available(&attr, first < 0 ? 0 : first)) {
			*event = "cycles";
		} else {
			fprintf(stderr, "prof-record: the hardware cycles event is not available here (%s; no PMU, as in most VMs): sampling on cpu-clock instead%s\n",
				strerror(errno), env->period ? " (-c counts ns now)" : "");
			attr.type = PERF_TYPE_SOFTWARE;
			attr.config = PERF_COUNT_SW_CPU_CLOCK;
		}
	}
	*opened = 0;
	for (int cpu = 0; cpu < nr_cpus; cpu++) {
		if (env->cpu >= 0 && cpu != env->cpu)
			continue;
		if (cpu >= nr_online || !online[cpu])
			continue;
		fds[cpu] = syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fds[cpu] < 0) {
			int e = errno;

			if (e == ENODEV)
				continue; /* went offline meanwhile */
			fprintf(stderr, "prof-record: perf_event_open(%s, cpu %d): %s; %s\n", *event, cpu,
				strerror(e),
				e == ENOENT || e == EOPNOTSUPP ?
					"this kernel lacks the event (CONFIG_PERF_EVENTS)" :
				(e == EACCES || e == EPERM) && paranoid_above_2() ?
					/* Debian's and Ubuntu's kernels: level 3, a
					 * patch of theirs, which lets only
					 * CAP_SYS_ADMIN open perf events */
					"kernel.perf_event_paranoid is above 2 (Debian's and Ubuntu's default), which lets only root open perf events: run as root, or sysctl kernel.perf_event_paranoid=2 for CAP_PERFMON to do" :
				e == EACCES || e == EPERM ?
					"run as root or grant CAP_PERFMON (and check kernel.perf_event_paranoid)" :
				e == EMFILE ? "raise the open files limit (ulimit -n)" :
					"cannot sample here");
			free(online);
			return -e;
		}
		if (attach_perf_event(s->prog_fd, fds[cpu], &links[cpu])) {
			int e = errno;

			fprintf(stderr, "prof-record: cannot attach the BPF program to cpu %d: %s\n", cpu,
				strerror(e));
			free(online);
			return -e;
		}
		(*opened)++;
	}
	free(online);
	if (!*opened) {
		fprintf(stderr, "prof-record: no CPU to sample%s\n",
			env->cpu >= 0 ? ": the -C CPU is not online" : "");
		return -ENODEV;
	}
	return 0;
}

static int handle_event(void *ctx, void *data, size_t size)
{
	struct poll_ctx *pc = ctx;
	const struct profile_event *e = data;
	int err;

	if (size < sizeof(__u32))
		return 0;
	pc->events++;
	if (e->type == UNWIND_EVENT_WANTED)
		return 0; /* only to wake the loop: its tick loads the table */
	/* a runtime walk's: its frames named now (runtimes.h) */
	if (runtime_set_event(pc->rt, data, size))
		return 0;
	if (e->type == PROFILE_EV_VMA) {
		const struct profile_vma_event *v = data;

		if (size < sizeof(*v))
			return 0;
		err = manifest_vma(pc->man, v->pid, v->exec_id, v->start, v->end, v->offset,
				   makedev(v->dev >> 20, v->dev & 0xfffff), v->ino, v->mtime_ns,
				   v->flags, v->name);
	} else if (e->type == PROFILE_EV_MAP_EXEC) {
		const struct profile_map_event *v = data;
		char name[PROFILE_VMA_NAME_LEN + 1];
		struct manifest_map_ev ev;

		if (size < sizeof(*v))
			return 0;
		memcpy(name, v->name, PROFILE_VMA_NAME_LEN);
		name[PROFILE_VMA_NAME_LEN] = 0;
		ev = (struct manifest_map_ev){
			.pid = v->pid, .exec_id = v->exec_id, .gen = v->gen,
			.flags = (v->flags & 1 ? BPROF_MAP_READ : 0) | (v->flags & 2 ? BPROF_MAP_WRITE : 0) |
				 (v->flags & PROFILE_MAP_EV_ANON ? BPROF_MAP_ANON : 0),
			.partial = v->flags & PROFILE_MAP_EV_PARTIAL,
			.start = v->start, .end = v->end, .offset = v->offset,
			.dev = makedev(v->dev >> 20, v->dev & 0xfffff), .ino = v->ino,
			.mtime_ns = v->mtime_ns, .name = name,
		};
		err = manifest_map_event(pc->man, &ev);
	} else if (e->type == PROFILE_EV_MMAP)
		err = manifest_mark(pc->man, e->pid, e->exec_id);
	else
		err = manifest_event(pc->man, e->pid, e->exec_id, e->ns_pid, e->ppid, e->parent_exec_id,
			     e->comm, true);
	if (err && !pc->err)
		pc->err = err;
	return 0;
}

int sampler_create(struct sampler **out, struct profile_bpf *obj, int prog_fd, struct manifest *man,
		   int nr_cpus)
{
	struct sampler *s = calloc(1, sizeof(*s));

	*out = NULL;
	if (s) {
		s->fds = malloc(nr_cpus * sizeof(*s->fds));
		s->links = malloc(nr_cpus * sizeof(*s->links));
	}
	if (!s || !s->fds || !s->links) {
		fprintf(stderr, "prof-record: out of memory\n");
		sampler_destroy(s);
		return -ENOMEM;
	}
	s->obj = obj;
	s->prog_fd = prog_fd;
	s->nr_cpus = nr_cpus;
	for (int i = 0; i < nr_cpus; i++)
		s->fds[i] = s->links[i] = -1;
	s->pc.man = man;
	s->rb = ring_buffer__new(bpf_map__fd(obj->maps.events), handle_event, &s->pc, NULL);
	if (!s->rb) {
		int e = errno;

		fprintf(stderr, "prof-record: cannot create the ring buffer: %s\n", strerror(e));
		sampler_destroy(s);
		return -e;
	}
	*out = s;
	return 0;
}

void sampler_set_runtimes(struct sampler *s, struct runtime_set *rt)
{
	s->pc.rt = rt;
}

int sampler_run(struct sampler *s, struct sampler_run *run)
{
	uint64_t last_rescan = run->start_ns;
	int err, tick_ms = 0;

	/* The recording: events are rare (one per new process image). */
	while (!*run->exiting) {
		uint64_t now = sampler_mono_ns();
		int timeout = tick_ms > 0 && tick_ms < 100 ? tick_ms : 100;

		/* the end of the recording first: a last interval of a few
		 * ms would be a file of its own */
		if (run->duration && now - run->start_ns >= (uint64_t)run->duration * 1000000000ULL)
			break;
		if (run->until_ns) {
			if (now >= run->until_ns) {
				run->boundary = true;
				break;
			}
			if (run->until_ns - now < 100000000ULL)
				timeout = (int)((run->until_ns - now) / 1000000) + 1;
		}
		err = ring_buffer__poll(s->rb, timeout);
		if (err < 0 && err != -EINTR) {
			fprintf(stderr, "prof-record: ring buffer: %s\n", strerror(-err));
			return err;
		}
		if (s->pc.err || manifest_flush(s->pc.man)) {
			fprintf(stderr, "prof-record: out of memory\n");
			return -ENOMEM;
		}
		if (run->tick)
			tick_ms = run->tick(run->tick_ctx);
		now = sampler_mono_ns();
		if (now - last_rescan >= RESCAN_NS) {
			if (manifest_rescan(s->pc.man)) {
				fprintf(stderr, "prof-record: out of memory\n");
				return -ENOMEM;
			}
			last_rescan = now;
		}
		if (run->duration && now - run->start_ns >= (uint64_t)run->duration * 1000000000ULL)
			break;
		if (run->child && waitpid(run->child, &run->status, WNOHANG) == run->child) {
			run->child_done = true;
			break;
		}
	}
	return 0;
}

void sampler_slice_base(struct sampler *s, uint64_t mono_ns)
{
	__atomic_store_n(&s->obj->bss->slice_base_ns, mono_ns, __ATOMIC_SEQ_CST);
}

unsigned sampler_gen(const struct sampler *s)
{
	return __atomic_load_n(&s->obj->bss->rotate_gen, __ATOMIC_RELAXED) & 1;
}

unsigned sampler_flip(struct sampler *s)
{
	volatile __u64 *seq = s->obj->bss->rotate_seq;
	unsigned old = sampler_gen(s);
	int n = s->nr_cpus < PROFILE_MAX_CPUS ? s->nr_cpus : PROFILE_MAX_CPUS;
	__u64 was[PROFILE_MAX_CPUS];

	/* seq_cst: the new value is visible before the sequences are read
	 * (the BPF side's locked adds order its own read of rotate_gen) */
	__atomic_store_n(&s->obj->bss->rotate_gen, old ^ 1, __ATOMIC_SEQ_CST);
	for (int cpu = 0; cpu < n; cpu++)
		was[cpu] = __atomic_load_n(&seq[cpu * PROFILE_ROTATE_SEQ_STRIDE], __ATOMIC_SEQ_CST);
	/* an odd sequence is a sample in progress that may have read the old
	 * value: wait until that CPU has moved on (a sample takes
	 * microseconds; a virtual CPU held off by its host, longer) */
	for (int cpu = 0; cpu < n; cpu++)
		while (was[cpu] & 1 &&
		       __atomic_load_n(&seq[cpu * PROFILE_ROTATE_SEQ_STRIDE], __ATOMIC_SEQ_CST) == was[cpu])
			usleep(100);
	ring_buffer__consume(s->rb);
	return old;
}

void sampler_stop(struct sampler *s)
{
	for (int i = 0; i < s->nr_cpus; i++) {
		if (s->links[i] >= 0)
			close(s->links[i]);
		s->links[i] = -1;
		if (s->fds[i] >= 0)
			close(s->fds[i]);
		s->fds[i] = -1;
	}
}

int sampler_drain(struct sampler *s)
{
	ring_buffer__consume(s->rb);
	return s->pc.err;
}

uint64_t sampler_events(const struct sampler *s)
{
	return s->pc.events;
}

void sampler_destroy(struct sampler *s)
{
	if (!s)
		return;
	if (s->links)
		for (int i = 0; i < s->nr_cpus; i++)
			if (s->links[i] >= 0)
				close(s->links[i]);
	if (s->fds)
		for (int i = 0; i < s->nr_cpus; i++)
			if (s->fds[i] >= 0)
				close(s->fds[i]);
	free(s->links);
	free(s->fds);
	ring_buffer__free(s->rb);
	free(s);
}
