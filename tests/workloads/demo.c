// SPDX-License-Identifier: Apache-2.0
/*
 * demo [DURATION]: the README's first-contact workload (~5 s, 2 threads).
 * Each thread runs a small pipeline over generated records:
 *   parse_records -> hash_records -> compress_block -> write_block
 * with a libm call (score_records: sqrt/log) and real syscalls (write to
 * /dev/null), so a profile shows distinct user, library and kernel frames.
 */
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include "common.h"

#define RECORDS 4096

struct record {
	uint32_t key;
	uint32_t value;
	char text[24];
};

struct stage_buf {
	struct record rec[RECORDS];
	uint64_t hashes[RECORDS];
	unsigned char out[RECORDS * 8];
	size_t out_len;
};

static double deadline;

NOINLINE static void generate_input(char *in, size_t len, unsigned seed)
{
	KEEP_FRAME();
	for (size_t i = 0; i < len; i++) {
		seed = seed * 1103515245 + 12345;
		in[i] = (i % 16 == 15) ? '\n' : 'a' + (seed >> 16) % 26;
	}
}

NOINLINE static void parse_records(const char *in, struct stage_buf *b)
{
	KEEP_FRAME();
	for (int i = 0; i < RECORDS; i++) {
		const char *line = in + (size_t)i * 16;
		uint32_t k = 0;

		for (int j = 0; j < 15; j++)
			k = k * 31 + (unsigned char)line[j];
		b->rec[i].key = k;
		b->rec[i].value = k ^ (k >> 7);
		memcpy(b->rec[i].text, line, 15);
		b->rec[i].text[15] = 0;
	}
}

NOINLINE static uint64_t fnv1a(const void *p, size_t n)
{
	const unsigned char *s = p;
	uint64_t h = 0xcbf29ce484222325ULL;

	KEEP_FRAME();
	while (n--)
		h = (h ^ *s++) * 0x100000001b3ULL;
	return h;
}

NOINLINE static void hash_records(struct stage_buf *b)
{
	KEEP_FRAME();
	for (int round = 0; round < 4; round++)
		for (int i = 0; i < RECORDS; i++)
			b->hashes[i] = fnv1a(&b->rec[i], sizeof(b->rec[i])) + round;
}

NOINLINE static double score_records(const struct stage_buf *b)
{
	double s = 0;

	KEEP_FRAME();
	for (int i = 0; i < RECORDS; i++)
		s += sqrt((double)(b->hashes[i] & 0xffff)) + log1p((double)(b->rec[i].value & 0xff));
	return s;
}

/* A toy run-length + delta coder: enough work to show up. */
NOINLINE static void compress_block(struct stage_buf *b)
{
	size_t o = 0;
	uint64_t prev = 0;

	KEEP_FRAME();
	for (int round = 0; round < 3; round++) {
		o = 0;
		for (int i = 0; i < RECORDS; i++) {
			uint64_t d = b->hashes[i] - prev;

			prev = b->hashes[i];
			while (d >= 0x80 && o < sizeof(b->out) - 1) {
				b->out[o++] = (d & 0x7f) | 0x80;
				d >>= 7;
			}
			if (o < sizeof(b->out))
				b->out[o++] = d;
		}
	}
	b->out_len = o;
}

NOINLINE static void write_block(int fd, const struct stage_buf *b)
{
	KEEP_FRAME();
	for (size_t off = 0; off < b->out_len; off += 512)
		if (write(fd, b->out + off, b->out_len - off < 512 ? b->out_len - off : 512) < 0)
			break;
}

NOINLINE static void *pipeline(void *arg)
{
	static __thread struct stage_buf b;
	static __thread char in[RECORDS * 16];
	int fd = open("/dev/null", O_WRONLY);
	unsigned seed = (unsigned)(uintptr_t)arg;
	double score = 0;

	KEEP_FRAME();
	while (now_s() < deadline) {
		generate_input(in, sizeof(in), seed++);
		parse_records(in, &b);
		hash_records(&b);
		score += score_records(&b);
		compress_block(&b);
		write_block(fd, &b);
	}
	if (fd >= 0)
		close(fd);
	return (void *)(uintptr_t)(score > 0);
}

int main(int argc, char **argv)
{
	pthread_t t;

	deadline = now_s() + arg_seconds(argc, argv, 1, 5);
	pthread_create(&t, NULL, pipeline, (void *)1);
	pipeline((void *)2);
	pthread_join(t, NULL);
	return 0;
}
