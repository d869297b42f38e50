// SPDX-License-Identifier: Apache-2.0
/*
 * kfeat.c - the kernel's BPF features, probed (kfeat.h).  libbpf's probes
 * load a program that calls the helper, or create a map of the type, and
 * tell "unknown" from "refused for its arguments" by the verifier's log.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "kfeat.h"

static const char *const descriptions[KFEAT_NR] = {
	[KFEAT_LOOP] = "the BPF helper bpf_loop (Linux 5.17)",
	[KFEAT_FIND_VMA] = "the BPF helper bpf_find_vma (Linux 5.17)",
	[KFEAT_TASK_PT_REGS] = "the BPF helper bpf_task_pt_regs (Linux 5.15)",
	[KFEAT_CURRENT_TASK_BTF] = "the BPF helper bpf_get_current_task_btf (Linux 5.11)",
	[KFEAT_TASK_STORAGE] = "BPF task storage maps for tracing programs (Linux 5.11)",
	[KFEAT_NOPREALLOC] = "hash maps that grow in perf_event programs (Linux 6.1)",
	[KFEAT_MEMCG] = "BPF memory charged to the memory cgroup, not to the locked-memory limit (Linux 5.11)",
	[KFEAT_SYSCALL_PROG] = "BPF syscall programs (Linux 5.14)",
};

const char *kfeat_describe(enum kfeat_id id)
{
	return id >= 0 && id < KFEAT_NR ? descriptions[id] : "an unknown feature";
}

static bool helper(enum bpf_prog_type type, enum bpf_func_id fn)
{
	return libbpf_probe_bpf_helper(type, fn, NULL) == 1;
}

/*
 * Whether a perf_event program may use a hash map that is not
 * preallocated (Linux 6.1+, where the BPF memory allocator is safe in any
 * context).  Preallocation is most of the maps' creation cost: every entry
 * of every hash map is allocated and linked at start-up (the walked-stacks
 * map alone is 16 MiB at the default size), for a recording that may use a
 * few hundred.  A map of one entry and a program that names it tell, for a
 * fraction of a millisecond; older kernels refuse the program with EINVAL.
 */
static bool noprealloc_allowed(void)
{
	LIBBPF_OPTS(bpf_map_create_opts, mopts, .map_flags = BPF_F_NO_PREALLOC);
	int map = bpf_map_create(BPF_MAP_TYPE_HASH, "bprof_probe", 4, 8, 1, &mopts);
	bool ok;

	if (map < 0)
		return false;
	struct bpf_insn insns[4] = {
		{ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = BPF_REG_1,
		  .src_reg = BPF_PSEUDO_MAP_FD, .imm = map },
		{ 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int fd = bpf_prog_load(BPF_PROG_TYPE_PERF_EVENT, "bprof_probe", "GPL", insns, 4, NULL);

	ok = fd >= 0;
	if (fd >= 0)
		close(fd);
	close(map);
	return ok;
}

/* Short names for BPROF_KFEAT_OFF. */
static const char *const short_names[KFEAT_NR] = {
	[KFEAT_LOOP] = "loop",
	[KFEAT_FIND_VMA] = "find_vma",
	[KFEAT_TASK_PT_REGS] = "task_pt_regs",
	[KFEAT_CURRENT_TASK_BTF] = "current_task_btf",
	[KFEAT_TASK_STORAGE] = "task_storage",
	[KFEAT_NOPREALLOC] = "noprealloc",
	[KFEAT_MEMCG] = "memcg",
	[KFEAT_SYSCALL_PROG] = "syscall_prog",
};

void kfeat_pretend(struct kfeat *kf)
{
	const char *env = getenv("BPROF_KFEAT_OFF");

	if (!env)
		return;
	for (int i = 0; i < KFEAT_NR; i++) {
		size_t n = strlen(short_names[i]);

		for (const char *p = env; (p = strstr(p, short_names[i])); p += n)
			if ((p == env || p[-1] == ',') && (p[n] == ',' || !p[n]))
				kf->has[i] = false;
	}
}

void kfeat_probe(struct kfeat *kf)
{
	kf->has[KFEAT_LOOP] = helper(BPF_PROG_TYPE_PERF_EVENT, BPF_FUNC_loop);
	kf->has[KFEAT_FIND_VMA] = helper(BPF_PROG_TYPE_PERF_EVENT, BPF_FUNC_find_vma);
	kf->has[KFEAT_TASK_PT_REGS] = helper(BPF_PROG_TYPE_PERF_EVENT, BPF_FUNC_task_pt_regs);
	kf->has[KFEAT_CURRENT_TASK_BTF] = helper(BPF_PROG_TYPE_PERF_EVENT, BPF_FUNC_get_current_task_btf);
	kf->has[KFEAT_TASK_STORAGE] = libbpf_probe_bpf_map_type(BPF_MAP_TYPE_TASK_STORAGE, NULL) == 1;
	kf->has[KFEAT_NOPREALLOC] = noprealloc_allowed();
	kf->has[KFEAT_MEMCG] = helper(BPF_PROG_TYPE_SOCKET_FILTER, BPF_FUNC_ktime_get_coarse_ns);
	kf->has[KFEAT_SYSCALL_PROG] = libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_SYSCALL, NULL) == 1;
}

/* The cache file's first word and version: a change of what it holds
 * (a feature, an id) changes the version, and an older file is probed
 * anew. */
#define CACHE_MAGIC "bprof-kfeat"
#define CACHE_VERSION 1

/* This boot and kernel, as the file names them: "BOOT_ID RELEASE". */
static bool boot_identity(char *out, size_t size)
{
	char id[64] = "";
	struct utsname u;
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");
	bool ok = f && fgets(id, sizeof(id), f);

	if (f)
		fclose(f);
	id[strcspn(id, "\n")] = 0;
	if (!ok || !id[0] || strchr(id, ' ') || uname(&u))
		return false;
	return snprintf(out, size, "%s %s", id, u.release) < (int)size;
}

const char *kfeat_cache_path(void)
{
	const char *env = getenv("BPROF_KFEAT_CACHE");

	if (env && !strcmp(env, "none"))
		return NULL;
	if (geteuid() != 0)
		return NULL;
	return env && *env ? env : KFEAT_CACHE_PATH;
}

/* The directory holding path into dir (not "/": the file lives in a
 * directory of its own). */
static bool parent_of(const char *path, char *dir, size_t size)
{
	const char *slash = strrchr(path, '/');

	if (!slash || slash == path || (size_t)(slash - path) >= size)
		return false;
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = 0;
	return true;
}

/* Whether the directory holding path is root's and only root may write
 * it, as the file itself: another user's answers are not taken. */
static bool owned_by_root(const char *path, int fd)
{
	char dir[4096];
	struct stat st;

	if (fstat(fd, &st) || st.st_uid != 0 || (st.st_mode & 022) || !S_ISREG(st.st_mode))
		return false;
	return parent_of(path, dir, sizeof(dir)) && !stat(dir, &st) && st.st_uid == 0 &&
	       !(st.st_mode & 022) && S_ISDIR(st.st_mode);
}

bool kfeat_cache_read(const char *path, struct kfeat *kf, struct kfeat_extra *x)
{
	char line[512], magic[32], boot[64], release[256], want[sizeof(boot) + sizeof(release)];
	unsigned version, has, fexit;
	int n = 0, ids[KFEAT_CACHE_IDS], fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	ssize_t len;
	bool ok = false;

	if (fd < 0)
		return false;
	if (!owned_by_root(path, fd) || (len = read(fd, line, sizeof(line) - 1)) <= 0)
		goto out;
	line[len] = 0;
	/* "bprof-kfeat VERSION BOOT_ID RELEASE HAS_BITS FEXIT_OK ID..." */
	if (sscanf(line, "%31s %u %63s %255s %x %u %d %d %d %d%n", magic, &version, boot, release, &has,
		   &fexit, &ids[0], &ids[1], &ids[2], &ids[3], &n) != 10 ||
	    strcmp(magic, CACHE_MAGIC) || version != CACHE_VERSION || fexit > 1 ||
	    has >> KFEAT_NR || line[n] != '\n' || line[n + 1] || !boot_identity(want, sizeof(want)))
		goto out;
	snprintf(line, sizeof(line), "%s %s", boot, release);
	if (strcmp(line, want))
		goto out; /* another boot's, or another kernel's */
	for (int i = 0; i < KFEAT_CACHE_IDS; i++)
		if (ids[i] < 0)
			goto out;
	for (int i = 0; i < KFEAT_NR; i++)
		kf->has[i] = has >> i & 1;
	memcpy(x->ids, ids, sizeof(ids));
	x->fexit_ok = fexit;
	ok = true;
out:
	close(fd);
	return ok;
}

int kfeat_cache_write(const char *path, const struct kfeat *kf, const struct kfeat_extra *x)
{
	char id[sizeof(((struct utsname *)0)->release) + 80], tmp[4096], dir[4096];
	unsigned has = 0;
	int fd, n, err = 0;

	if (!boot_identity(id, sizeof(id)) || !parent_of(path, dir, sizeof(dir)) ||
	    snprintf(tmp, sizeof(tmp), "%s.%d", path, getpid()) >= (int)sizeof(tmp))
		return -EINVAL;
	if (mkdir(dir, 0700) && errno != EEXIST)
		return -errno;
	for (int i = 0; i < KFEAT_NR; i++)
		has |= (unsigned)kf->has[i] << i;
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return -errno;
	n = dprintf(fd, "%s %u %s %x %u %d %d %d %d\n", CACHE_MAGIC, CACHE_VERSION, id, has, x->fexit_ok,
		    x->ids[0], x->ids[1], x->ids[2], x->ids[3]);
	if (n < 0 || close(fd))
		err = -EIO;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

int kfeat_first_missing(const struct kfeat *kf, const enum kfeat_id *ids, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!kf->has[ids[i]])
			return (int)ids[i];
	return -1;
}
