// SPDX-License-Identifier: Apache-2.0
/*
 * kfeat.c - the kernel's BPF features, probed (kfeat.h).  libbpf's probes
 * load a program that calls the helper, or create a map of the type, and
 * tell "unknown" from "refused for its arguments" by the verifier's log.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
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

/* BPROF_KFEAT_OFF=loop,noprealloc,...: features taken as missing, so
 * that the choices and messages of older kernels are tested on this one
 * (tests/record/kfeat.sh). */
static void pretend_missing(struct kfeat *kf)
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
	pretend_missing(kf);
}

int kfeat_first_missing(const struct kfeat *kf, const enum kfeat_id *ids, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!kf->has[ids[i]])
			return (int)ids[i];
	return -1;
}
