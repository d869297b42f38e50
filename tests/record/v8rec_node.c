// SPDX-License-Identifier: Apache-2.0
/*
 * v8rec_node.c - record/v8/v8rec.c against the node binary of this machine:
 * the layout it reads from the v8dbg_ symbols and where it says the
 * interpreter's code and the JIT code are, for an image mapped as V8 maps
 * node (its text, and a second copy of the embedded blob elsewhere).  A
 * missing node fails with CI=true (tools/install-deps.sh installs it).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "v8/v8rec.h"

#define NODE "/usr/bin/node"

static Elf *open_elf(const char *path, int *fd)
{
	elf_version(EV_CURRENT);
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0)
		return NULL;
	return elf_begin(*fd, ELF_C_READ_MMAP, NULL);
}

static bool need_node(void)
{
	if (access(NODE, R_OK) == 0)
		return true;
	if (getenv("CI") && !strcmp(getenv("CI"), "true"))
		cr_assert_fail(NODE " missing (tools/install-deps.sh)");
	cr_skip_test(NODE " missing");
	return false;
}

/* node's executable PT_LOADs (node 20 has three), mapped where they link
 * (bias 0: the test only needs one consistent bias); their number */
static uint32_t text_of(Elf *elf, struct manifest_mapping *m, uint32_t max)
{
	uint32_t k = 0;
	size_t n;

	if (elf_getphdrnum(elf, &n))
		return 0;
	for (size_t i = 0; i < n && k < max; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		m[k].start = ph.p_vaddr & ~0xfffULL;
		m[k].end = ph.p_vaddr + ph.p_memsz;
		m[k].offset = ph.p_offset & ~0xfffULL;
		m[k].obj = 0;
		k++;
	}
	return k;
}

/* The mapping of maps[0, n) that holds vaddr. */
static const struct manifest_mapping *holding(const struct manifest_mapping *m, uint32_t n,
					      uint64_t vaddr)
{
	for (uint32_t i = 0; i < n; i++)
		if (vaddr >= m[i].start && vaddr < m[i].end)
			return &m[i];
	return NULL;
}

Test(v8rec, node_layout_and_code_ranges)
{
	struct manifest_mapping maps[8];
	const struct manifest_mapping *t;
	struct v8_proc w;
	struct v8rec *v;
	uint64_t blob_len, boff;
	uint32_t nt;
	Elf *elf;
	int fd;

	if (!need_node())
		return;
	elf = open_elf(NODE, &fd);
	cr_assert_not_null(elf);
	cr_assert_eq(v8rec_create(&v, -1, -1), 0);
	v8rec_object(v, 0, elf);
	nt = text_of(elf, maps, 7);
	cr_assert(nt > 0);
	/* no second copy yet: the text's blob only, no code range */
	v8rec_image(v, 100, 1, maps, nt);
	cr_assert_eq(v8rec_walk_info(v, 100, 1, &w), 0, "node not recognized as V8");
	cr_assert_eq(v8rec_nr_processes(v), 1);
	/* the frame slots every node 12-22 has: fp-16 function, fp-32
	 * bytecode array, fp-40 bytecode offset (as indexes from fp - 64) */
	cr_assert_eq(w.fp_function, V8_FRAME_READ - 16);
	cr_assert_eq(w.fp_bytecode_array, V8_FRAME_READ - 32);
	cr_assert_eq(w.fp_bytecode_offset, V8_FRAME_READ - 40);
	/* fields inside what the walk reads of an object, tagged-aligned */
	cr_assert(w.fn_shared >= 8 && w.fn_shared % 8 == 0 && w.fn_shared < 64);
	cr_assert(w.sfi_function_data >= 8 && w.sfi_function_data <= V8_OBJ_READ - 8);
	cr_assert(w.sfi_name_or_scope_info >= 8 && w.sfi_name_or_scope_info <= V8_OBJ_READ - 8);
	cr_assert(w.sfi_script_or_debug_info >= 8 && w.sfi_script_or_debug_info <= V8_OBJ_READ - 8);
	cr_assert_neq(w.sfi_name_or_scope_info, w.sfi_script_or_debug_info);
	cr_assert(w.map_instance_type > 0 && w.map_instance_type < 64);
	cr_assert(w.type_sfi > 0);
	/* node 20's optimized code layout (record/DESIGN.md "V8 frames"):
	 * JSFunction.code, the Code's entry point and instruction size */
	cr_assert_eq(w.fn_code, 48);
	cr_assert_eq(w.code_entry, 40);
	cr_assert_eq(w.code_size, 56);
	cr_assert(w.type_code > 0);
	/* the embedded blob: node's Builtins_* (~1.7 MiB in node 20) */
	blob_len = w.blob_end - w.blob_start;
	t = holding(maps, nt, w.blob_start);
	cr_assert(t && w.blob_end <= t->end,
		  "blob [%llx, %llx) outside the text", (unsigned long long)w.blob_start,
		  (unsigned long long)w.blob_end);
	cr_assert(blob_len > (64u << 10) && blob_len < (64u << 20), "blob of %llu bytes",
		  (unsigned long long)blob_len);
	for (int k = 0; k < V8_CODE_RANGES; k++)
		cr_assert(!w.code_start[k] && !w.code_end[k]);

	/* V8's copy of the blob, mapped from the same file bytes elsewhere:
	 * its code range (JIT code) is around it */
	boff = w.blob_start - t->start + t->offset;
	maps[nt] = (struct manifest_mapping){
		.start = 0x7f0000000000ULL, .end = 0x7f0000000000ULL + ((blob_len + 0x2000) & ~0xfffULL),
		.offset = boff & ~0xfffULL, .obj = 0,
	};
	v8rec_image(v, 100, 1, maps, nt + 1);
	cr_assert_eq(v8rec_walk_info(v, 100, 1, &w), 0);
	cr_assert_eq(v8rec_nr_processes(v), 1, "one process, updated");
	{
		uint64_t copy = maps[nt].start + (boff - maps[nt].offset);

		cr_assert_eq(w.code_start[0], copy - (512ULL << 20));
		cr_assert_eq(w.code_end[0], copy + (512ULL << 20));
		cr_assert(!w.code_start[1] && !w.code_end[1]);
		cr_assert_eq(w.blob_end - w.blob_start, blob_len, "the text's copy is still the blob");
	}
	v8rec_image_gone(v, 100, 1);
	v8rec_destroy(v);
	elf_end(elf);
	close(fd);
}

Test(v8rec, an_object_without_v8dbg_symbols_is_not_v8)
{
	struct manifest_mapping m;
	struct v8_proc w;
	struct v8rec *v;
	Elf *elf;
	int fd;

	elf = open_elf("/bin/true", &fd);
	cr_assert_not_null(elf);
	cr_assert_eq(v8rec_create(&v, -1, -1), 0);
	v8rec_object(v, 0, elf);
	cr_assert_eq(text_of(elf, &m, 1), 1);
	v8rec_image(v, 200, 1, &m, 1);
	cr_assert_eq(v8rec_walk_info(v, 200, 1, &w), -ENOENT);
	cr_assert_eq(v8rec_nr_processes(v), 0);
	v8rec_destroy(v);
	elf_end(elf);
	close(fd);
}

/*
 * nodejs.org's node 16, 18 and 22 (V8 9.4, 10.2, 12.4), where the e2e
 * tests record_v8_node* fetched them (tests/record/node-setup.sh): the
 * layout each exports or has derived (record/DESIGN.md "V8 frames").
 * Skipped where none was fetched, but with CI=true (tools/test.sh fetches
 * them before the unit tests).
 */
static const struct node_layout {
	const char *version;
	uint16_t fn_code, code_header, code_entry, code_size;
} node_layouts[] = {
	{ "16.20.2", 48, 96, 0, 40 },   /* Code holds its instructions */
	{ "18.20.8", 48, 128, 0, 40 },
	{ "22.23.3", 24, 0, 40, 52 },   /* entry point field, InstructionStream */
};

Test(v8rec, official_node_builds_layouts)
{
	const char *cache = getenv("BPROF_NODE_CACHE") ? getenv("BPROF_NODE_CACHE") :
							   "/var/cache/bprof/node";
	uint32_t tested = 0;

	for (size_t i = 0; i < sizeof(node_layouts) / sizeof(node_layouts[0]); i++) {
		const struct node_layout *l = &node_layouts[i];
		struct manifest_mapping maps[8];
		struct v8_proc w;
		struct v8rec *v;
		char path[512];
		uint32_t nt;
		Elf *elf;
		int fd;

		snprintf(path, sizeof(path), "%s/%s/package/bin/node", cache, l->version);
		if (access(path, R_OK))
			continue;
		elf = open_elf(path, &fd);
		cr_assert_not_null(elf, "%s", path);
		cr_assert_eq(v8rec_create(&v, -1, -1), 0);
		v8rec_object(v, 0, elf);
		nt = text_of(elf, maps, 6);
		cr_assert(nt > 0);
		v8rec_image(v, 100, 1, maps, nt);
		cr_assert_eq(v8rec_walk_info(v, 100, 1, &w), 0, "node %s not walked", l->version);
		/* V8 9.4 exports no interpreter slots: derived, as V8 10's */
		cr_assert_eq(w.fp_function, V8_FRAME_READ - 16, "%s", l->version);
		cr_assert_eq(w.fp_bytecode_array, V8_FRAME_READ - 32, "%s", l->version);
		cr_assert_eq(w.fp_bytecode_offset, V8_FRAME_READ - 40, "%s", l->version);
		/* V8 12.4 exports neither: derived from its name and length */
		cr_assert_eq(w.sfi_function_data, 8, "%s", l->version);
		cr_assert_eq(w.sfi_name_or_scope_info, 16, "%s", l->version);
		cr_assert_eq(w.sfi_script_or_debug_info, 32, "%s", l->version);
		cr_assert_eq(w.fn_code, l->fn_code, "%s: JSFunction.code %u", l->version, w.fn_code);
		cr_assert_eq(w.code_header, l->code_header, "%s", l->version);
		cr_assert_eq(w.code_entry, l->code_entry, "%s", l->version);
		cr_assert_eq(w.code_size, l->code_size, "%s", l->version);
		cr_assert(w.type_code > 0);
		if (l->code_header) {
			/* no copy of the blob: the code range is found by its
			 * anonymous executable memory, cut at the text's end */
			uint64_t text_end = maps[nt - 1].end, at = text_end + (64ULL << 20);

			cr_assert(!w.code_start[0] && !w.code_end[0]);
			maps[nt] = (struct manifest_mapping){
				.start = at, .end = at + 0x3c000, .offset = 0, .obj = BPROF_NO_OBJECT,
			};
			v8rec_image(v, 100, 1, maps, nt + 1);
			cr_assert_eq(v8rec_walk_info(v, 100, 1, &w), 0);
			cr_assert_eq(w.code_start[0], text_end, "cut at the text's end");
			cr_assert_eq(w.code_end[0], at + (512ULL << 20));
			cr_assert(!w.code_start[1] && !w.code_end[1]);
			/* its pages no longer executable: the range stays */
			v8rec_image(v, 100, 1, maps, nt);
			cr_assert_eq(v8rec_walk_info(v, 100, 1, &w), 0);
			cr_assert_eq(w.code_start[0], text_end);
		}
		v8rec_destroy(v);
		elf_end(elf);
		close(fd);
		tested++;
	}
	/* tools/test.sh fetches them before the unit tests: CI may not skip */
	if (!tested && getenv("CI") && !strcmp(getenv("CI"), "true"))
		cr_assert_fail("no node 16, 18 or 22 in %s (tests/record/node-setup.sh fetches them)", cache);
	if (!tested)
		cr_skip_test("no node 16, 18 or 22 in %s (record_v8_node* fetch them)", cache);
}
