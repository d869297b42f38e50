// SPDX-License-Identifier: Apache-2.0
/*
 * knames.c - kernel addresses named in the kernel (knames.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "knames.h"
#include "ksymname.h"
#include "ksymname.skel.h"

struct knames {
	struct ksymname_bpf *obj;
};

int knames_open(struct knames **out)
{
	struct knames *kn = calloc(1, sizeof(*kn));

	*out = NULL;
	if (!kn)
		return -ENOMEM;
	kn->obj = ksymname_bpf__open_and_load();
	if (!kn->obj) {
		int err = -errno;

		free(kn);
		return err ? err : -EINVAL;
	}
	*out = kn;
	return 0;
}

void knames_close(struct knames *kn)
{
	if (!kn)
		return;
	ksymname_bpf__destroy(kn->obj);
	free(kn);
}

/* A number as %#lx prints it: "0" or "0x..." (lower case). */
static bool parse_hex(const char **p, uint64_t *v)
{
	const char *s = *p;
	uint64_t x = 0;
	int digits = 0;

	if (s[0] == '0' && s[1] == 'x')
		s += 2;
	for (;; s++, digits++) {
		int d = *s >= '0' && *s <= '9' ? *s - '0' : *s >= 'a' && *s <= 'f' ? *s - 'a' + 10 : -1;

		if (d < 0)
			break;
		if (digits == 16)
			return false;
		x = x << 4 | (unsigned)d;
	}
	if (!digits)
		return false;
	*v = x;
	*p = s;
	return true;
}

bool knames_parse(const char *text, uint64_t addr, struct kernel_sym *s)
{
	const char *plus, *p, *mod = NULL;
	uint64_t off, size;
	size_t len;

	memset(s, 0, sizeof(*s));
	/* no symbol: the address itself */
	if (text[0] == '0' && text[1] == 'x' && !strchr(text, '+'))
		return true;
	p = strstr(text, " [");
	if (p) {
		mod = p + 2;
		len = strlen(mod);
		if (!len || mod[len - 1] != ']' || len - 1 >= sizeof(s->module))
			return false;
		memcpy(s->module, mod, len - 1);
	}
	/* the name ends at the last '+' before the module */
	plus = NULL;
	for (const char *q = text; *q && (!mod || q < mod - 2); q++)
		if (*q == '+')
			plus = q;
	if (!plus || plus == text || (size_t)(plus - text) >= sizeof(s->name))
		return false;
	p = plus + 1;
	if (!parse_hex(&p, &off) || *p++ != '/' || !parse_hex(&p, &size))
		return false;
	if (mod ? p != mod - 2 : *p != 0)
		return false;
	if (off > addr || !size || off > size)
		return false;
	if (off == size) {
		/* just past the symbol: the kernel's BPF programs answer so
		 * for the address where one ends (so that a return address
		 * after a final call names its program).  Not in it: no
		 * symbol here, as far as the snapshot goes.  Taking it for
		 * an error read all of /proc/kallsyms instead, at most ends
		 * of recordings where the loader's program had run. */
		s->found = false;
		return true;
	}
	memcpy(s->name, text, (size_t)(plus - text));
	s->start = addr - off;
	s->size = size;
	s->found = true;
	return true;
}

static int name_addrs(void *ctx, const uint64_t *addrs, size_t n, struct kernel_sym *out)
{
	struct knames *kn = ctx;
	struct ksymname_bpf__bss *b = kn->obj->bss;
	int fd = bpf_program__fd(kn->obj->progs.name_addrs);

	if (!b)
		return -EIO; /* .bss not mapped: the caller reads kallsyms */
	for (size_t at = 0; at < n; at += KSYMNAME_BATCH) {
		size_t m = n - at < KSYMNAME_BATCH ? n - at : KSYMNAME_BATCH;
		LIBBPF_OPTS(bpf_test_run_opts, run);

		memset(b, 0, sizeof(*b));
		memcpy(b->ksym_addr, addrs + at, m * sizeof(*addrs));
		b->ksym_nr = (__u32)m;
		if (bpf_prog_test_run_opts(fd, &run) || run.retval)
			return -EIO;
		for (size_t i = 0; i < m; i++) {
			/* cut (the whole answer is longer) or garbled: the
			 * caller reads kallsyms instead */
			if (b->ksym_len[i] <= 0 || b->ksym_len[i] > KSYMNAME_LEN)
				return -E2BIG;
			b->ksym_text[i][KSYMNAME_LEN - 1] = 0;
			if (!knames_parse(b->ksym_text[i], addrs[at + i], &out[at + i]))
				return -EINVAL;
		}
	}
	return 0;
}

struct kernel_namer knames_namer(struct knames *kn)
{
	return (struct kernel_namer){ .name = name_addrs, .ctx = kn };
}
