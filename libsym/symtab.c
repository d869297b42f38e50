/* SPDX-License-Identifier: Apache-2.0 */
/*
 * symtab.c - a module's symbol table, sorted once, searched by address.
 *
 * Two things a symbol table alone gets wrong, fixed here:
 *  - PLT stubs have no symbols; the nearest symbol before them is _init
 *    (sizeless), so a sample in `write`'s stub was named _init.  Each stub
 *    of .plt, .plt.sec and .plt.got gets a synthetic NAME@plt symbol, as
 *    objdump and perf name them: the stub's `jmp *GOT(%rip)` points at a GOT
 *    slot, and the JUMP_SLOT or GLOB_DAT relocation of that slot names the
 *    function (x86-64).
 *  - a sizeless symbol (an assembler label) may name the addresses after it
 *    only up to the end of its section, never past it into the next one.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bsym_internal.h"

struct bsym_sym {
	GElf_Addr addr, size;
	GElf_Addr limit;  /* sizeless: end of its section (0: unknown) */
	const char *name; /* owned by libdwfl's module */
	int rank;         /* GLOBAL 0, WEAK 1, LOCAL 2: preferred first, as libdwfl does */
};

struct bsym_symtab {
	size_t nr;
	struct bsym_sym *v;
	char **owned;      /* NAME@plt strings */
	size_t nr_owned;
};

/* Executable sections of the main ELF file, in module addresses. */
struct xsect {
	GElf_Addr start, end;
};

static GElf_Addr section_end(const struct xsect *xs, size_t n, GElf_Addr a)
{
	for (size_t i = 0; i < n; i++)
		if (a >= xs[i].start && a < xs[i].end)
			return xs[i].end;
	return 0;
}

/* GOT slot -> name, from the JUMP_SLOT and GLOB_DAT relocations. */
struct gotname {
	GElf_Addr slot;
	const char *name;
};

static int cmp_got(const void *a, const void *b)
{
	const struct gotname *x = a, *y = b;
	return x->slot < y->slot ? -1 : x->slot > y->slot;
}

static const char *got_lookup(const struct gotname *g, size_t n, GElf_Addr slot)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (g[mid].slot == slot)
			return g[mid].name;
		if (g[mid].slot < slot)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static size_t collect_got_names(Elf *elf, struct gotname **out)
{
	Elf_Scn *scn = NULL;
	struct gotname *g = NULL;
	size_t n = 0, cap = 0;

	*out = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh, lsh;
		Elf_Data *rd, *sd;
		Elf_Scn *link;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !sh.sh_entsize)
			continue;
		link = elf_getscn(elf, sh.sh_link);
		if (!link || !gelf_getshdr(link, &lsh) || lsh.sh_type != SHT_DYNSYM)
			continue;
		rd = elf_getdata(scn, NULL);
		sd = elf_getdata(link, NULL);
		if (!rd || !sd)
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Rela r;
			GElf_Sym sym;
			const char *name;
			unsigned type;

			if (!gelf_getrela(rd, (int)i, &r))
				break;
			type = GELF_R_TYPE(r.r_info);
			if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT)
				continue;
			if (!gelf_getsym(sd, (int)GELF_R_SYM(r.r_info), &sym) ||
			    !(name = elf_strptr(elf, lsh.sh_link, sym.st_name)) || !*name)
				continue;
			if (n == cap) {
				size_t nc = cap ? cap * 2 : 64;
				struct gotname *ng = realloc(g, nc * sizeof(*g));
				if (!ng)
					break;
				g = ng;
				cap = nc;
			}
			g[n++] = (struct gotname){ r.r_offset, name };
		}
	}
	if (n)
		qsort(g, n, sizeof(*g), cmp_got);
	*out = g;
	return n;
}

/* Add NAME@plt symbols for the stubs of one PLT section.  An entry's
 * indirect jump `ff 25 disp32` (after an optional endbr64 and bnd prefix)
 * reads the GOT slot at next-instruction + disp32. */
static int add_plt_section(struct bsym_symtab *t, size_t *cap, Elf_Scn *scn, const GElf_Shdr *sh,
			   GElf_Addr bias, const struct gotname *g, size_t ng)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	GElf_Xword es = sh->sh_entsize ? sh->sh_entsize : 16;

	if (!d || !d->d_buf || d->d_size < sh->sh_size || es > 64)
		return 0;
	for (GElf_Xword off = 0; off + es <= sh->sh_size; off += es) {
		const unsigned char *e = (const unsigned char *)d->d_buf + off;
		const char *name = NULL;

		for (GElf_Xword k = 0; k + 6 <= es && !name; k++) {
			if (e[k] != 0xff || e[k + 1] != 0x25)
				continue;
			int32_t disp;
			memcpy(&disp, e + k + 2, 4);
			name = got_lookup(g, ng, sh->sh_addr + off + k + 6 + (GElf_Addr)(int64_t)disp);
		}
		if (!name)
			continue; /* PLT0, lazy-binding stubs, IRELATIVE slots */
		size_t len = strlen(name) + sizeof("@plt");
		char *s = malloc(len);
		if (!s)
			return -ENOMEM;
		snprintf(s, len, "%s@plt", name);
		if (t->nr == *cap) {
			size_t nc = *cap * 2 + 16;
			struct bsym_sym *nv = realloc(t->v, nc * sizeof(*nv));
			char **no = realloc(t->owned, nc * sizeof(*no));
			if (no)
				t->owned = no;
			if (!nv || !no) {
				if (nv)
					t->v = nv;
				free(s);
				return -ENOMEM;
			}
			t->v = nv;
			*cap = nc;
		}
		t->owned[t->nr_owned++] = s;
		t->v[t->nr++] = (struct bsym_sym){
			.addr = sh->sh_addr + off + bias, .size = es, .name = s, .rank = 0,
		};
	}
	return 0;
}

/* The executable sections of the module's main file (where the section
 * contents are: a separate debug file has them as NOBITS). */
static void exec_sections(Dwfl_Module *mod, struct xsect **xs_out, size_t *nxs)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	Elf_Scn *scn = NULL;
	struct xsect *xs = NULL;
	size_t n = 0;

	*xs_out = NULL;
	*nxs = 0;
	if (!elf)
		return;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_EXECINSTR) && (sh.sh_flags & SHF_ALLOC) &&
		    sh.sh_size) {
			struct xsect *nx = realloc(xs, (n + 1) * sizeof(*xs));
			if (!nx)
				break;
			xs = nx;
			xs[n++] = (struct xsect){ sh.sh_addr + bias, sh.sh_addr + bias + sh.sh_size };
		}
	}
	*xs_out = xs;
	*nxs = n;
}

/* NAME@plt for the PLT stubs of the module's main file (x86-64). */
static void add_plts(struct bsym_symtab *t, size_t *cap, Dwfl_Module *mod)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	GElf_Ehdr eh;
	Elf_Scn *scn = NULL;
	struct gotname *g = NULL;
	size_t ng, shstrndx;

	if (!elf || !gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64 ||
	    elf_getshdrstrndx(elf, &shstrndx))
		return;
	ng = collect_got_names(elf, &g);
	scn = NULL;
	while (ng && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		if ((!strcmp(name, ".plt") || !strcmp(name, ".plt.sec") || !strcmp(name, ".plt.got")) &&
		    add_plt_section(t, cap, scn, &sh, bias, g, ng))
			break;
	}
	free(g);
}

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
	struct xsect *xs;
	size_t nxs, cap = n > 0 ? (size_t)n : 0;

	if (!t)
		return NULL;
	if (cap) {
		t->v = calloc(cap, sizeof(*t->v));
		t->owned = calloc(cap, sizeof(*t->owned));
		if (!t->v || !t->owned) {
			bsym_symtab_free(t);
			return NULL;
		}
	}
	exec_sections(mod, &xs, &nxs);
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
		GElf_Addr limit = sym.st_size ? 0 : section_end(xs, nxs, addr);
		/* a label outside every executable section names no code */
		if (!sym.st_size && nxs && !limit)
			continue;
		t->v[t->nr++] = (struct bsym_sym){
			.addr = addr,
			.size = sym.st_size,
			.limit = limit,
			.name = name,
			.rank = bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2,
		};
	}
	free(xs);
	add_plts(t, &cap, mod);
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
		if (s->size ? addr - s->addr < s->size : i == lo && (!s->limit || addr < s->limit)) {
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
		for (size_t i = 0; i < tab->nr_owned; i++)
			free(tab->owned[i]);
		free(tab->owned);
		free(tab->v);
		free(tab);
	}
}
