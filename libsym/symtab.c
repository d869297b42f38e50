/* SPDX-License-Identifier: Apache-2.0 */
/* symtab.c - a module's symbol table, sorted once, searched by address. */
#include <errno.h>
#include <stdlib.h>

#include "bsym_internal.h"

struct bsym_sym {
	GElf_Addr addr, size;
	const char *name; /* owned by libdwfl's module */
	int rank;         /* GLOBAL 0, WEAK 1, LOCAL 2: preferred first, as libdwfl does */
};

struct bsym_symtab {
	size_t nr;
	struct bsym_sym *v;
};

static int cmp_sym(const void *a, const void *b)
{
	const struct bsym_sym *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank - y->rank;
	/* sized before sizeless: a label must not hide its function */
	return (x->size == 0) - (y->size == 0);
}

static struct bsym_symtab *build(Dwfl_Module *mod)
{
	struct bsym_symtab *t = calloc(1, sizeof(*t));
	int n = dwfl_module_getsymtab(mod);

	if (!t)
		return NULL;
	if (n <= 0)
		return t;
	t->v = calloc((size_t)n, sizeof(*t->v));
	if (!t->v) {
		free(t);
		return NULL;
	}
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &addr, &shndx, NULL, NULL);
		int type = GELF_ST_TYPE(sym.st_info), bind = GELF_ST_BIND(sym.st_info);

		/* code symbols only: the addresses we name are instructions */
		if (!name || !*name || sym.st_shndx == SHN_UNDEF ||
		    (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE))
			continue;
		t->v[t->nr++] = (struct bsym_sym){
			.addr = addr,
			.size = sym.st_size,
			.name = name,
			.rank = bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2,
		};
	}
	qsort(t->v, t->nr, sizeof(*t->v), cmp_sym);
	return t;
}

const char *bsym_symtab_lookup(struct bsym_symtab **tab, Dwfl_Module *mod, GElf_Addr addr,
			       GElf_Off *off)
{
	if (!*tab && !(*tab = build(mod))) {
		GElf_Sym sym; /* out of memory: the slow way still answers */
		return dwfl_module_addrinfo(mod, addr, off, &sym, NULL, NULL, NULL);
	}
	const struct bsym_symtab *t = *tab;
	size_t lo = 0, hi = t->nr;

	while (lo < hi) { /* first symbol above addr */
		size_t mid = lo + (hi - lo) / 2;
		if (t->v[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* The nearest sized symbol that holds addr; a few steps back cover
	 * nested or overlapping symbols.  A sizeless one (an assembler label)
	 * counts only when it is the nearest of all. */
	for (size_t i = lo, steps = 0; i > 0 && steps < 64; i--, steps++) {
		const struct bsym_sym *s = &t->v[i - 1];
		if (s->size ? addr - s->addr < s->size : i == lo) {
			/* among symbols at the same address, the first sorted wins */
			while (i > 1 && t->v[i - 2].addr == s->addr &&
			       (t->v[i - 2].size ? addr - s->addr < t->v[i - 2].size : !s->size))
				s = &t->v[--i - 1];
			*off = addr - s->addr;
			return s->name;
		}
	}
	return NULL;
}

void bsym_symtab_free(struct bsym_symtab *tab)
{
	if (tab) {
		free(tab->v);
		free(tab);
	}
}
