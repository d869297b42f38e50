/* SPDX-License-Identifier: Apache-2.0 */
/*
 * btfids.h - the context of btfids.bpf.c's syscall program, shared with
 * record/loader_probe.c.
 */
#ifndef BPROF_BTFIDS_H
#define BPROF_BTFIDS_H

/* __u32 and friends: vmlinux.h's in BPF, the UAPI's in user space */
#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define BTFIDS_MAX_NAMES 4
#define BTFIDS_NAME_LEN 64

struct btfids_args {
	char name[BTFIDS_MAX_NAMES][BTFIDS_NAME_LEN]; /* NUL-terminated */
	__u32 kind[BTFIDS_MAX_NAMES];  /* BTF_KIND_* */
	__s64 id[BTFIDS_MAX_NAMES];    /* out: btf_obj_fd << 32 | type id, or < 0 */
	__u32 nr;
	__u32 pad;
};

#endif
