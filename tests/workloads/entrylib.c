/* SPDX-License-Identifier: Apache-2.0 */
/*
 * entrylib.c - a shared library whose e_entry points at code without CFI,
 * followed closely by a function with an FDE: what ld.bfd makes of
 * libmnl or libXau (e_entry = .text's start, crtstuff's functions, no
 * FDE).  It needs libc and has constructors (crtstuff's), so no process
 * starts in it: the unwinder must not take its entry code for an
 * outermost frame (tests/record/ehtab_ends.c).
 */
#include <unistd.h>

__asm__(".text\n"
	".globl entrylib_stub\n"
	".type entrylib_stub, @function\n"
	"entrylib_stub:\n"
	"\tmovl $1, %eax\n"
	"\tret\n"
	".size entrylib_stub, .-entrylib_stub\n");

int entrylib_work(int x);
int entrylib_work(int x)
{
	return x * 3 + (int)getpid();
}
