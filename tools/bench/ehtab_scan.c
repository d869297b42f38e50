// SPDX-License-Identifier: Apache-2.0
/*
 * bench_ehtab DIR...: build the unwind table of every ELF object under the
 * directories (not following symlinks, each file once), as prof-record
 * would on the target, and print what it costs: objects, .eh_frame bytes,
 * rows, packed bytes, build time, distinct rules over all objects, failures
 * by message, unexpressible rows, libc's figures and the three slowest
 * objects.  Used by tools/bench/run (part 7); not a test.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "ehtab.h"

struct obj {
	char path[512];
	double ms;
	uint64_t rows, bytes, eh;
};

/* nftw has no user pointer: the scan's state lives here, in main's frame */
static struct scan {
	struct ehtab_rules *rules;
	uint64_t files, objects, no_eh, failed, rows, packed, eh_bytes, invalid, signal;
	double ms;
	struct obj worst[3], libc;
	char fail_msg[16][256];
	unsigned fail_n[16], nfail;
	dev_t devs[4096];
	ino_t inos[4096];
	unsigned nseen;
} *S;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void note_failure(const char *msg)
{
	for (unsigned i = 0; i < S->nfail; i++)
		if (!strcmp(S->fail_msg[i], msg)) {
			S->fail_n[i]++;
			return;
		}
	if (S->nfail < 16) {
		snprintf(S->fail_msg[S->nfail], sizeof(S->fail_msg[0]), "%s", msg);
		S->fail_n[S->nfail++] = 1;
	}
}

static void one(const char *path, const struct stat *st)
{
	struct ehtab_error err;
	struct ehtab *t = NULL;
	struct ehtab_packed pk;
	struct ehtab_stats es;
	unsigned char magic[4];
	struct obj o = { 0 };
	double t0;
	int fd, rc;
	Elf *e;

	for (unsigned i = 0; i < S->nseen; i++) /* hard links: once */
		if (S->devs[i] == st->st_dev && S->inos[i] == st->st_ino)
			return;
	if (S->nseen < 4096) {
		S->devs[S->nseen] = st->st_dev;
		S->inos[S->nseen++] = st->st_ino;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (pread(fd, magic, 4, 0) != 4 || memcmp(magic, ELFMAG, 4)) {
		close(fd);
		return;
	}
	S->files++;
	t0 = now_ms();
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	rc = e ? ehtab_build(&t, e, &err) : -EINVAL;
	if (rc == 0)
		rc = ehtab_pack(t, S->rules, &pk, &err);
	o.ms = now_ms() - t0;
	if (getenv("BENCH_EHTAB_VERBOSE") && rc)
		fprintf(stderr, "%s: %s\n", path, e ? err.message : "libelf cannot read it");
	if (rc == -ENOENT) {
		S->no_eh++;
	} else if (rc) {
		S->failed++;
		note_failure(e ? err.message : "not an ELF object libelf reads");
	} else {
		ehtab_stats(t, &es);
		snprintf(o.path, sizeof(o.path), "%s", path);
		o.rows = es.rows;
		o.eh = es.eh_frame_bytes;
		o.bytes = pk.nr_rows * 4 + pk.nr_pages * 12;
		S->objects++;
		S->rows += o.rows;
		S->packed += o.bytes;
		S->eh_bytes += o.eh;
		S->invalid += es.invalid_rows;
		S->signal += es.signal_fdes;
		S->ms += o.ms;
		for (int i = 0; i < 3; i++)
			if (o.ms > S->worst[i].ms) {
				memmove(&S->worst[i + 1], &S->worst[i], (2 - i) * sizeof(o));
				S->worst[i] = o;
				break;
			}
		if (strstr(path, "/libc.so.6"))
			S->libc = o;
		ehtab_packed_free(&pk);
	}
	ehtab_destroy(t);
	if (e)
		elf_end(e);
	close(fd);
}

static int visit(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)ftw;
	if (type == FTW_F && S_ISREG(st->st_mode) && st->st_size > 64)
		one(path, st);
	return 0;
}

int main(int argc, char **argv)
{
	struct scan s = { 0 };

	if (argc < 2) {
		fprintf(stderr, "usage: %s DIR...\n", argv[0]);
		return 2;
	}
	S = &s;
	elf_version(EV_CURRENT);
	if (ehtab_rules_create(&s.rules)) {
		fprintf(stderr, "out of memory\n");
		return 1;
	}
	for (int i = 1; i < argc; i++)
		if (nftw(argv[i], visit, 64, FTW_PHYS) != 0)
			fprintf(stderr, "%s: %s\n", argv[i], strerror(errno));
	printf("elf_files %" PRIu64 "\nobjects %" PRIu64 "\nno_eh_frame %" PRIu64 "\nfailed %" PRIu64
	       "\neh_frame_bytes %" PRIu64 "\nrows %" PRIu64 "\npacked_bytes %" PRIu64
	       "\nbuild_ms %.1f\ndistinct_rules %zu\ninvalid_rows %" PRIu64 "\nsignal_fdes %" PRIu64
	       "\n", s.files, s.objects, s.no_eh, s.failed, s.eh_bytes, s.rows, s.packed, s.ms,
	       ehtab_rules_count(s.rules), s.invalid, s.signal);
	if (s.libc.rows)
		printf("libc %s %" PRIu64 " %" PRIu64 " %" PRIu64 " %.2f\n", s.libc.path, s.libc.eh,
		       s.libc.rows, s.libc.bytes, s.libc.ms);
	for (int i = 0; i < 3; i++)
		if (s.worst[i].rows)
			printf("slowest %s %" PRIu64 " %" PRIu64 " %" PRIu64 " %.2f\n", s.worst[i].path,
			       s.worst[i].eh, s.worst[i].rows, s.worst[i].bytes, s.worst[i].ms);
	for (unsigned i = 0; i < s.nfail; i++)
		printf("failure %u %s\n", s.fail_n[i], s.fail_msg[i]);
	ehtab_rules_destroy(s.rules);
	return 0;
}
