/* SPDX-License-Identifier: Apache-2.0 */
/*
 * access.h - what prof-record may read on this host, and what it cannot.
 *
 * Root reads everything.  A recorder given capabilities instead (setcap
 * cap_bpf,cap_perfmon+ep) can sample, but reading what makes samples
 * symbolizable needs more, each thing its own capability:
 *   - other users' /proc/PID/maps, /proc/PID/root, /proc/PID/mem: CAP_SYS_PTRACE;
 *   - files the user may not read (under /root, 0700 directories): CAP_DAC_READ_SEARCH;
 *   - /proc/PID/map_files (deleted or replaced files): CAP_CHECKPOINT_RESTORE
 *     (Linux 5.9; CAP_SYS_ADMIN before);
 *   - kernel addresses in /proc/kallsyms: CAP_SYSLOG (or kernel.kptr_restrict=0
 *     with kernel.perf_event_paranoid <= 1).
 * The probe asks the kernel (opens, stats), not only the capability bits,
 * so kernels and security modules that decide otherwise are measured as
 * they are.  The result goes into the recording (ACCESS, SPEC.md 6.11).
 */
#ifndef BPROF_RECORD_ACCESS_H
#define BPROF_RECORD_ACCESS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "bprof.h"

/* Capability numbers (linux/capability.h) that access.c checks. */
enum {
	ACCESS_CAP_DAC_OVERRIDE = 1,
	ACCESS_CAP_DAC_READ_SEARCH = 2,
	ACCESS_CAP_SYS_PTRACE = 19,
	ACCESS_CAP_SYSLOG = 34,
};

/* Fill a->flags, euid and capabilities (BPROF_ACCESS_*); present = 1.
 * Never fails: what cannot be probed counts as not readable. */
void access_probe(struct bprof_access *a);

/* Whether the effective set holds capability cap (root holds all). */
bool access_has_cap(const struct bprof_access *a, unsigned cap);

/* Before sampling: say what this recording will lack and which capability
 * would give it.  pids: the -p processes (nr may be 0); whole_system: no
 * -p, -L, cgroup or command; user_stacks/kernel_stacks: what is recorded.
 * Returns 0, or -EACCES after printing an error when the recording could
 * not be symbolized at all (a -p process the recorder may not read). */
int access_check(const struct bprof_access *a, const pid_t *pids, int nr_pids,
		 bool whole_system, bool user_stacks, bool kernel_stacks);

/*
 * After recording: warn about what privileges kept out of the file
 * (processes without mappings, objects without identity).  Returns true
 * when user stacks were recorded but not one object could be identified
 * because of privileges: the recording cannot be symbolized, and
 * prof-record then exits with an error although the file is written.
 */
bool access_report(const struct bprof_access *a, const struct bprof_recording *rec);

#endif
