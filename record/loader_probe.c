// SPDX-License-Identifier: Apache-2.0
/*
 * loader_probe.c - what the kernel offers, asked before the object is
 * loaded: its BPF features (kfeat), the BTF ids of the optional hooks,
 * whether fexit attaches.  Apart from the loading because it asks the
 * kernel with programs of its own (btfids.bpf.c, a two-instruction fexit)
 * and keeps this boot's answers; loader.c decides with them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "kfeat.h"
#include "loader_internal.h"
#include "btfids.h"
#include "btfids.skel.h"

/*
 * Whether an fexit program on func loads.  Kernels (or hypervisors,
 * lockdown) that refuse trampolines say so with EPERM only when a program
 * is loaded, and libbpf loads the programs of an object in order: the
 * failing fexit came after the unwinder's sampler, whose verification is
 * most of prof-record's start-up, so the whole object was loaded and
 * verified twice.  Two instructions tell the same, for a fraction of a
 * millisecond.  Only a refusal counts: any other error leaves the decision
 * to the real load.
 */
static bool fexit_refused(int id)
{
	struct bpf_insn insns[2] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = BPF_TRACE_FEXIT,
		    .attach_btf_id = id > 0 ? (unsigned)id : 0);
	int fd;

	if (id <= 0)
		return false;
	fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, "bprof_probe", "GPL", insns, 2, &opts);
	if (fd >= 0) {
		close(fd);
		return false;
	}
	return errno == EPERM || errno == EACCES || errno == ENOTSUP || errno == 524 /* ENOTSUPP */;
}

/* The names and kinds of FEAT_* (loader_internal.h) in the kernel's BTF. */
static const char *const feature_names[FEAT_NR] = { "vm_mmap_pgoff", "bpf_iter_task_vma_new",
						    "btf_trace_mmap_lock_released" };
static const __u32 feature_kinds[FEAT_NR] = { BTF_KIND_FUNC, BTF_KIND_FUNC, BTF_KIND_TYPEDEF };

/*
 * The BTF type id of each feature_names[] entry in the kernel (0: absent),
 * asked of the kernel by btfids.bpf.c.  Returns false where that program
 * cannot run (before Linux 5.14, or where syscall programs are refused):
 * the caller then reads the BTF itself.
 */
static bool kernel_btf_ids(int ids[FEAT_NR])
{
	struct btfids_bpf *f = btfids_bpf__open_and_load();
	struct btfids_args a = { .nr = FEAT_NR };
	/* a syscall program's context is copied back into ctx_in */
	LIBBPF_OPTS(bpf_test_run_opts, run, .ctx_in = &a, .ctx_size_in = sizeof(a));
	int err;

	if (!f)
		return false;
	for (int i = 0; i < FEAT_NR; i++) {
		snprintf(a.name[i], sizeof(a.name[i]), "%s", feature_names[i]);
		a.kind[i] = feature_kinds[i];
	}
	err = bpf_prog_test_run_opts(bpf_program__fd(f->progs.find_btf_ids), &run);
	btfids_bpf__destroy(f);
	if (err || run.retval)
		return false;
	for (int i = 0; i < FEAT_NR; i++) {
		/* a name found in a module's BTF comes with an fd of that
		 * BTF, opened in this process: not ours to use here */
		if (a.id[i] > 0 && (a.id[i] >> 32) > 0)
			close((int)(a.id[i] >> 32));
		ids[i] = a.id[i] > 0 && (a.id[i] >> 32) == 0 ? (int)(a.id[i] & 0x7fffffff) : 0;
	}
	return true;
}

/* The same from the BTF read in user space: the slow way. */
static void vmlinux_btf_ids(int ids[FEAT_NR])
{
	struct btf *btf = btf__load_vmlinux_btf();

	for (int i = 0; i < FEAT_NR; i++) {
		int id = btf ? btf__find_by_name_kind(btf, feature_names[i], feature_kinds[i]) : -1;

		ids[i] = id > 0 ? id : 0;
	}
	btf__free(btf);
}

/*
 * What the loader asks the kernel before it loads anything: its features
 * (kfeat_probe), the optional hooks' BTF ids, whether fexit attaches.
 * This boot's answers are kept for the next starts (kfeat.h: ~2.5 ms of
 * each); BPROF_KFEAT_OFF applies after, to the answers either way.
 */
void loader__probe_kernel(const struct env *env, struct kfeat *kf, int ids[FEAT_NR], bool *fexit_ok)
{
	const char *path = kfeat_cache_path();
	struct kfeat_extra x = { 0 };
	int err;

	_Static_assert(FEAT_NR <= KFEAT_CACHE_IDS, "the cache keeps every feature's id");
	if (path && kfeat_cache_read(path, kf, &x)) {
		memcpy(ids, x.ids, FEAT_NR * sizeof(ids[0]));
		*fexit_ok = x.fexit_ok;
		if (env->verbose)
			fprintf(stderr, "prof-record: the kernel's features: this boot's answers, from %s\n", path);
	} else {
		kfeat_probe(kf);
		if (!kernel_btf_ids(ids))
			vmlinux_btf_ids(ids);
		*fexit_ok = ids[FEAT_MMAP] && !fexit_refused(ids[FEAT_MMAP]);
		memcpy(x.ids, ids, FEAT_NR * sizeof(ids[0]));
		x.fexit_ok = *fexit_ok;
		if (path && (err = kfeat_cache_write(path, kf, &x)) && env->verbose)
			fprintf(stderr, "prof-record: cannot keep the kernel's features in %s (%s)\n", path,
				strerror(-err));
	}
	kfeat_pretend(kf);
}
