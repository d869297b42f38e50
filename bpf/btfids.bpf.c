// SPDX-License-Identifier: Apache-2.0
/*
 * btfids.bpf.c - asks the kernel which of prof-record's optional hooks
 * its BTF has, without reading that BTF in user space.
 *
 * libbpf can only answer "is FUNC vm_mmap_pgoff in the kernel's BTF?" by
 * reading and indexing all of /sys/kernel/btf/vmlinux: 5.5 MiB through
 * 4 KiB sysfs reads, ~60 ms of CPU on the 2-CPU VM the benchmark runs on,
 * a quarter of prof-record's start-up, spent again moments later when the
 * main object loads.  The kernel has that BTF indexed already: a syscall
 * program runs bpf_btf_find_by_name_kind (Linux 5.14) for each name, once,
 * through BPF_PROG_TEST_RUN.  No CO-RE, no kernel types: this object needs
 * no vmlinux BTF to load.
 */
#include "vmlinux.h" /* for the __u32-style types only */
#include <bpf/bpf_helpers.h>
#include "btfids.h"

SEC("syscall")
int find_btf_ids(struct btfids_args *a)
{
	char name[BTFIDS_NAME_LEN];

	for (int i = 0; i < BTFIDS_MAX_NAMES; i++) {
		if (i >= (int)a->nr)
			break;
		/* the helper takes stack (or map) memory, not the context */
		__builtin_memcpy(name, a->name[i], sizeof(name));
		name[sizeof(name) - 1] = 0;
		a->id[i] = bpf_btf_find_by_name_kind(name, sizeof(name), a->kind[i], 0);
	}
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
