// SPDX-License-Identifier: Apache-2.0
/* The user-space environment of unwind_replay.h. */
#define _GNU_SOURCE
#include <unistd.h>
#include "unwind_replay.h"

int replay_read(struct replay_env *e, void *dst, uint32_t size, uint64_t addr)
{
	e->reads++;
	for (size_t i = 0; i < e->nr_mem; i++) {
		const struct replay_mem *m = &e->mem[i];

		if (addr >= m->addr && addr - m->addr <= m->len && size <= m->len - (addr - m->addr)) {
			memcpy(dst, (const char *)m->data + (addr - m->addr), size);
			return 0;
		}
	}
	if (e->mem_fd >= 0 && (int64_t)addr >= 0 &&
	    pread(e->mem_fd, dst, size, (off_t)addr) == (ssize_t)size)
		return 0;
	return -14; /* -EFAULT, as bpf_probe_read_user */
}

size_t replay_walk(struct replay_env *e, const struct unwind_proc *proc, struct unwind_regs *r,
		   uint64_t *pcs, size_t max, int *result, uint32_t *events)
{
	size_t n = 0;
	int res = UNWIND_NEXT;

	*events = 0;
	while (n < max) {
		pcs[n++] = r->regs[UNWIND_REG_RA];
		res = unwind_step(e, proc, r, events);
		if (res != UNWIND_NEXT)
			break;
	}
	*result = res;
	return n;
}
