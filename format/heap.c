/* SPDX-License-Identifier: Apache-2.0 */
/*
 * heap.c - see heap.h.  glibc serves a block of 128 KiB or more (a
 * threshold that grows at run time) from a fresh mmap and returns it on
 * free, so every large buffer costs its pages' faults anew; and it trims
 * the heap's top above 128 KiB, returning pages that the next buffer
 * faults back in.  With the mmap threshold at glibc's maximum (32 MiB on
 * 64-bit) and trimming above the reservation only, large buffers reuse
 * heap pages; the reserved span is advised MADV_HUGEPAGE so that the
 * pages it gets are 2 MiB ones, one fault each.
 */
#include <malloc.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "heap.h"

#define HUGE_PAGE ((uintptr_t)2 << 20)
#define PIECE ((size_t)16 << 20) /* below glibc's largest mmap threshold */
#define MAX_PIECES 64

static void advise(uintptr_t lo, uintptr_t hi)
{
	lo = (lo + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	hi &= ~(HUGE_PAGE - 1);
	if (hi > lo)
		madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
}

bool bprof_heap_tune(size_t reserve)
{
	void *p[MAX_PIECES];
	size_t n = (reserve + PIECE - 1) / PIECE;

	if (n > MAX_PIECES)
		n = MAX_PIECES;
	if (!mallopt(M_MMAP_THRESHOLD, 32 << 20))
		return false; /* not glibc's malloc, or one that refuses: leave it be */
	mallopt(M_TRIM_THRESHOLD, (int)(n * PIECE + PIECE));
	/* Threads share this heap instead of an arena each: prof-report's
	 * read-ahead thread parses recordings the main thread later frees,
	 * and in an arena of its own every recording kept open was new,
	 * unadvised pages (merging 100 runs of a program: 40 -> 20-30 ms). */
	mallopt(M_ARENA_MAX, 1);
	/* Grow the heap by the reservation (sbrk: address space, untouched),
	 * then hand it back to malloc's top chunk, which stays (trimming
	 * starts above it).  The pieces are advised as one span where the
	 * heap grew contiguously, else one by one. */
	size_t got = 0;
	for (; got < n; got++)
		if (!(p[got] = malloc(PIECE)))
			break;
	bool contiguous = got > 0;
	for (size_t i = 1; i < got && contiguous; i++)
		contiguous = (uintptr_t)p[i] > (uintptr_t)p[i - 1] &&
			     (uintptr_t)p[i] - (uintptr_t)p[i - 1] - PIECE < 4096;
	if (contiguous)
		advise((uintptr_t)p[0], (uintptr_t)p[got - 1] + PIECE);
	else
		for (size_t i = 0; i < got; i++)
			advise((uintptr_t)p[i], (uintptr_t)p[i] + PIECE);
	for (size_t i = got; i-- > 0;)
		free(p[i]);
	return true;
}
