/* SPDX-License-Identifier: Apache-2.0 */
/*
 * goroots.c - Go's thread roots as outermost frames (goroots.h).
 */
#include <errno.h>
#include <stdlib.h>

#include "goroots.h"
#include "gopclntab.h"

/* runtime.rt0_go, mstart, goexit, sigtramp: a handful; more is not Go */
#define MAX_ROOTS 16

int goroots_add(struct ehtab **t, Elf *elf)
{
	struct gopcln *go;
	struct gopcln_error gerr;
	struct ehtab_range r[MAX_ROOTS];
	size_t n = 0;
	int rc = gopcln_elf_open(&go, elf, &gerr);

	if (rc)
		return rc == -ENOMEM ? rc : -ENOENT;
	for (size_t i = 0; i < gopcln_nr_funcs(go) && n < MAX_ROOTS; i++) {
		struct gopcln_func f;
		if (gopcln_func(go, i, &f) == 0 && gopcln_func_is_root(&f))
			r[n++] = (struct ehtab_range){ f.entry, f.end };
	}
	gopcln_close(go);
	if (!n)
		return -ENOENT;
	return ehtab_add_ends(t, r, n);
}
