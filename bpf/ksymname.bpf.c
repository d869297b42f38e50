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

/*
 * The inputs and the answers are global variables (.bss, a map), not the
 * context: the helper may write map memory at a variable offset, the
 * context only at constant ones, which took a loop unrolled 16 times
 * (with a 256-byte copy in each) and ~4 ms of verification at every
 * recording's end.  User space writes and reads them through the
 * skeleton's mapping of .bss.
 */
__u64 ksym_addr[KSYMNAME_BATCH];
__u32 ksym_nr;
__s32 ksym_len[KSYMNAME_BATCH]; /* bpf_snprintf's answer: length with the NUL, or < 0 */
char ksym_text[KSYMNAME_BATCH][KSYMNAME_LEN]; /* %pS of ksym_addr[i] */

SEC("syscall")
int name_addrs(void *ctx)
{
	for (__u32 i = 0; i < KSYMNAME_BATCH; i++) {
		__u64 arg[1];

		if (i >= ksym_nr)
			break;
		arg[0] = ksym_addr[i];
		ksym_len[i] = bpf_snprintf(ksym_text[i], KSYMNAME_LEN, "%pS", arg, sizeof(arg));
	}
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
