/* SPDX-License-Identifier: Apache-2.0 */
/* header.c - bsym.h compiles alone (included first, nothing before it). */
#include "bsym.h"

#include <criterion/criterion.h>

Test(api, header_stands_alone)
{
	struct bsym_opts o = { .sz = sizeof(o) };
	struct bsym_result r = { .reason = BSYM_OK };
	cr_assert_eq(o.flags, 0);
	cr_assert_eq(r.nr_frames, 0);
	cr_assert_eq(BSYM_NO_OBJECT, UINT32_MAX);
}
