// SPDX-License-Identifier: Apache-2.0
/*
 * tabcache_roundtrip.c - record/unwind/tabcache: a table read back from the cache
 * is the table built (row by row, rule by rule, page by page, into a fresh
 * rule set); a file for other bytes or another recorder is not used; every
 * single-byte change of a file is refused; a directory others may write to
 * is not used.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "tabcache.h"

struct built {
	struct ehtab_rules *rs;
	struct ehtab_packed pk;
	struct tabcache_key key;
	uint8_t id[20];
	int fd;
	Elf *elf;
};

/* Build and pack path's table; key it by a made-up build-id (the test is
 * about the cache, not about reading notes). */
static void build(struct built *b, const char *path, uint8_t id_byte)
{
	struct ehtab *t = NULL;
	struct ehtab_error err;
	const uint8_t *src;
	size_t len;
	uint64_t vaddr;

	elf_version(EV_CURRENT);
	b->fd = open(path, O_RDONLY);
	cr_assert_geq(b->fd, 0, "%s: %s", path, strerror(errno));
	b->elf = elf_begin(b->fd, ELF_C_READ_MMAP, NULL);
	cr_assert_not_null(b->elf);
	cr_assert_eq(ehtab_rules_create(&b->rs), 0);
	cr_assert_eq(ehtab_build(&t, b->elf, &err), 0, "%s: %s", path, err.message);
	cr_assert_eq(ehtab_pack(t, b->rs, &b->pk, &err), 0, "%s", err.message);
	ehtab_destroy(t);
	cr_assert_gt(b->pk.nr_rows, 100, "%s: a real table", path);
	cr_assert_eq(ehtab_source(b->elf, &src, &len, &vaddr), 0);
	memset(b->id, id_byte, sizeof(b->id));
	b->key = (struct tabcache_key){
		.build_id = b->id, .build_id_len = sizeof(b->id),
		.src_len = len, .src_vaddr = vaddr, .src_hash = tabcache_hash(src, len, 0),
	};
}

static void unbuild(struct built *b)
{
	ehtab_packed_free(&b->pk);
	ehtab_rules_destroy(b->rs);
	elf_end(b->elf);
	close(b->fd);
}

static char *temp_dir(void)
{
	char *d = strdup("/tmp/bprof-tabcache-XXXXXX");

	cr_assert_not_null(mkdtemp(d));
	return d;
}

static void remove_dir(char *dir)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
	free(dir);
}

static void same_table(const struct built *b, const struct ehtab_packed *got,
		       const struct ehtab_rules *rs)
{
	cr_assert_eq(got->nr_rows, b->pk.nr_rows);
	cr_assert_eq(got->nr_pages, b->pk.nr_pages);
	cr_assert_eq(memcmp(got->pages, b->pk.pages, got->nr_pages * sizeof(*got->pages)), 0);
	for (size_t j = 0; j < got->nr_rows; j++) {
		const struct unwind_rule *want = ehtab_rules_get(b->rs, UNWIND_ROW_RULE(b->pk.rows[j]));
		const struct unwind_rule *have = ehtab_rules_get(rs, UNWIND_ROW_RULE(got->rows[j]));

		cr_assert_eq(UNWIND_ROW_LO(got->rows[j]), UNWIND_ROW_LO(b->pk.rows[j]), "row %zu", j);
		cr_assert(want && have && !memcmp(want, have, sizeof(*want)), "row %zu's rule", j);
	}
}

static const char *const objects[] = {
	"/usr/lib/x86_64-linux-gnu/libc.so.6",
	"/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
	BPROF_WORKLOADS_DIR "/uw-gcc",
};

Test(tabcache, read_back_is_the_table_built)
{
	char *dir = temp_dir();
	struct tabcache *c;
	const char *why;

	cr_assert_eq(tabcache_open(&c, dir, &why), 0, "%s", why);
	for (size_t i = 0; i < sizeof(objects) / sizeof(objects[0]); i++) {
		struct built b;
		struct ehtab_rules *rs;
		struct ehtab_packed got;

		build(&b, objects[i], (uint8_t)(0x10 + i));
		cr_assert_eq(tabcache_get(c, &b.key, b.rs, &got), -ENOENT, "nothing cached yet");
		cr_assert_eq(tabcache_put(c, &b.key, &b.pk, b.rs), 0);
		/* a fresh rule set: indices differ, rules must not */
		cr_assert_eq(ehtab_rules_create(&rs), 0);
		cr_assert_eq(tabcache_get(c, &b.key, rs, &got), 0, "%s", objects[i]);
		same_table(&b, &got, rs);
		ehtab_packed_free(&got);
		ehtab_rules_destroy(rs);
		unbuild(&b);
	}
	struct tabcache_stats st;

	tabcache_stats(c, &st);
	cr_assert_eq(st.written, 3);
	cr_assert_eq(st.hits, 3);
	tabcache_close(c);
	remove_dir(dir);
}

/* A cache in a new directory (returned) holding ld.so's table, built in b. */
static char *cache_with_ldso(struct tabcache **c, struct built *b, uint8_t id_byte)
{
	char *dir = temp_dir();
	const char *why;

	cr_assert_eq(tabcache_open(c, dir, &why), 0, "%s", why);
	build(b, objects[1], id_byte);
	cr_assert_eq(tabcache_put(*c, &b->key, &b->pk, b->rs), 0);
	return dir;
}

Test(tabcache, other_bytes_are_not_used)
{
	struct tabcache *c;
	struct built b;
	struct ehtab_packed got;
	char *dir = cache_with_ldso(&c, &b, 0x20);
	struct tabcache_key k = b.key;

	k.src_hash ^= 1;
	cr_assert_eq(tabcache_get(c, &k, b.rs, &got), -ENOENT, "other .eh_frame bytes");
	k = b.key;
	k.src_len++;
	cr_assert_eq(tabcache_get(c, &k, b.rs, &got), -ENOENT, "another length");
	k = b.key;
	k.src_vaddr += 4096;
	cr_assert_eq(tabcache_get(c, &k, b.rs, &got), -ENOENT, "another address");
	cr_assert_eq(tabcache_get(c, &b.key, b.rs, &got), 0);
	ehtab_packed_free(&got);
	unbuild(&b);
	tabcache_close(c);
	remove_dir(dir);
}

/* the file as written, in memory */
static uint8_t *slurp(const char *dir, size_t *len)
{
	char cmd[512];
	FILE *f;
	uint8_t *buf = malloc(1 << 20);

	snprintf(cmd, sizeof(cmd), "cat %s/*.tab", dir);
	f = popen(cmd, "r");
	cr_assert_not_null(f);
	*len = fread(buf, 1, 1 << 20, f);
	pclose(f);
	cr_assert_gt(*len, 200);
	return buf;
}

Test(tabcache, every_changed_byte_is_refused)
{
	struct tabcache *c;
	struct built b;
	struct ehtab_packed got;
	struct tabcache_key k;
	const uint8_t *rid;
	size_t len, rid_len;
	char *dir = cache_with_ldso(&c, &b, 0x30);
	uint8_t *buf = slurp(dir, &len);

	/* the writer's id as the file says: then only the bytes decide */
	uint8_t *copy = malloc(len);

	memcpy(copy, buf, len);
	cr_assert_eq(tabcache_seal(copy, len, &k, &rid, &rid_len), 0);
	cr_assert_eq(tabcache_parse(buf, len, rid, rid_len, &b.key, b.rs, &got), 0, "intact");
	ehtab_packed_free(&got);
	for (size_t i = 0; i < len; i++) {
		buf[i] ^= 0x40;
		cr_assert_neq(tabcache_parse(buf, len, rid, rid_len, &b.key, b.rs, &got), 0,
			      "byte %zu changed, still accepted", i);
		buf[i] ^= 0x40;
	}
	for (size_t cut = 0; cut < len; cut += 97)
		cr_assert_neq(tabcache_parse(buf, cut, rid, rid_len, &b.key, b.rs, &got), 0,
			      "cut at %zu, still accepted", cut);
	uint8_t other[20];

	memset(other, 0x55, sizeof(other));
	cr_assert_eq(tabcache_parse(buf, len, other, sizeof(other), &b.key, b.rs, &got), -ENOENT,
		     "another recorder's file");
	free(copy);
	free(buf);
	unbuild(&b);
	tabcache_close(c);
	remove_dir(dir);
}

Test(tabcache, a_directory_others_may_write_is_not_used)
{
	char *dir = temp_dir();
	struct tabcache *c;
	const char *why = NULL;

	cr_assert_eq(chmod(dir, 0777), 0);
	cr_assert_eq(tabcache_open(&c, dir, &why), -EPERM);
	cr_assert_not_null(why);
	cr_assert_null(c);
	remove_dir(dir);
}
