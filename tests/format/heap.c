/* SPDX-License-Identifier: Apache-2.0 */
/* format/heap.c: after bprof_heap_tune(), a large block comes from the
 * heap and, where the kernel gives transparent huge pages to regions that
 * ask (enabled: always or madvise), its pages are huge ones. */
#include "heap.h"

#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* AnonHugePages of this process, in KiB; -1 if unreadable. */
static long anon_huge_kib(void)
{
	FILE *f = fopen("/proc/self/smaps_rollup", "r");
	char line[256];
	long kib = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "AnonHugePages: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

static bool thp_offered(void)
{
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
	char line[128] = "";

	if (!f)
		return false;
	if (!fgets(line, sizeof(line), f))
		line[0] = '\0';
	fclose(f);
	return strstr(line, "[always]") || strstr(line, "[madvise]");
}

Test(heap, large_blocks_from_the_heap_in_huge_pages)
{
	if (!bprof_heap_tune((size_t)64 << 20))
		cr_skip_test("malloc is not glibc's (a sanitizer's): the heap policy does not apply");
	size_t n = (size_t)8 << 20;
	long before = anon_huge_kib();
	char *p = malloc(n);

	cr_assert_not_null(p);
	/* below the program break: the heap, not a mapping of its own */
	cr_assert((uintptr_t)p + n <= (uintptr_t)sbrk(0), "an 8 MiB block was mmap'ed");
	memset(p, 1, n);
	long after = anon_huge_kib();
	if (!thp_offered() || before < 0) {
		free(p);
		cr_skip_test("transparent huge pages are off here: only the heap placement is checked");
	}
	/* 8 MiB touched in a span advised MADV_HUGEPAGE: at least one 2 MiB page */
	cr_assert_geq(after - before, 2048, "AnonHugePages %ld -> %ld kB", before, after);
	free(p);
	/* freed, kept: the next block reuses the same pages */
	char *q = malloc(n);
	cr_assert_eq(q, p, "the freed block was not reused");
	free(q);
}
