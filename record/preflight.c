// SPDX-License-Identifier: Apache-2.0
/*
 * preflight.c - the checks before recording (preflight.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "preflight.h"

static bool has_caps(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = {};

	if (geteuid() == 0)
		return true;
	if (syscall(SYS_capget, &hdr, data))
		return false;
	/* CAP_PERFMON = 38, CAP_BPF = 39 (Linux 5.8) live in the second word */
	return (data[1].effective & (1u << (38 - 32))) && (data[1].effective & (1u << (39 - 32)));
}

int preflight_probe_dir(const char *dir)
{
	char tmpl[PATH_MAX];
	sigset_t stop, old;
	int fd, err;

	if (snprintf(tmpl, sizeof(tmpl), "%s/.prof-record-check-XXXXXX", dir) >= (int)sizeof(tmpl))
		return -ENAMETOOLONG;
	/* The signal handlers come later (after the BPF load): a SIGINT
	 * between mkstemp and unlink would kill us with the probe file left
	 * behind.  Held back until it is gone, the signal then acts as before. */
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGHUP);
	sigaddset(&stop, SIGQUIT);
	sigprocmask(SIG_BLOCK, &stop, &old);
	fd = mkstemp(tmpl);
	err = errno;
	if (fd >= 0) {
		close(fd);
		unlink(tmpl);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	return fd < 0 ? -err : 0;
}

static int check_output(const char *path, bool force)
{
	char *dir = strdup(path), *slash;
	struct stat st;

	if (!dir)
		return -ENOMEM;
	if (!force && lstat(path, &st) == 0) {
		fprintf(stderr, "prof-record: %s already exists; choose another -o FILE or pass --force to replace it\n", path);
		free(dir);
		return -EEXIST;
	}
	/* --force replaces a file, never a directory (rename would fail only
	 * after the whole recording) */
	if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		fprintf(stderr, "prof-record: %s is a directory; give a file name with -o\n", path);
		free(dir);
		return -EISDIR;
	}
	slash = strrchr(dir, '/');
	if (!slash)
		strcpy(dir, ".");
	else if (slash == dir)
		dir[1] = 0;
	else
		*slash = 0;
	int err = preflight_probe_dir(dir);

	if (err) {
		fprintf(stderr, "prof-record: cannot write in directory %s: %s; pick a writable -o FILE\n",
			dir, strerror(-err));
		free(dir);
		return -EACCES;
	}
	free(dir);
	return 0;
}

/* Every id names a live task; with -p, a process (not one of its threads). */
static int check_ids(const pid_t *ids, int nr, bool processes)
{
	for (int i = 0; i < nr; i++) {
		char path[64], line[256];
		long tgid = -1;
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/status", ids[i]);
		f = fopen(path, "re");
		if (!f) {
			fprintf(stderr, "prof-record: no such %s %d; check it with ps\n",
				processes ? "process" : "thread", ids[i]);
			return -ESRCH;
		}
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "Tgid: %ld", &tgid) == 1)
				break;
		fclose(f);
		if (processes && tgid != ids[i]) {
			fprintf(stderr, "prof-record: %d is a thread of process %ld; use -p %ld, or -L %d for that thread alone\n",
				ids[i], tgid, tgid, ids[i]);
			return -EINVAL;
		}
	}
	return 0;
}

/* The counts hold host pids and the manifest reads /proc/PID of host pids:
 * both need the initial pid namespace (PROC_PID_INIT_INO). */
static bool in_init_pidns(void)
{
	struct stat st;

	return stat("/proc/self/ns/pid", &st) == 0 && st.st_ino == 0xEFFFFFFCu;
}

int preflight_check(const struct env *env, const char *output)
{
	if (!has_caps()) {
		fprintf(stderr, "prof-record: needs root, or CAP_BPF and CAP_PERFMON (setcap cap_bpf,cap_perfmon+ep on a copy of prof-record); run it with sudo\n");
		return -1;
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		fprintf(stderr, "prof-record: this kernel has no BTF (/sys/kernel/btf/vmlinux): needs a kernel built with CONFIG_DEBUG_INFO_BTF=y (5.8 or later)\n");
		return -1;
	}
	/* --rotate's directory: rotate_create() */
	if (!env->rotate && check_output(output, env->force))
		return -1;
	if (!in_init_pidns()) {
		fprintf(stderr, "prof-record: runs in a child pid namespace (a container?); run it in the host's (e.g. docker run --pid=host, or nsenter -t 1 -p)\n");
		return -1;
	}
	if (check_ids(env->pids, env->nr_pids, true) || check_ids(env->tids, env->nr_tids, false))
		return -1;
	return 0;
}
