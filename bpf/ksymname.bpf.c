// SPDX-License-Identifier: Apache-2.0
/*
 * ksymname.bpf.c - names the kernel addresses a recording sampled, in the
 * kernel, for its kallsyms snapshot.
 *
 * The snapshot keeps the symbols of the sampled addresses (and the next
 * one, which bounds each).  Reading /proc/kallsyms for them made the
 * kernel format all ~122,000 lines and prof-record parse them: 30-40 ms
 * of a 2-CPU VM's time, 45 % of a 10 s system-wide recording's CPU.
 * bpf_snprintf's %pS asks kallsyms itself, by binary search: "name+off/
 * size [module]" for each address, through a syscall program run once per
 * KSYMNAME_BATCH addresses (BPF_PROG_TEST_RUN).  No CO-RE, no kernel
 * types: this object needs no vmlinux BTF to load.
 */
#include "vmlinux.h" /* for the __u32-style types only */
#include <bpf/bpf_helpers.h>
#include "ksymname.h"

SEC("syscall")
int name_addrs(struct ksymname_args *a)
{
	char text[KSYMNAME_LEN];

	/* unrolled: the context is written at constant offsets only */
#pragma unroll
	for (int i = 0; i < KSYMNAME_BATCH; i++) {
		__u64 arg[1];

		if (i >= (int)a->nr)
			break;
		arg[0] = a->addr[i];
		/* the helper writes stack (or map) memory, not the context */
		a->len[i] = bpf_snprintf(text, sizeof(text), "%pS", arg, sizeof(arg));
		__builtin_memcpy(a->text[i], text, sizeof(text));
	}
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
