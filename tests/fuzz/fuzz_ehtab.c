// SPDX-License-Identifier: Apache-2.0
/*
 * fuzz_ehtab - hostile .eh_frame bytes through record/unwind/ehtab.
 *
 * Input: 8 bytes of the section's address (little-endian; where pcrel
 * pointers are relative to), then the .eh_frame bytes.  The target wraps
 * them in a minimal 64-bit ELF in memory (header, .eh_frame, .shstrtab);
 * when bit 0 of the first byte is set, an ELF without section headers
 * instead, where the next 8 input bytes are an .eh_frame_hdr that
 * PT_GNU_EH_FRAME points at (the loader's view, which ehtab falls back to),
 * builds the table, packs it into the BPF layout, and checks what every
 * consumer relies on: rows strictly increasing, every rule in canonical
 * form with known kinds, packed pages in order, each page's rows within
 * the page and sorted.  A malformed input must be an error with a message.
 */
#include <errno.h>
#include <stdbool.h>
#include <gelf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "ehtab.h"

static const char shstrtab[] = "\0.eh_frame\0.shstrtab";

static void fill_ehdr(Elf64_Ehdr *eh)
{
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_DYN;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_ehsize = sizeof(Elf64_Ehdr);
}

static void check_rule(const struct unwind_rule *r)
{
	if (r->cfa_kind >= UNWIND_CFA_KIND_MAX || r->rbp_kind > UNWIND_RBP_UNDEFINED ||
	    r->ra_kind > UNWIND_RA_REG)
		abort();
	if (r->rbp_kind != UNWIND_RBP_CFA && r->rbp_off)
		abort(); /* not canonical: equal rules must be equal bytes */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int init;
	struct ehtab_error err;
	struct ehtab *t = NULL;
	struct ehtab_rules *rs = NULL;
	struct ehtab_packed pk = { 0 };
	const struct ehtab_row *rows;
	size_t nr, len, off_eh, off_str = 0, off_sh = 0, total;
	uint64_t vaddr;
	bool vaddr_flag;
	unsigned char *img;
	Elf64_Ehdr *eh;
	Elf64_Shdr *sh;
	Elf *elf;
	int rc;

	if (!init) {
		elf_version(EV_CURRENT);
		init = 1;
	}
	if (size < 8)
		return 0;
	memcpy(&vaddr, data, 8);
	vaddr_flag = vaddr & 1;
	vaddr &= 0x0000fffffffff000ull;
	data += 8, len = size - 8;

	if (vaddr_flag) {
		/* [ehdr][2 phdrs][8-byte .eh_frame_hdr][.eh_frame] */
		Elf64_Phdr *ph;
		size_t off_ph = sizeof(Elf64_Ehdr), off_hdr = off_ph + 2 * sizeof(Elf64_Phdr);

		if (len < 8)
			return 0;
		off_eh = off_hdr + 8;
		total = off_eh + len - 8;
		img = calloc(1, total);
		if (!img)
			return 0;
		eh = (Elf64_Ehdr *)img;
		fill_ehdr(eh);
		eh->e_phoff = off_ph;
		eh->e_phentsize = sizeof(Elf64_Phdr);
		eh->e_phnum = 2;
		memcpy(img + off_hdr, data, len);
		ph = (Elf64_Phdr *)(img + off_ph);
		ph[0] = (Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = PF_R, .p_offset = 0,
				      .p_vaddr = vaddr, .p_filesz = total, .p_memsz = total,
				      .p_align = 4096 };
		ph[1] = (Elf64_Phdr){ .p_type = PT_GNU_EH_FRAME, .p_flags = PF_R, .p_offset = off_hdr,
				      .p_vaddr = vaddr + off_hdr, .p_filesz = 8, .p_memsz = 8,
				      .p_align = 4 };
	} else {
		off_eh = sizeof(Elf64_Ehdr);
		off_str = off_eh + len;
		off_sh = (off_str + sizeof(shstrtab) + 7) & ~(size_t)7;
		total = off_sh + 3 * sizeof(Elf64_Shdr);
		img = calloc(1, total);
		if (!img)
			return 0;
		eh = (Elf64_Ehdr *)img;
		fill_ehdr(eh);
		eh->e_shoff = off_sh;
		eh->e_shentsize = sizeof(Elf64_Shdr);
		eh->e_shnum = 3;
		eh->e_shstrndx = 2;
		memcpy(img + off_eh, data, len);
		memcpy(img + off_str, shstrtab, sizeof(shstrtab));
		sh = (Elf64_Shdr *)(img + off_sh);
		sh[1] = (Elf64_Shdr){ .sh_name = 1, .sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC,
				      .sh_addr = vaddr, .sh_offset = off_eh, .sh_size = len,
				      .sh_addralign = 8 };
		sh[2] = (Elf64_Shdr){ .sh_name = 11, .sh_type = SHT_STRTAB, .sh_offset = off_str,
				      .sh_size = sizeof(shstrtab), .sh_addralign = 1 };
	}

	elf = elf_memory((char *)img, total);
	if (!elf)
		goto out;
	rc = ehtab_build(&t, elf, &err);
	if (rc) {
		if (rc >= 0 || !err.message[0] || t)
			abort(); /* an error is negative and says what went wrong */
		goto out_elf;
	}
	rows = ehtab_rows(t, &nr);
	for (size_t i = 0; i < nr; i++) {
		check_rule(&rows[i].rule);
		if (i && rows[i].addr <= rows[i - 1].addr)
			abort();
	}
	if (ehtab_rules_create(&rs) == 0) {
		rc = ehtab_pack(t, rs, &pk, &err);
		if (rc == 0) {
			for (size_t p = 0; p < pk.nr_pages; p++) {
				const struct ehtab_page *pg = &pk.pages[p];

				if ((p && pg->page <= pk.pages[p - 1].page) || !pg->nr ||
				    pg->nr > UNWIND_PAGE_MAX_ROWS || pg->first > pk.nr_rows ||
				    pg->nr > pk.nr_rows - pg->first)
					abort();
				for (uint32_t k = 1; k < pg->nr; k++)
					if (UNWIND_ROW_LO(pk.rows[pg->first + k]) <=
					    UNWIND_ROW_LO(pk.rows[pg->first + k - 1]))
						abort();
				for (uint32_t k = 0; k < pg->nr; k++)
					if (UNWIND_ROW_RULE(pk.rows[pg->first + k]) >=
					    ehtab_rules_count(rs))
						abort();
			}
			for (size_t k = 0; k < ehtab_rules_count(rs); k++)
				check_rule(ehtab_rules_get(rs, k));
			ehtab_packed_free(&pk);
		} else if (!err.message[0]) {
			abort();
		}
		ehtab_rules_destroy(rs);
	}
	ehtab_destroy(t);
out_elf:
	elf_end(elf);
out:
	free(img);
	return 0;
}
