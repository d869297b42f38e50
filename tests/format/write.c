/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Writing and opening files: atomic replacement, no-clobber, planted
 * symlinks, unwritable and missing directories, a full disk; reading
 * things that are not regular files.
 */
#include "bprof.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fixtures.h"

static char dir[64];
static char mnt[80];

static void mkdir_fixture(void)
{
	snprintf(dir, sizeof(dir), "/tmp/bprof-write-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	mnt[0] = '\0';
}

static void rm_tree(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		char p[4096];
		struct stat st;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(p, sizeof(p), "%s/%s", path, e->d_name);
		if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
			chmod(p, 0700);
			rm_tree(p);
			rmdir(p);
		} else {
			unlink(p);
		}
	}
	closedir(d);
}

static void rm_fixture(void)
{
	if (mnt[0]) {
		umount2(mnt, MNT_DETACH);
		rmdir(mnt);
	}
	rm_tree(dir);
	rmdir(dir);
}

TestSuite(write, .init = mkdir_fixture, .fini = rm_fixture);

static char *at(const char *name)
{
	static char p[4][4096];
	static int i;

	i = (i + 1) % 4;
	snprintf(p[i], sizeof(p[i]), "%s/%s", dir, name);
	return p[i];
}

static void put_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f, "%s", path);
	fputs(text, f);
	cr_assert_eq(fclose(f), 0);
}

static bool has_text(const char *path, const char *text)
{
	char buf[256] = "";
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return !strcmp(buf, text);
}

/* No ".NAME.*.tmp" left behind in d. */
static int temp_files_in(const char *d)
{
	DIR *dd = opendir(d);
	struct dirent *e;
	int n = 0;

	if (!dd)
		return 0;
	while ((e = readdir(dd)))
		if (e->d_name[0] == '.' && strstr(e->d_name, ".tmp"))
			n++;
	closedir(dd);
	return n;
}

static int write_typical(const char *path, unsigned flags, struct bprof_error *err)
{
	struct bprof_recording *r = fx_typical();
	struct bprof_write_opts o = { .sz = sizeof(o), .flags = flags };
	int rc = bprof_write_file(r, path, &o, err);

	bprof_recording_free(r);
	return rc;
}

static bool reads_ok(const char *path)
{
	struct bprof_recording *r;
	struct bprof_error err;
	int rc = bprof_read_file(&r, path, NULL, &err);

	bprof_recording_free(r);
	return rc == 0;
}

Test(write, creates_file_mode_0600)
{
	struct bprof_error err = { 0 };
	struct stat st;

	cr_assert_eq(write_typical(at("a.bprof"), 0, &err), 0, "%s", err.message);
	cr_assert_eq(stat(at("a.bprof"), &st), 0);
	cr_assert_eq(st.st_mode & 07777, 0600, "mode %o", st.st_mode & 07777);
	cr_assert(reads_ok(at("a.bprof")));
	cr_assert_eq(temp_files_in(dir), 0);
}

Test(write, replaces_existing_file)
{
	struct bprof_error err = { 0 };

	put_text(at("a.bprof"), "old");
	cr_assert_eq(write_typical(at("a.bprof"), 0, &err), 0, "%s", err.message);
	cr_assert(reads_ok(at("a.bprof")));
	cr_assert_eq(temp_files_in(dir), 0);
}

Test(write, no_clobber_refuses_existing)
{
	struct bprof_error err = { 0 };

	put_text(at("a.bprof"), "old");
	cr_assert_eq(write_typical(at("a.bprof"), BPROF_WRITE_NO_CLOBBER, &err), BPROF_E_EXISTS);
	cr_assert_eq(err.code, BPROF_E_EXISTS);
	cr_assert(has_text(at("a.bprof"), "old"), "existing file was modified");
	cr_assert_eq(temp_files_in(dir), 0);
	/* and creates when absent */
	cr_assert_eq(write_typical(at("b.bprof"), BPROF_WRITE_NO_CLOBBER, &err), 0, "%s",
		     err.message);
	cr_assert(reads_ok(at("b.bprof")));
	cr_assert_eq(temp_files_in(dir), 0);
}

Test(write, no_clobber_refuses_dangling_symlink)
{
	struct bprof_error err = { 0 };
	struct stat st;

	cr_assert_eq(symlink(at("nowhere"), at("a.bprof")), 0);
	cr_assert_eq(write_typical(at("a.bprof"), BPROF_WRITE_NO_CLOBBER, &err), BPROF_E_EXISTS);
	cr_assert_eq(lstat(at("nowhere"), &st), -1, "followed the symlink");
}

Test(write, replaces_planted_symlink_without_following)
{
	struct bprof_error err = { 0 };
	struct stat st;

	put_text(at("victim"), "precious");
	cr_assert_eq(symlink(at("victim"), at("a.bprof")), 0);
	cr_assert_eq(write_typical(at("a.bprof"), 0, &err), 0, "%s", err.message);
	cr_assert_eq(lstat(at("a.bprof"), &st), 0);
	cr_assert(S_ISREG(st.st_mode), "the symlink is still there");
	cr_assert(has_text(at("victim"), "precious"), "symlink target was written");
	cr_assert(reads_ok(at("a.bprof")));
}

Test(write, nonexistent_directory)
{
	struct bprof_error err = { 0 };

	cr_assert_eq(write_typical(at("missing/a.bprof"), 0, &err), BPROF_E_IO);
	cr_assert_eq(err.sys_errno, ENOENT, "errno %d: %s", err.sys_errno, err.message);
	cr_assert_neq(strstr(err.message, "missing"), NULL, "%s", err.message);
}

/* Root ignores directory permissions, so as root use a read-only mount. */
static bool mount_tmpfs(const char *opts)
{
	snprintf(mnt, sizeof(mnt), "%s.mnt", dir);
	if (mkdir(mnt, 0700) < 0)
		return false;
	if (mount("bprof-test", mnt, "tmpfs", 0, opts) < 0) {
		rmdir(mnt);
		mnt[0] = '\0';
		return false;
	}
	return true;
}

static void cannot_run(const char *why)
{
	const char *ci = getenv("CI");

	if (ci && !strcmp(ci, "true"))
		cr_assert_fail("cannot run in CI: %s", why);
	cr_skip_test("%s", why);
}

Test(write, read_only_directory)
{
	struct bprof_error err = { 0 };
	char target[4096];

	if (geteuid() != 0) {
		cr_assert_eq(mkdir(at("ro"), 0500), 0);
		snprintf(target, sizeof(target), "%s/a.bprof", at("ro"));
	} else {
		if (!mount_tmpfs("size=64k,mode=0755"))
			cannot_run("could not mount a tmpfs");
		cr_assert_eq(mount(NULL, mnt, NULL, MS_REMOUNT | MS_RDONLY, NULL), 0,
			     "remount ro: %s", strerror(errno));
		snprintf(target, sizeof(target), "%s/a.bprof", mnt);
	}
	cr_assert_eq(write_typical(target, 0, &err), BPROF_E_IO);
	cr_assert(err.sys_errno == EACCES || err.sys_errno == EROFS, "errno %d: %s",
		  err.sys_errno, err.message);
	cr_assert_eq(access(target, F_OK), -1);
}

Test(write, full_disk_leaves_nothing_and_keeps_old_file, .timeout = 60)
{
	struct bprof_recording *big;
	struct bprof_error err = { 0 };
	char target[4096];

	if (geteuid() != 0)
		cannot_run("needs root to mount a small tmpfs");
	if (!mount_tmpfs("size=64k,mode=0700"))
		cannot_run("could not mount a 64 KiB tmpfs");
	snprintf(target, sizeof(target), "%s/out.bprof", mnt);

	/* a small earlier recording fits */
	cr_assert_eq(write_typical(target, 0, &err), 0, "%s", err.message);

	/* a big one does not: random-ish tables compress poorly */
	big = fx_large(50000, 5000, 20000, 9);
	cr_assert_eq(bprof_write_file(big, target, NULL, &err), BPROF_E_IO);
	cr_assert_eq(err.sys_errno, ENOSPC, "errno %d: %s", err.sys_errno, err.message);
	cr_assert_eq(temp_files_in(mnt), 0, "temporary file left on a full disk");
	cr_assert(reads_ok(target), "earlier file damaged");
	bprof_recording_free(big);
}

Test(write, invalid_recording_writes_nothing)
{
	struct bprof_recording *r = fx_typical();
	struct bprof_error err = { 0 };

	r->counts[0].user_stack_id = 12345; /* no such stack */
	cr_assert_eq(bprof_write_file(r, at("a.bprof"), NULL, &err), BPROF_E_INVAL);
	cr_assert_eq(access(at("a.bprof"), F_OK), -1);
	cr_assert_eq(temp_files_in(dir), 0);
	bprof_recording_free(r);
}

Test(write, custom_mode)
{
	struct bprof_recording *r = fx_empty();
	struct bprof_write_opts o = { .sz = sizeof(o), .mode = 0640 };
	struct bprof_error err = { 0 };
	struct stat st;
	mode_t old = umask(022);

	cr_assert_eq(bprof_write_file(r, at("m.bprof"), &o, &err), 0, "%s", err.message);
	umask(old);
	cr_assert_eq(stat(at("m.bprof"), &st), 0);
	cr_assert_eq(st.st_mode & 07777, 0640);
	bprof_recording_free(r);
}

Test(write, bad_arguments)
{
	struct bprof_recording *r = fx_empty();
	struct bprof_write_opts o = { .sz = sizeof(o), .flags = 0x80 };
	struct bprof_error err = { 0 };

	cr_assert_eq(bprof_write_file(r, at("a.bprof"), &o, &err), BPROF_E_INVAL);
	cr_assert_eq(bprof_write_file(r, "", NULL, &err), BPROF_E_INVAL);
	cr_assert_eq(bprof_write_file(r, at(""), NULL, &err), BPROF_E_INVAL);
	cr_assert_eq(bprof_write_file(NULL, at("a.bprof"), NULL, &err), BPROF_E_INVAL);
	cr_assert_eq(bprof_write_file(r, dir, NULL, &err), BPROF_E_IO, "%s", err.message);
	cr_assert_eq(temp_files_in(dir), 0);
	bprof_recording_free(r);
}

/* ---- reading non-regular files ----------------------------------------- */

Test(write, read_fifo_does_not_hang, .timeout = 10)
{
	struct bprof_recording *r = (void *)1;
	struct bprof_error err = { 0 };

	cr_assert_eq(mkfifo(at("fifo"), 0600), 0);
	cr_assert_eq(bprof_read_file(&r, at("fifo"), NULL, &err), BPROF_E_INVAL);
	cr_assert_null(r);
	cr_assert_neq(strstr(err.message, "FIFO"), NULL, "%s", err.message);
}

Test(write, read_directory)
{
	struct bprof_recording *r = (void *)1;
	struct bprof_error err = { 0 };

	cr_assert_eq(bprof_read_file(&r, dir, NULL, &err), BPROF_E_INVAL);
	cr_assert_null(r);
	cr_assert_neq(strstr(err.message, "directory"), NULL, "%s", err.message);
}

Test(write, read_char_device)
{
	struct bprof_recording *r;
	struct bprof_error err = { 0 };

	cr_assert_eq(bprof_read_file(&r, "/dev/zero", NULL, &err), BPROF_E_INVAL);
}

Test(write, read_missing_file)
{
	struct bprof_recording *r;
	struct bprof_error err = { 0 };

	cr_assert_eq(bprof_read_file(&r, at("nope.bprof"), NULL, &err), BPROF_E_IO);
	cr_assert_eq(err.sys_errno, ENOENT);
}

Test(write, very_long_file_name)
{
	struct bprof_error err = { 0 };
	char name[256];

	memset(name, 'n', 249);
	strcpy(name + 249, ".bprof"); /* 255 bytes: NAME_MAX */
	cr_assert_eq(write_typical(at(name), 0, &err), 0, "%s", err.message);
	cr_assert(reads_ok(at(name)));
	cr_assert_eq(temp_files_in(dir), 0);
}
