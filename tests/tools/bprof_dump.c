/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bprof-dump - print a .bprof recording as text, for tests and humans.
 *
 * Usage: bprof-dump [--ksyms] FILE
 *
 * One record per line, fields separated by single spaces, hex numbers with
 * a 0x prefix, the free-text field always last:
 *
 *   meta hostname=H kernel_release=R arch=A event=E recorder=V start_time_ns=N
 *        duration_ns=N freq=N period=N ncpus=N flags=0xF          (one line)
 *   options <options string>
 *   loss <field_name> <value>                     (one per bprof_losses field)
 *   count <pid> <tid> <exec_id> <user_stack_id> <kernel_stack_id> 0x<kernel_ip> <count> <comm>
 *   offcount <pid> <tid> <exec_id> <user_stack_id> <kernel_stack_id> 0x<kernel_ip> <count>
 *        <S|D|R|T> <blocked_ns> <comm>          (off-CPU rows, one line)
 *   offcpu mode=<off-cpu|wall> period_ns=N blocks=N blocks_short=N blocked_ns=N walks=N
 *        no_user_stack=N lost=N                (only with an OFFCPU section; one line)
 *   stack <id> <nr_ips> 0x<ip0> 0x<ip1> ...
 *   stackflags <id> 0x<flags>                 (stacks with unwinder flags)
 *   object <index> <build_id_hex|-> 0x<flags> <size> <mtime_ns> <dev> <inode> 0x<fallback_hash> <path>
 *   process <pid> <ns_pid> <exec_id> <nr_mappings> <snapshot_ns> <perf_map_len> <comm>
 *   mapping <pid> <exec_id> 0x<start> 0x<end> 0x<file_offset> <object_index|-1> 0x<flags>
 *   births <pid> <exec_id> <birth of mapping 0> ...      (processes with generations)
 *   history <pid> <exec_id> 0x<start> 0x<end> 0x<file_offset> <object_index|-1> 0x<flags> <birth>
 *   gaps <pid> <exec_id> <generation> ...        (processes with generations)
 *   countgen <row> <map_gen>                     (rows whose map_gen is not 0)
 *   slices slice_ns=N origin_ns=N              (only with a SLICES section)
 *   countslice <row> <slice>                    (with a SLICES section, every row)
 *   kernel <build_id_hex|-> 0x<stext> <nr_modules> <nr_ksyms> 0x<flags> <release>
 *   module 0x<base> <size> <build_id_hex|-> <name>
 *   ksym 0x<addr> <module_index|-1> <name>                   (only with --ksyms)
 *   unwind mode=<fp|auto|cfi> flags=0x<flags>    (only with an UNWIND section)
 *   unwind_counter <name> <value>               (one per known counter)
 *   unwind_miss <object_index> 0x<flags> <rows>  (tables that did not fit)
 *   image <object_index> <len> <fnv1a-64 of the bytes, hex>
 *   access euid=<uid> flags=0x<flags> caps=0x<capabilities>  (only with an ACCESS section)
 *   access_counter <name> <value>               (one per known counter)
 *   jit mono_minus_real_ns=N                    (only with a JIT section)
 *   jit_counter <name> <value>                  (one per known counter)
 *   jitdump <pid> <exec_id> <len>               (one per image's jitdump)
 *   summary counts=N stacks=N objects=N processes=N samples=<sum of counts>
 *        [offcpu_samples=<sum of offcounts>]  (samples: on-CPU rows only)
 *
 * Stack ids print as signed decimals; BPROF_STACK_NONE prints as "none".
 * Text fields are printed as they are, except that control bytes (< 0x20,
 * 0x7f) and backslash are escaped as \xHH so one record stays one line.
 *
 * Exit status: 0 success, 1 the file could not be read (message on stderr
 * as "bprof-dump: FILE: <message>") or stdout failed, 2 usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bprof.h"

static void text(FILE *f, const char *s)
{
	if (!s)
		return;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p < 0x20 || *p == 0x7f || *p == '\\')
			fprintf(f, "\\x%02x", *p);
		else
			fputc(*p, f);
	}
}

static void build_id(FILE *f, const uint8_t *id, uint32_t len)
{
	if (!len) {
		fputc('-', f);
		return;
	}
	for (uint32_t i = 0; i < len; i++)
		fprintf(f, "%02x", id[i]);
}

static void stack_id(FILE *f, int32_t id)
{
	if (id == BPROF_STACK_NONE)
		fputs("none", f);
	else
		fprintf(f, "%d", id);
}

static void index_or_none(FILE *f, uint32_t idx)
{
	if (idx == BPROF_NO_OBJECT)
		fputs("-1", f);
	else
		fprintf(f, "%u", idx);
}

static void dump(FILE *f, const struct bprof_recording *r, int ksyms)
{
	const struct bprof_meta *m = &r->meta;
	const struct bprof_losses *l = &r->losses;
	const struct bprof_kernel *k = &r->kernel;
	unsigned long long samples = 0, offsamples = 0;

	fputs("meta hostname=", f);
	text(f, m->hostname);
	fputs(" kernel_release=", f);
	text(f, m->kernel_release);
	fputs(" arch=", f);
	text(f, m->arch);
	fputs(" event=", f);
	text(f, m->event);
	fputs(" recorder=", f);
	text(f, m->recorder_version);
	fprintf(f, " start_time_ns=%llu duration_ns=%llu freq=%llu period=%llu ncpus=%u flags=0x%x\n",
		(unsigned long long)m->start_time_ns, (unsigned long long)m->duration_ns,
		(unsigned long long)m->sample_freq, (unsigned long long)m->sample_period, m->ncpus,
		m->flags);
	fputs("options ", f);
	text(f, m->options);
	fputc('\n', f);

#define LOSS(field) fprintf(f, "loss " #field " %llu\n", (unsigned long long)l->field)
	LOSS(user_stack_enomem);
	LOSS(user_stack_eexist);
	LOSS(kernel_stack_enomem);
	LOSS(kernel_stack_eexist);
	LOSS(counts_full);
	LOSS(manifest_lost);
	LOSS(events_lost);
	LOSS(other);
	LOSS(user_stack_before_table);
#undef LOSS

	for (uint64_t i = 0; i < r->nr_counts; i++) {
		const struct bprof_count *c = &r->counts[i];
		char comm[BPROF_COMM_LEN + 1];

		memcpy(comm, c->comm, BPROF_COMM_LEN);
		comm[BPROF_COMM_LEN] = '\0';
		fprintf(f, "%s %u %u %u ", c->state ? "offcount" : "count", c->pid, c->tid,
			c->exec_id);
		stack_id(f, c->user_stack_id);
		fputc(' ', f);
		stack_id(f, c->kernel_stack_id);
		fprintf(f, " 0x%llx %llu ", (unsigned long long)c->kernel_ip,
			(unsigned long long)c->count);
		if (c->state)
			fprintf(f, "%c %llu ", "?SDRT"[c->state <= 4 ? c->state : 0],
				(unsigned long long)c->blocked_ns);
		text(f, comm);
		fputc('\n', f);
		if (c->state)
			offsamples += c->count;
		else
			samples += c->count;
	}
	if (r->offcpu.mode)
		fprintf(f, "offcpu mode=%s period_ns=%llu blocks=%llu blocks_short=%llu blocked_ns=%llu walks=%llu no_user_stack=%llu lost=%llu\n",
			r->offcpu.mode == BPROF_OFFCPU_WALL ? "wall" : "off-cpu",
			(unsigned long long)r->offcpu.period_ns, (unsigned long long)r->offcpu.blocks,
			(unsigned long long)r->offcpu.blocks_short,
			(unsigned long long)r->offcpu.blocked_ns, (unsigned long long)r->offcpu.walks,
			(unsigned long long)r->offcpu.no_user_stack, (unsigned long long)r->offcpu.lost);
	for (uint64_t i = 0; i < r->nr_counts; i++)
		if (r->counts[i].map_gen)
			fprintf(f, "countgen %llu %u\n", (unsigned long long)i, r->counts[i].map_gen);
	if (r->slices.slice_ns) {
		fprintf(f, "slices slice_ns=%llu origin_ns=%llu\n",
			(unsigned long long)r->slices.slice_ns, (unsigned long long)r->slices.origin_ns);
		for (uint64_t i = 0; i < r->nr_counts; i++)
			fprintf(f, "countslice %llu %u\n", (unsigned long long)i, r->counts[i].slice);
	}
	for (uint64_t i = 0; i < r->nr_stacks; i++) {
		const struct bprof_stack *s = &r->stacks[i];

		fprintf(f, "stack %u %u", s->id, s->nr_ips);
		for (uint32_t j = 0; j < s->nr_ips; j++)
			fprintf(f, " 0x%llx", (unsigned long long)s->ips[j]);
		fputc('\n', f);
		if (s->flags)
			fprintf(f, "stackflags %u 0x%x\n", s->id, s->flags);
	}
	for (uint64_t i = 0; i < r->nr_objects; i++) {
		const struct bprof_object *o = &r->objects[i];

		fprintf(f, "object %llu ", (unsigned long long)i);
		build_id(f, o->build_id, o->build_id_len);
		fprintf(f, " 0x%x %llu %llu %llu %llu 0x%llx ", o->flags, (unsigned long long)o->size,
			(unsigned long long)o->mtime_ns, (unsigned long long)o->dev,
			(unsigned long long)o->inode, (unsigned long long)o->fallback_hash);
		text(f, o->path);
		fputc('\n', f);
	}
	for (uint64_t i = 0; i < r->nr_processes; i++) {
		const struct bprof_process *p = &r->processes[i];
		char comm[BPROF_COMM_LEN + 1];

		memcpy(comm, p->comm, BPROF_COMM_LEN);
		comm[BPROF_COMM_LEN] = '\0';
		fprintf(f, "process %u %u %u %u %llu %llu ", p->pid, p->ns_pid, p->exec_id,
			p->nr_mappings, (unsigned long long)p->snapshot_ns,
			(unsigned long long)p->perf_map_len);
		text(f, comm);
		fputc('\n', f);
		for (uint32_t j = 0; j < p->nr_mappings; j++) {
			const struct bprof_mapping *mp = &p->mappings[j];

			fprintf(f, "mapping %u %u 0x%llx 0x%llx 0x%llx ", p->pid, p->exec_id,
				(unsigned long long)mp->start, (unsigned long long)mp->end,
				(unsigned long long)mp->file_offset);
			index_or_none(f, mp->object_index);
			fprintf(f, " 0x%x\n", mp->flags);
		}
		if (!p->has_gens)
			continue;
		fprintf(f, "births %u %u", p->pid, p->exec_id);
		for (uint32_t j = 0; j < p->nr_mappings; j++)
			fprintf(f, " %u", p->mappings[j].birth);
		fputc('\n', f);
		for (uint32_t j = 0; j < p->nr_history; j++) {
			const struct bprof_mapping *mp = &p->history[j];

			fprintf(f, "history %u %u 0x%llx 0x%llx 0x%llx ", p->pid, p->exec_id,
				(unsigned long long)mp->start, (unsigned long long)mp->end,
				(unsigned long long)mp->file_offset);
			index_or_none(f, mp->object_index);
			fprintf(f, " 0x%x %u\n", mp->flags, mp->birth);
		}
		fprintf(f, "gaps %u %u", p->pid, p->exec_id);
		for (uint32_t j = 0; j < p->nr_gaps; j++)
			fprintf(f, " %u", p->gaps[j]);
		fputc('\n', f);
	}
	fputs("kernel ", f);
	build_id(f, k->build_id, k->build_id_len);
	fprintf(f, " 0x%llx %u %u 0x%x ", (unsigned long long)k->stext, k->nr_modules, k->nr_ksyms,
		k->flags);
	text(f, k->release);
	fputc('\n', f);
	for (uint32_t i = 0; i < k->nr_modules; i++) {
		const struct bprof_module *md = &k->modules[i];

		fprintf(f, "module 0x%llx %llu ", (unsigned long long)md->base,
			(unsigned long long)md->size);
		build_id(f, md->build_id, md->build_id_len);
		fputc(' ', f);
		text(f, md->name);
		fputc('\n', f);
	}
	if (ksyms)
		for (uint32_t i = 0; i < k->nr_ksyms; i++) {
			fprintf(f, "ksym 0x%llx ", (unsigned long long)k->ksyms[i].addr);
			index_or_none(f, k->ksyms[i].module_index);
			fputc(' ', f);
			text(f, k->ksyms[i].name);
			fputc('\n', f);
		}
	if (r->unwind.mode) {
		fprintf(f, "unwind mode=%s flags=0x%x\n", bprof_unwind_mode_name(r->unwind.mode),
			r->unwind.flags);
		for (unsigned i = 0; i < BPROF_UNW_NR_COUNTERS; i++)
			fprintf(f, "unwind_counter %s %llu\n", bprof_unwind_counter_name(i),
				(unsigned long long)r->unwind.counters[i]);
		for (uint32_t i = 0; i < r->unwind.nr_misses; i++)
			fprintf(f, "unwind_miss %u 0x%x %llu\n", r->unwind.misses[i].object_index,
				r->unwind.misses[i].flags, (unsigned long long)r->unwind.misses[i].rows);
	}
	for (uint64_t i = 0; i < r->nr_images; i++) {
		uint64_t h = 0xcbf29ce484222325ull;

		for (uint64_t j = 0; j < r->images[i].len; j++)
			h = (h ^ r->images[i].data[j]) * 0x100000001b3ull;
		fprintf(f, "image %u %llu %016llx\n", r->images[i].object_index,
			(unsigned long long)r->images[i].len, (unsigned long long)h);
	}
	if (r->access.present) {
		fprintf(f, "access euid=%u flags=0x%x caps=0x%llx\n", r->access.euid,
			r->access.flags, (unsigned long long)r->access.capabilities);
		for (unsigned i = 0; i < BPROF_ACC_NR_COUNTERS; i++)
			fprintf(f, "access_counter %s %llu\n", bprof_access_counter_name(i),
				(unsigned long long)r->access.counters[i]);
	}
	if (r->jit.present) {
		fprintf(f, "jit mono_minus_real_ns=%lld\n", (long long)r->jit.mono_minus_real_ns);
		for (unsigned i = 0; i < BPROF_JIT_NR_COUNTERS; i++)
			fprintf(f, "jit_counter %s %llu\n", bprof_jit_counter_name(i),
				(unsigned long long)r->jit.counters[i]);
		for (uint64_t i = 0; i < r->jit.nr_dumps; i++)
			fprintf(f, "jitdump %u %u %llu\n", r->jit.dumps[i].pid, r->jit.dumps[i].exec_id,
				(unsigned long long)r->jit.dumps[i].len);
	}
	fprintf(f, "summary counts=%llu stacks=%llu objects=%llu processes=%llu samples=%llu",
		(unsigned long long)r->nr_counts, (unsigned long long)r->nr_stacks,
		(unsigned long long)r->nr_objects, (unsigned long long)r->nr_processes, samples);
	if (r->offcpu.mode)
		fprintf(f, " offcpu_samples=%llu", (unsigned long long)offsamples);
	fputc('\n', f);
}

int main(int argc, char **argv)
{
	struct bprof_recording *rec;
	struct bprof_error err = { 0 };
	const char *path = NULL;
	int ksyms = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--ksyms"))
			ksyms = 1;
		else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			printf("usage: bprof-dump [--ksyms] FILE\n");
			return 0;
		} else if (!path && (argv[i][0] != '-' || !strcmp(argv[i], "-") || !argv[i][1]))
			path = argv[i];
		else if (!path && !strcmp(argv[i], "--") && i + 1 < argc)
			path = argv[++i];
		else {
			fprintf(stderr, "usage: bprof-dump [--ksyms] FILE\n");
			return 2;
		}
	}
	if (!path) {
		fprintf(stderr, "usage: bprof-dump [--ksyms] FILE\n");
		return 2;
	}
	if (bprof_read_file(&rec, path, NULL, &err) < 0) {
		fprintf(stderr, "bprof-dump: %s: %s\n", path, err.message);
		return 1;
	}
	dump(stdout, rec, ksyms);
	bprof_recording_free(rec);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		perror("bprof-dump: stdout");
		return 1;
	}
	return 0;
}
