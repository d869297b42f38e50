// SPDX-License-Identifier: Apache-2.0
/*
 * kernel.c - what prof-report needs to symbolize kernel addresses on
 * another machine: the kernel's build-id and release, where _stext landed
 * (KASLR), the modules' bases and build-ids and a kallsyms snapshot.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <elf.h>
#include "kernel.h"

#ifndef NT_GNU_BUILD_ID
#define NT_GNU_BUILD_ID 3
#endif

uint32_t notes_build_id(const void *buf, size_t len, uint8_t out[BPROF_BUILD_ID_MAX])
{
	const unsigned char *p = buf;
	size_t off = 0;

	while (len - off >= 12) {
		uint32_t namesz, descsz, type;
		size_t name_off, desc_off, next;

		memcpy(&namesz, p + off, 4);
		memcpy(&descsz, p + off + 4, 4);
		memcpy(&type, p + off + 8, 4);
		name_off = off + 12;
		desc_off = name_off + ((namesz + 3) & ~3u);
		next = desc_off + ((descsz + 3) & ~3u);
		if (desc_off > len || next > len || desc_off < name_off)
			return 0;
		if (type == NT_GNU_BUILD_ID && namesz == 4 && !memcmp(p + name_off, "GNU", 4) &&
		    descsz > 0 && descsz <= BPROF_BUILD_ID_MAX) {
			memcpy(out, p + desc_off, descsz);
			return descsz;
		}
		off = next;
	}
	return 0;
}

static ssize_t read_small_file(const char *path, void *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t got = 0;
	ssize_t n;

	if (fd < 0)
		return -errno;
	while (got < cap && (n = read(fd, (char *)buf + got, cap - got)) > 0)
		got += n;
	close(fd);
	return got;
}

static int collect_modules(struct bprof_kernel *k)
{
	FILE *f = fopen("/proc/modules", "re");
	char *line = NULL;
	size_t cap = 0, alloc = 0;

	if (!f)
		return 0; /* no module support */
	while (getline(&line, &cap, f) > 0) {
		char name[256], path[512];
		unsigned long long size, base;
		unsigned char notes[1024];
		struct bprof_module *m;
		ssize_t n;

		if (sscanf(line, "%255s %llu %*s %*s %*s %llx", name, &size, &base) != 3)
			continue;
		if (k->nr_modules == alloc) {
			size_t na = alloc ? alloc * 2 : 32;
			void *nm = realloc(k->modules, na * sizeof(*k->modules));

			if (!nm)
				goto nomem;
			k->modules = nm;
			alloc = na;
		}
		m = &k->modules[k->nr_modules];
		memset(m, 0, sizeof(*m));
		m->name = strdup(name);
		if (!m->name)
			goto nomem;
		m->base = base;
		m->size = size;
		snprintf(path, sizeof(path), "/sys/module/%s/notes/.note.gnu.build-id", name);
		n = read_small_file(path, notes, sizeof(notes));
		if (n > 0)
			m->build_id_len = notes_build_id(notes, n, m->build_id);
		k->nr_modules++;
	}
	free(line);
	fclose(f);
	return 0;
nomem:
	free(line);
	fclose(f);
	return -ENOMEM;
}

static int module_index(const struct bprof_kernel *k, const char *name)
{
	for (uint32_t i = 0; i < k->nr_modules; i++)
		if (!strcmp(k->modules[i].name, name))
			return i;
	return -1;
}

static int cmp_ksym(const void *a, const void *b)
{
	const struct bprof_ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* The list starts with vmlinux's symbols in address order (~100 k) and
 * ends with the modules', BPF programs' and trampolines' in any order: the
 * first run needs only its equal-address names put in order (insertion
 * sort, linear on nearly sorted input), the rest a qsort, then one merge.
 * A qsort of everything was 5 % of a 4 s recording's CPU. */
int kernel_sort_ksyms(struct bprof_ksym *s, uint32_t n)
{
	uint32_t run = 1, a, b, o = 0;
	struct bprof_ksym *tmp;

	while (run < n && s[run].addr >= s[run - 1].addr)
		run++;
	for (uint32_t i = 1; i < run; i++) {
		struct bprof_ksym x = s[i];
		uint32_t j = i;

		while (j > 0 && cmp_ksym(&s[j - 1], &x) > 0) {
			s[j] = s[j - 1];
			j--;
		}
		s[j] = x;
	}
	if (run == n)
		return 0;
	qsort(s + run, n - run, sizeof(*s), cmp_ksym);
	tmp = malloc((size_t)n * sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	for (a = 0, b = run; a < run || b < n;)
		tmp[o++] = b >= n || (a < run && cmp_ksym(&s[a], &s[b]) <= 0) ? s[a++] : s[b++];
	memcpy(s, tmp, (size_t)n * sizeof(*s));
	free(tmp);
	return 0;
}

/*
 * Split one /proc/kallsyms line, "ADDR T name" or "ADDR t name\t[module]",
 * in place.  By hand rather than sscanf: 120k lines through sscanf were a
 * third of prof-record's own CPU time.  Returns false on a malformed line.
 */
static bool split_kallsyms_line(char *line, unsigned long long *addr, char *type, char **name,
				char **mod)
{
	char *p = line;
	unsigned long long a = 0;
	int digits = 0;

	for (;; p++, digits++) {
		char c = *p;
		int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
			c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
		if (v < 0)
			break;
		if (digits == 16)
			return false;
		a = a << 4 | (unsigned)v;
	}
	if (!digits || *p != ' ' || !p[1] || p[2] != ' ')
		return false;
	*addr = a;
	*type = p[1];
	*name = p + 3;
	p = *name + strcspn(*name, " \t\n");
	*mod = NULL;
	if (*p == '\t' && p[1] == '[') {
		char *m = p + 2, *e = strchr(m, ']');
		if (e) {
			*e = 0;
			*mod = m;
		}
	}
	*p = 0;
	return **name != 0;
}

/* One pass over /proc/kallsyms: _stext always, text symbols if asked
 * (and then _etext into *etext). */
static int collect_kallsyms(struct bprof_kernel *k, bool with_kallsyms, bool *hidden,
			    uint64_t *etext)
{
	FILE *f = fopen("/proc/kallsyms", "re");
	char *line = NULL;
	size_t cap = 0, alloc = 0;
	bool any_nonzero = false, any = false, sorted = true;

	if (!f)
		return 0;
	while (getline(&line, &cap, f) > 0) {
		unsigned long long addr;
		char type, *name, *mod;
		int mi = -1;
		struct bprof_ksym *s;

		if (!split_kallsyms_line(line, &addr, &type, &name, &mod))
			continue;
	any = true;
		if (addr)
			any_nonzero = true;
		if (!k->stext && !strcmp(name, "_stext"))
			k->stext = addr;
		if (etext && !*etext && !strcmp(name, "_etext"))
			*etext = addr;
		/* without symbols to keep, _stext (near the top) is all we
		 * read: the kernel formats all ~120k lines otherwise */
		if (!with_kallsyms && k->stext && any_nonzero)
			break;
		if (!with_kallsyms || !(type == 't' || type == 'T' || type == 'w' || type == 'W'))
			continue;
		if (mod && mod[0]) {
			mi = module_index(k, mod);
			/* bpf programs and ftrace trampolines live in pseudo modules
			 * ([bpf], [__builtin__ftrace]) that /proc/modules lacks */
		}
		if (k->nr_ksyms == alloc) {
			size_t na = alloc ? alloc * 2 : 65536;
			void *nk = realloc(k->ksyms, na * sizeof(*k->ksyms));

			if (!nk)
				goto nomem;
			k->ksyms = nk;
			alloc = na;
		}
		s = &k->ksyms[k->nr_ksyms];
		if (k->nr_ksyms && addr < s[-1].addr)
			sorted = false;
		s->addr = addr;
		s->module_index = mi < 0 ? BPROF_NO_OBJECT : (uint32_t)mi;
		s->name = strdup(name);
		if (!s->name)
			goto nomem;
		k->nr_ksyms++;
	}
	free(line);
	fclose(f);
	if (any && !any_nonzero) {
		*hidden = true;
		k->flags |= BPROF_KERNEL_KALLSYMS_HIDDEN;
		for (uint32_t i = 0; i < k->nr_ksyms; i++)
			free(k->ksyms[i].name);
		free(k->ksyms);
		k->ksyms = NULL;
		k->nr_ksyms = 0;
		k->stext = 0;
	}
	/* vmlinux's symbols come sorted; modules usually follow above them */
	if (k->nr_ksyms && !sorted && kernel_sort_ksyms(k->ksyms, k->nr_ksyms))
		return -ENOMEM;
	return 0;
nomem:
	free(line);
	fclose(f);
	return -ENOMEM;
}

static int collect(struct bprof_kernel *k, bool with_kallsyms, bool *hidden, uint64_t *etext)
{
	unsigned char notes[4096];
	struct utsname u;
	ssize_t n;
	int err;

	*hidden = false;
	if (uname(&u) == 0) {
		k->release = strdup(u.release);
		if (!k->release)
			return -ENOMEM;
	}
	n = read_small_file("/sys/kernel/notes", notes, sizeof(notes));
	if (n > 0)
		k->build_id_len = notes_build_id(notes, n, k->build_id);
	err = collect_modules(k);
	if (err)
		return err;
	return collect_kallsyms(k, with_kallsyms, hidden, etext);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Index of the last symbol at or below addr, or -1. */
static long ksym_containing(const struct bprof_ksym *s, uint32_t n, uint64_t addr)
{
	long lo = 0, hi = (long)n - 1, found = -1;

	while (lo <= hi) {
		long mid = lo + (hi - lo) / 2;
		if (s[mid].addr <= addr) {
			found = mid;
			lo = mid + 1;
		} else {
			hi = mid - 1;
		}
	}
	return found;
}

bool kernel_sampled(const struct bprof_recording *rec)
{
	for (uint64_t i = 0; i < rec->nr_counts; i++)
		if (rec->counts[i].kernel_ip || rec->counts[i].kernel_stack_id >= 0)
			return true;
	return false;
}

/* Every kernel address of rec's counts (and return address - 1), sorted,
 * duplicates kept; *out NULL when there is none.  0 or -ENOMEM. */
static int gather_addrs(const struct bprof_recording *rec, uint64_t **out, size_t *out_nr)
{
	uint64_t *addrs = NULL;
	size_t nr = 0, cap = 0;

	for (uint64_t i = 0; i < rec->nr_counts; i++) {
		const struct bprof_count *c = &rec->counts[i];
		const struct bprof_stack *s = c->kernel_stack_id >= 0
						      ? bprof_recording_stack(rec, c->kernel_stack_id)
						      : NULL;
		size_t need = 1 + 2 * (size_t)(s ? s->nr_ips : 0);
		if (nr + need > cap) {
			size_t nc = cap ? cap * 2 : 4096;
			while (nc < nr + need)
				nc *= 2;
			uint64_t *a = realloc(addrs, nc * sizeof(*a));
			if (!a) {
				free(addrs);
				return -ENOMEM;
			}
			addrs = a;
			cap = nc;
		}
		if (c->kernel_ip)
			addrs[nr++] = c->kernel_ip;
		for (uint32_t j = 0; s && j < s->nr_ips; j++) {
			addrs[nr++] = s->ips[j];
			/* a return address may lie just past its symbol (a call as
			 * the last instruction): the report looks up addr - 1 */
			if (j > 0 && s->ips[j])
				addrs[nr++] = s->ips[j] - 1;
		}
	}
	if (nr)
		qsort(addrs, nr, sizeof(*addrs), cmp_u64);
	*out = addrs;
	*out_nr = nr;
	return 0;
}

int kernel_prune_ksyms(struct bprof_kernel *k, const struct bprof_recording *rec)
{
	uint64_t *addrs = NULL;
	size_t nr = 0;
	bool *keep = NULL;
	int err = -ENOMEM;

	if (!k->nr_ksyms)
		return 0;
	if (gather_addrs(rec, &addrs, &nr))
		return -ENOMEM;
	keep = calloc(k->nr_ksyms, sizeof(*keep));
	if (!keep)
		goto out;
	for (size_t i = 0; i < nr; i++) {
		if (i && addrs[i] == addrs[i - 1])
			continue;
		long at = ksym_containing(k->ksyms, k->nr_ksyms, addrs[i]);
		if (at < 0)
			continue;
		keep[at] = true;
		if ((uint32_t)at + 1 < k->nr_ksyms)
			keep[at + 1] = true;
	}
	uint32_t w = 0;
	for (uint32_t i = 0; i < k->nr_ksyms; i++) {
		if (keep[i])
			k->ksyms[w++] = k->ksyms[i];
		else
			free(k->ksyms[i].name);
	}
	k->nr_ksyms = w;
	/* an empty partial table would read as "no snapshot"; say nothing then */
	if (w)
		k->flags |= BPROF_KERNEL_KALLSYMS_PARTIAL;
	err = 0;
out:
	free(keep);
	free(addrs);
	return err;
}

struct kernel_cache {
	struct bprof_ksym *syms; /* the core kernel's text symbols, sorted, names owned */
	uint32_t nr;
	uint64_t stext, etext;   /* _etext is the last of syms: it bounds the one before */
	bool ready;
};

int kernel_cache_create(struct kernel_cache **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void kernel_cache_destroy(struct kernel_cache *c)
{
	if (!c)
		return;
	for (uint32_t i = 0; i < c->nr; i++)
		free(c->syms[i].name);
	free(c->syms);
	free(c);
}

/* Keep the core symbols of a full read k (_stext to _etext, both
 * included).  Failing to is only a cost: the next file reads again. */
static void cache_fill(struct kernel_cache *c, const struct bprof_kernel *k, uint64_t etext)
{
	long first, last;

	if (c->ready || !k->stext || !etext || etext <= k->stext || !k->nr_ksyms)
		return;
	first = ksym_containing(k->ksyms, k->nr_ksyms, k->stext);
	last = ksym_containing(k->ksyms, k->nr_ksyms, etext);
	if (first < 0 || last < first || k->ksyms[first].addr != k->stext ||
	    k->ksyms[last].addr != etext)
		return;
	c->syms = calloc(last - first + 1, sizeof(*c->syms));
	if (!c->syms)
		return;
	for (long i = first; i <= last; i++) {
		struct bprof_ksym *s = &c->syms[c->nr];

		*s = k->ksyms[i];
		if (s->module_index != BPROF_NO_OBJECT)
			continue; /* a module's symbol inside vmlinux's range: not ours */
		s->name = strdup(k->ksyms[i].name);
		if (!s->name)
			goto fail;
		c->nr++;
	}
	c->stext = k->stext;
	c->etext = etext;
	c->ready = true;
	return;
fail:
	for (uint32_t i = 0; i < c->nr; i++)
		free(c->syms[i].name);
	free(c->syms);
	c->syms = NULL;
	c->nr = 0;
}

/* k's symbols for the sorted addrs from the cache, as kernel_prune_ksyms()
 * would keep them from a full read.  1: done; 0: an address lies outside
 * the core kernel (read kallsyms); -ENOMEM. */
static int from_cache(struct bprof_kernel *k, const struct kernel_cache *c, const uint64_t *addrs,
		      size_t nr)
{
	bool *keep;
	uint32_t n = 0;

	if (!nr || addrs[0] < c->stext || addrs[nr - 1] >= c->etext)
		return 0;
	keep = calloc(c->nr, sizeof(*keep));
	if (!keep)
		return -ENOMEM;
	for (size_t i = 0; i < nr; i++) {
		long at;

		if (i && addrs[i] == addrs[i - 1])
			continue;
		at = ksym_containing(c->syms, c->nr, addrs[i]);
		if (at < 0)
			continue;
		keep[at] = true;
		if ((uint32_t)at + 1 < c->nr)
			keep[at + 1] = true;
	}
	for (uint32_t i = 0; i < c->nr; i++)
		n += keep[i];
	k->ksyms = calloc(n ? n : 1, sizeof(*k->ksyms));
	if (!k->ksyms) {
		free(keep);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < c->nr; i++) {
		if (!keep[i])
			continue;
		k->ksyms[k->nr_ksyms] = c->syms[i];
		k->ksyms[k->nr_ksyms].name = strdup(c->syms[i].name);
		if (!k->ksyms[k->nr_ksyms].name) {
			free(keep);
			return -ENOMEM; /* the recording frees what it holds */
		}
		k->nr_ksyms++;
	}
	free(keep);
	if (k->nr_ksyms)
		k->flags |= BPROF_KERNEL_KALLSYMS_PARTIAL;
	return 1;
}

/* Addresses asked of a namer at most (a question costs ~1.3 us here, a
 * full read of /proc/kallsyms ~35 ms). */
#define KERNEL_NAMER_MAX 8192

/* Append a symbol to k (names copied).  0 or -ENOMEM. */
static int add_ksym(struct bprof_kernel *k, uint32_t *cap, uint64_t addr, const char *name,
		    const char *module)
{
	struct bprof_ksym *s;

	if (k->nr_ksyms == *cap) {
		uint32_t nc = *cap ? *cap * 2 : 256;
		void *n = realloc(k->ksyms, nc * sizeof(*k->ksyms));

		if (!n)
			return -ENOMEM;
		k->ksyms = n;
		*cap = nc;
	}
	s = &k->ksyms[k->nr_ksyms];
	s->addr = addr;
	s->module_index = BPROF_NO_OBJECT;
	if (module[0]) {
		int mi = module_index(k, module);

		s->module_index = mi < 0 ? BPROF_NO_OBJECT : (uint32_t)mi;
	}
	s->name = strdup(name);
	if (!s->name)
		return -ENOMEM;
	k->nr_ksyms++;
	return 0;
}

/*
 * k's symbols for the sorted addrs, asked of namer: the symbol containing
 * each address and the one that starts where it ends, which bounds it,
 * as kernel_prune_ksyms() keeps them from a full read.  1: done; 0: the
 * namer could not answer (read kallsyms); -ENOMEM.
 */
static int from_namer(struct bprof_kernel *k, const struct kernel_namer *namer, const uint64_t *addrs,
		      size_t nr)
{
	struct kernel_sym *syms = NULL, *next = NULL;
	uint64_t *uniq = NULL, *ends = NULL;
	size_t nu = 0, ne = 0;
	uint32_t cap = 0;
	int err = -ENOMEM;

	uniq = malloc((nr ? nr : 1) * sizeof(*uniq));
	if (!uniq)
		goto out;
	for (size_t i = 0; i < nr; i++)
		if (!i || addrs[i] != addrs[i - 1])
			uniq[nu++] = addrs[i];
	/* past that many questions, one read of the whole file is cheaper */
	if (nu > KERNEL_NAMER_MAX) {
		err = 0;
		goto out;
	}
	ends = malloc((nu ? nu : 1) * sizeof(*ends));
	syms = calloc(nu ? nu : 1, sizeof(*syms));
	next = calloc(nu ? nu : 1, sizeof(*next));
	if (!ends || !syms || !next)
		goto out;
	if (namer->name(namer->ctx, uniq, nu, syms)) {
		err = 0;
		goto out;
	}
	for (size_t i = 0; i < nu; i++)
		if (syms[i].found && syms[i].start + syms[i].size > syms[i].start)
			ends[ne++] = syms[i].start + syms[i].size;
	if (ne) {
		qsort(ends, ne, sizeof(*ends), cmp_u64);
		size_t w = 0;

		for (size_t i = 0; i < ne; i++)
			if (!w || ends[i] != ends[w - 1])
				ends[w++] = ends[i];
		ne = w;
		if (namer->name(namer->ctx, ends, ne, next)) {
			err = 0;
			goto out;
		}
	}
	for (size_t i = 0; i < nu + ne; i++) {
		const struct kernel_sym *s = i < nu ? &syms[i] : &next[i - nu];

		/* the symbol after another starts where that one ends */
		if (!s->found || (i >= nu && s->start != ends[i - nu]))
			continue;
		if (add_ksym(k, &cap, s->start, s->name, s->module))
			goto out;
	}
	if (k->nr_ksyms && kernel_sort_ksyms(k->ksyms, k->nr_ksyms))
		goto out;
	/* one symbol per (address, name) */
	uint32_t w = 0;

	for (uint32_t i = 0; i < k->nr_ksyms; i++) {
		if (w && k->ksyms[w - 1].addr == k->ksyms[i].addr &&
		    !strcmp(k->ksyms[w - 1].name, k->ksyms[i].name)) {
			free(k->ksyms[i].name);
			continue;
		}
		k->ksyms[w++] = k->ksyms[i];
	}
	k->nr_ksyms = w;
	if (w)
		k->flags |= BPROF_KERNEL_KALLSYMS_PARTIAL;
	err = 1;
out:
	if (err <= 0) {
		for (uint32_t i = 0; i < k->nr_ksyms; i++)
			free(k->ksyms[i].name);
		free(k->ksyms);
		k->ksyms = NULL;
		k->nr_ksyms = 0;
	}
	free(uniq);
	free(ends);
	free(syms);
	free(next);
	return err;
}

int kernel_collect_for(struct bprof_kernel *k, const struct bprof_recording *rec, bool kallsyms,
		       bool full, struct kernel_cache *cache, const struct kernel_namer *namer,
		       bool *hidden)
{
	uint64_t *addrs = NULL, etext = 0;
	size_t nr = 0;
	int err;

	kallsyms = kallsyms && (full || kernel_sampled(rec));
	if (kallsyms && !full && namer) {
		/* the identity, and whether addresses are hidden from us:
		 * then no snapshot, as from a full read */
		err = collect(k, false, hidden, NULL);
		if (err || *hidden)
			return err;
		if (gather_addrs(rec, &addrs, &nr))
			return -ENOMEM;
		err = from_namer(k, namer, addrs, nr);
		free(addrs);
		addrs = NULL;
		if (err)
			return err < 0 ? err : 0;
		goto reread;
	}
	if (!kallsyms || full || !cache || !cache->ready)
		goto read;
	err = collect(k, false, hidden, NULL);
	if (err || *hidden)
		return err;
	if (k->stext != cache->stext)
		goto reread; /* not the kernel the cache saw: cannot happen, but cheap */
	if (gather_addrs(rec, &addrs, &nr))
		return -ENOMEM;
	err = from_cache(k, cache, addrs, nr);
	free(addrs);
	if (err)
		return err < 0 ? err : 0;
reread:
	/* start again from an empty k: the identity is read once more */
	free(k->release);
	for (uint32_t i = 0; i < k->nr_modules; i++)
		free(k->modules[i].name);
	free(k->modules);
	*k = (struct bprof_kernel){0};
read:
	err = collect(k, kallsyms, hidden, &etext);
	if (err)
		return err;
	if (kallsyms && cache && !*hidden)
		cache_fill(cache, k, etext);
	if (kallsyms && !full)
		return kernel_prune_ksyms(k, rec);
	return 0;
}
