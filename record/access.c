// SPDX-License-Identifier: Apache-2.0
/*
 * access.c - what prof-record may read, probed before recording, and what
 * the recording lacks because of it (access.h).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>
#include "access.h"

static uint64_t effective_caps(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = {};

	if (syscall(SYS_capget, &hdr, data))
		return 0;
	return (uint64_t)data[1].effective << 32 | data[0].effective;
}

/* map_files opens for this process (the kernel checks the capability the
 * same way for every process): stat our own first file mapping there. */
static bool map_files_open(void)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512], link[96];
	unsigned long long start, end, ino;
	bool ok = false;
	int pos;

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		pos = 0;
		if (sscanf(line, "%llx-%llx %*s %*x %*x:%*x %llu %n", &start, &end, &ino, &pos) < 3 ||
		    !ino)
			continue;
		struct stat st;

		snprintf(link, sizeof(link), "/proc/self/map_files/%llx-%llx", start, end);
		ok = stat(link, &st) == 0;
		break;
	}
	fclose(f);
	return ok;
}

/*
 * Other users' processes' mappings can be read.  Which capability opens
 * them is the kernel's business (CAP_SYS_PTRACE; on Linux 6.18 CAP_PERFMON
 * was measured to suffice for /proc/PID/maps, not for /proc/PID/root), so
 * ask it: try the maps of a few processes of other users.  Processes with
 * capabilities we lack (init) refuse anyone without CAP_SYS_PTRACE, so one
 * success is the answer; with no other user's process to try, the
 * capability decides.
 */
static bool other_users_readable(uint64_t caps)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int tried = 0;
	bool ok = false;

	while (d && !ok && tried < 64 && (de = readdir(d))) {
		char path[64];
		struct stat st;
		int fd;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%.20s", de->d_name);
		if (stat(path, &st) || st.st_uid == geteuid())
			continue;
		snprintf(path, sizeof(path), "/proc/%.20s/maps", de->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			ok = true;
			close(fd);
		} else if (errno == EACCES || errno == EPERM) {
			tried++;
		}
	}
	if (d)
		closedir(d);
	return ok || (!tried && (caps & (1ULL << ACCESS_CAP_SYS_PTRACE)));
}

/* /proc/kallsyms prints 0 for every address it hides. */
static bool kallsyms_visible(void)
{
	FILE *f = fopen("/proc/kallsyms", "re");
	char line[256];
	bool seen = false;

	if (!f)
		return false;
	for (int i = 0; i < 64 && fgets(line, sizeof(line), f); i++) {
		if (strtoull(line, NULL, 16)) {
			seen = true;
			break;
		}
	}
	fclose(f);
	return seen;
}

void access_probe(struct bprof_access *a)
{
	memset(a, 0, sizeof(*a));
	a->present = 1;
	a->euid = geteuid();
	a->capabilities = effective_caps();
	if (a->euid == 0)
		a->flags |= BPROF_ACCESS_ROOT;
	if (map_files_open())
		a->flags |= BPROF_ACCESS_MAP_FILES;
	if (other_users_readable(a->capabilities))
		a->flags |= BPROF_ACCESS_OTHER_USERS;
	if (access_has_cap(a, ACCESS_CAP_DAC_READ_SEARCH) ||
	    access_has_cap(a, ACCESS_CAP_DAC_OVERRIDE))
		a->flags |= BPROF_ACCESS_ANY_FILE;
	if (kallsyms_visible())
		a->flags |= BPROF_ACCESS_KALLSYMS;
}

bool access_has_cap(const struct bprof_access *a, unsigned cap)
{
	return cap < 64 && (a->capabilities >> cap & 1);
}

static long sysctl_value(const char *path)
{
	FILE *f = fopen(path, "re");
	long v = -1;

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/* The recorder's own path, for a setcap line the user can paste. */
static void self_path(char *buf, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", buf, len - 1);

	if (n <= 0)
		snprintf(buf, len, "prof-record");
	else
		buf[n] = 0;
}

int access_check(const struct bprof_access *a, const pid_t *pids, int nr_pids,
		 bool whole_system, bool user_stacks, bool kernel_stacks)
{
	char self[PATH_MAX];

	self_path(self, sizeof(self));
	if (user_stacks) {
		for (int i = 0; i < nr_pids; i++) {
			char path[64];
			struct stat st;
			int fd;

			snprintf(path, sizeof(path), "/proc/%d/maps", (int)pids[i]);
			fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd >= 0) {
				close(fd);
				continue;
			}
			if (errno != EACCES && errno != EPERM)
				continue; /* gone: the usual checks say so */
			snprintf(path, sizeof(path), "/proc/%d", (int)pids[i]);
			if (access_has_cap(a, ACCESS_CAP_SYS_PTRACE))
				/* init refused even CAP_SYS_PTRACE here */
				fprintf(stderr,
					"prof-record: may not read the mappings of process %d (uid %ld), even with CAP_SYS_PTRACE: its user stacks could not be symbolized; run as root\n",
					(int)pids[i], stat(path, &st) == 0 ? (long)st.st_uid : -1L);
			else
				fprintf(stderr,
					"prof-record: may not read the mappings of process %d (uid %ld): its user stacks could not be symbolized; grant CAP_SYS_PTRACE too (setcap cap_bpf,cap_perfmon,cap_sys_ptrace+ep %s) or run as root\n",
					(int)pids[i], stat(path, &st) == 0 ? (long)st.st_uid : -1L, self);
			return -EACCES;
		}
	}
	if (user_stacks && whole_system && !(a->flags & BPROF_ACCESS_OTHER_USERS))
		fprintf(stderr,
			"prof-record: WARNING: other users' processes will be sampled, but this recorder may not read their mappings: their user frames will stay unnamed; for the whole system grant CAP_SYS_PTRACE (setcap cap_bpf,cap_perfmon,cap_sys_ptrace,cap_dac_read_search,cap_syslog+ep %s) or run as root\n",
			self);
	if (kernel_stacks && !(a->flags & BPROF_ACCESS_KALLSYMS)) {
		long kr = sysctl_value("/proc/sys/kernel/kptr_restrict");

		if (kr >= 2 || (a->flags & BPROF_ACCESS_ROOT) ||
		    access_has_cap(a, ACCESS_CAP_SYSLOG))
			fprintf(stderr,
				"prof-record: kernel addresses are hidden (kernel.kptr_restrict=%ld): no kallsyms snapshot; kernel frames will be named only from the kernel's debuginfo on the workstation\n",
				kr);
		else
			fprintf(stderr,
				"prof-record: kernel addresses are hidden from this user (kernel.kptr_restrict=%ld, kernel.perf_event_paranoid=%ld): no kallsyms snapshot, kernel frames will be named only from the kernel's debuginfo; grant CAP_SYSLOG to record them (setcap cap_bpf,cap_perfmon,cap_syslog+ep %s)\n",
				kr, sysctl_value("/proc/sys/kernel/perf_event_paranoid"), self);
	}
	return 0;
}

bool access_report(const struct bprof_access *a, const struct bprof_recording *rec)
{
	const uint64_t *c = a->counters;
	bool user = false, identified = false;

	if (c[BPROF_ACC_PROCESSES_DENIED])
		fprintf(stderr,
			"prof-record: WARNING: %llu processes of other users were sampled without their mappings (reading them was not permitted): their user frames stay unnamed; CAP_SYS_PTRACE would read them\n",
			(unsigned long long)c[BPROF_ACC_PROCESSES_DENIED]);
	if (c[BPROF_ACC_OBJECTS_DENIED])
		fprintf(stderr,
			"prof-record: WARNING: %llu mapped files could not be opened (not permitted): their frames stay unnamed; CAP_DAC_READ_SEARCH would open them\n",
			(unsigned long long)c[BPROF_ACC_OBJECTS_DENIED]);
	if (c[BPROF_ACC_OBJECTS_UNVERIFIED])
		fprintf(stderr,
			"prof-record: WARNING: %llu mapped files could not be identified (deleted or replaced since they were mapped, and /proc/PID/map_files is closed): their frames stay unnamed; CAP_CHECKPOINT_RESTORE would identify them\n",
			(unsigned long long)c[BPROF_ACC_OBJECTS_UNVERIFIED]);
	if (!c[BPROF_ACC_PROCESSES_DENIED] && !c[BPROF_ACC_OBJECTS_DENIED] &&
	    !c[BPROF_ACC_OBJECTS_UNVERIFIED])
		return false;
	for (uint64_t i = 0; i < rec->nr_counts && !user; i++)
		user = rec->counts[i].user_stack_id >= 0;
	for (uint64_t i = 0; i < rec->nr_objects && !identified; i++)
		identified = !(rec->objects[i].flags & BPROF_OBJ_VDSO) &&
			     (rec->objects[i].flags &
			      (BPROF_OBJ_HAS_BUILD_ID | BPROF_OBJ_FALLBACK_ID));
	return user && !identified;
}
