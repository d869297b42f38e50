/* SPDX-License-Identifier: Apache-2.0 */
/*
 * info.c - prof-report --info: what a recording holds and, for each object,
 * whether debuginfo was found and where: the list a user needs in order to
 * fetch what is missing.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "report.h"

static void print_time(FILE *f, uint64_t ns)
{
	time_t t = (time_t)(ns / 1000000000ull);
	struct tm tm;
	char buf[64];

	if (gmtime_r(&t, &tm) && strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S UTC", &tm))
		fprintf(f, "%s", buf);
	else
		fprintf(f, "%llu ns", (unsigned long long)ns);
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* How the user stacks were unwound (format 1.1's UNWIND section). */
static void print_unwind(FILE *f, const struct bprof_recording *rec)
{
	const struct bprof_unwind *u = &rec->unwind;
	const uint64_t *c = u->counters;

	if (!(rec->meta.flags & BPROF_META_USER_STACKS))
		return;
	switch (u->mode) {
	case BPROF_UNWIND_UNKNOWN:
		fprintf(f, "unwinding:      not recorded (a recorder before format 1.1): frame pointers only\n");
		return;
	case BPROF_UNWIND_FP:
		fprintf(f, "unwinding:      fp: frame pointers only (--unwind=fp); callers of code built without them are missing\n");
		return;
	case BPROF_UNWIND_AUTO:
	case BPROF_UNWIND_CFI:
		break;
	default:
		fprintf(f, "unwinding:      mode %u (unknown to this prof-report)\n", u->mode);
		return;
	}
	if (!(u->flags & BPROF_UNWIND_WALKED)) {
		fprintf(f, "unwinding:      %s, but the recording kernel could not run the unwinder: frame pointers only\n",
			bprof_unwind_mode_name(u->mode));
		return;
	}
	fprintf(f, "unwinding:      %s: .eh_frame unwind tables%s\n", bprof_unwind_mode_name(u->mode),
		u->mode == BPROF_UNWIND_AUTO ? ", frame pointers where there is none" : "");
	fprintf(f, "  user stacks walked:              %llu\n", (unsigned long long)c[BPROF_UNW_SAMPLES]);
	fprintf(f, "  reached the start frames:        %llu (%.1f %%)\n",
		(unsigned long long)c[BPROF_UNW_SAMPLES_COMPLETE],
		pct(c[BPROF_UNW_SAMPLES_COMPLETE], c[BPROF_UNW_SAMPLES]));
	fprintf(f, "  cut at the depth limit:          %llu\n",
		(unsigned long long)c[BPROF_UNW_SAMPLES_TRUNCATED]);
	fprintf(f, "  before their tables arrived:     %llu (%llu with no process table yet, %llu meeting an object's table not loaded yet)\n",
		(unsigned long long)(c[BPROF_UNW_SAMPLES_NO_IMAGE_TABLE] +
				     c[BPROF_UNW_SAMPLES_TABLE_PENDING]),
		(unsigned long long)c[BPROF_UNW_SAMPLES_NO_IMAGE_TABLE],
		(unsigned long long)c[BPROF_UNW_SAMPLES_TABLE_PENDING]);
	fprintf(f, "  frames from tables, by fp:       %llu, %llu\n",
		(unsigned long long)c[BPROF_UNW_FRAMES_TABLE], (unsigned long long)c[BPROF_UNW_FRAMES_FP]);
	fprintf(f, "  frame-pointer fallbacks:         %llu no known mapping, %llu no table, %llu table pending, %llu no FDE\n",
		(unsigned long long)c[BPROF_UNW_FALLBACK_NO_MAPPING],
		(unsigned long long)c[BPROF_UNW_FALLBACK_NO_TABLE],
		(unsigned long long)c[BPROF_UNW_FALLBACK_PENDING],
		(unsigned long long)c[BPROF_UNW_FALLBACK_NO_ROW]);
	fprintf(f, "  walks stopped early:             %llu unfollowable rule, %llu unreadable memory, %llu bad frame, %llu register needed\n",
		(unsigned long long)c[BPROF_UNW_STOP_INVALID],
		(unsigned long long)c[BPROF_UNW_STOP_UNREADABLE],
		(unsigned long long)c[BPROF_UNW_STOP_BAD_FRAME],
		(unsigned long long)c[BPROF_UNW_STOP_NEEDS_REGISTERS]);
	fprintf(f, "  tables:                          %llu objects (%llu shared by build-id), %llu without a table, %llu did not fit\n",
		(unsigned long long)c[BPROF_UNW_OBJECTS_LOADED],
		(unsigned long long)c[BPROF_UNW_OBJECTS_SHARED],
		(unsigned long long)c[BPROF_UNW_OBJECTS_NO_TABLE],
		(unsigned long long)c[BPROF_UNW_OBJECTS_FAILED]);
	fprintf(f, "  table rows, rules, pages:        %llu (%.1f KiB), %llu, %llu; built in %.1f ms, loaded in %.1f ms\n",
		(unsigned long long)c[BPROF_UNW_TABLE_ROWS], (double)c[BPROF_UNW_TABLE_ROWS] * 4 / 1024,
		(unsigned long long)c[BPROF_UNW_TABLE_RULES], (unsigned long long)c[BPROF_UNW_TABLE_PAGES],
		(double)c[BPROF_UNW_BUILD_NS] / 1e6, (double)c[BPROF_UNW_LOAD_NS] / 1e6);
	fprintf(f, "  kernel memory for the tables:    %.1f MiB; %llu process mapping tables (%llu failed)\n",
		(double)c[BPROF_UNW_TABLE_BYTES] / (1024.0 * 1024.0),
		(unsigned long long)c[BPROF_UNW_IMAGES], (unsigned long long)c[BPROF_UNW_IMAGE_FAILURES]);
}

static const char *str_or(const char *s, const char *dflt) { return s && *s ? s : dflt; }

/* "label" + a recorded (hostile) string, escaped, + "\n" */
static void line(FILE *f, const char *label, const char *s)
{
	fputs(label, f);
	rep_fputs_clean(f, str_or(s, "?"));
	fputc('\n', f);
}

int rep_print_info(FILE *f, struct bsym_ctx *sym, const struct rep_input *in)
{
	const struct bprof_recording *rec = in->rec;
	const struct bprof_meta *m = &rec->meta;
	const struct bprof_losses *l = &rec->losses;
	const struct bprof_kernel *k = &rec->kernel;
	char hex[2 * BPROF_BUILD_ID_MAX + 1];
	uint64_t samples = 0;

	for (uint64_t i = 0; i < rec->nr_counts; i++)
		samples = samples + rec->counts[i].count < samples ? UINT64_MAX
								   : samples + rec->counts[i].count;

	line(f, "file:           ", in->path);
	line(f, "host:           ", m->hostname);
	line(f, "kernel:         ", m->kernel_release);
	line(f, "arch:           ", m->arch);
	line(f, "recorder:       ", m->recorder_version);
	line(f, "command line:   ", m->options);
	fprintf(f, "start:          ");
	print_time(f, m->start_time_ns);
	fprintf(f, "\nduration:       %.3f s\n", (double)m->duration_ns / 1e9);
	fputs("sampling:       ", f);
	rep_fputs_clean(f, str_or(m->event, "?"));
	if (m->sample_freq)
		fprintf(f, " at %llu Hz on %u CPUs\n", (unsigned long long)m->sample_freq, m->ncpus);
	else
		fprintf(f, " every %llu events on %u CPUs\n", (unsigned long long)m->sample_period,
			m->ncpus);
	fprintf(f, "stacks:         %s%s%s%s\n",
		(m->flags & BPROF_META_USER_STACKS) ? "user " : "",
		(m->flags & BPROF_META_KERNEL_STACKS) ? "kernel " : "",
		(m->flags & BPROF_META_INCLUDE_IDLE) ? "(idle included) " : "(idle excluded) ",
		(m->flags & BPROF_META_PER_THREAD) ? "per thread" : "");
	fprintf(f, "samples:        %llu in %llu rows; %llu stacks; %llu processes; %llu objects\n",
		(unsigned long long)samples, (unsigned long long)rec->nr_counts,
		(unsigned long long)rec->nr_stacks, (unsigned long long)rec->nr_processes,
		(unsigned long long)rec->nr_objects);

	fprintf(f, "losses:\n");
	fprintf(f, "  user stacks, stack map full:     %llu\n", (unsigned long long)l->user_stack_enomem);
	fprintf(f, "  user stacks, hash collision:     %llu\n", (unsigned long long)l->user_stack_eexist);
	fprintf(f, "  kernel stacks, stack map full:   %llu\n", (unsigned long long)l->kernel_stack_enomem);
	fprintf(f, "  kernel stacks, hash collision:   %llu\n", (unsigned long long)l->kernel_stack_eexist);
	fprintf(f, "  samples, counts map full:        %llu\n", (unsigned long long)l->counts_full);
	fprintf(f, "  processes without mappings:      %llu\n", (unsigned long long)l->manifest_lost);
	fprintf(f, "  notifications dropped:           %llu\n", (unsigned long long)l->events_lost);
	fprintf(f, "  other:                           %llu\n", (unsigned long long)l->other);
	fprintf(f, "  user stacks before their tables: %llu (walked by frame pointer: may lack callers)\n",
		(unsigned long long)l->user_stack_before_table);
	print_unwind(f, rec);

	rep_hex(hex, k->build_id, k->build_id_len);
	fputs("kernel image:   ", f);
	rep_fputs_clean(f, str_or(k->release, "?"));
	fprintf(f, " build-id %s, _stext at 0x%llx, %u modules\n", k->build_id_len ? hex : "-",
		(unsigned long long)k->stext, k->nr_modules);
	if (k->flags & BPROF_KERNEL_KALLSYMS_HIDDEN)
		fprintf(f, "kallsyms:       hidden on the host (kptr_restrict): kernel frames need vmlinux debuginfo\n");
	else if (k->nr_ksyms && (k->flags & BPROF_KERNEL_KALLSYMS_PARTIAL))
		fprintf(f, "kallsyms:       %u text symbols recorded (those of sampled kernel addresses)\n",
			k->nr_ksyms);
	else if (k->nr_ksyms)
		fprintf(f, "kallsyms:       %u text symbols recorded\n", k->nr_ksyms);
	else
		fprintf(f, "kallsyms:       not recorded\n");

	fprintf(f, "objects:\n");
	for (uint64_t i = 0; i < rec->nr_objects; i++) {
		const struct bprof_object *o = &rec->objects[i];
		struct bsym_object_info oi;
		int err = bsym_object_info(sym, in->object_ids[i], &oi);

		if (o->flags & BPROF_OBJ_HAS_BUILD_ID) {
			rep_hex(hex, o->build_id, o->build_id_len);
		} else {
			snprintf(hex, sizeof(hex), "(no build-id; fallback %016llx)",
				 (unsigned long long)o->fallback_hash);
		}
		fprintf(f, "  %s ", hex);
		rep_fputs_clean(f, str_or(o->path, "?"));
		fputs((o->flags & BPROF_OBJ_DELETED) ? " (deleted on host)\n" : "\n", f);
		if (err)
			fprintf(f, "      error: %s\n", strerror(-err));
		else if (oi.status == BSYM_OK) {
			fputs("      symbols: ", f);
			rep_fputs_clean(f, str_or(oi.elf_path, "?"));
			if (oi.debug_path) {
				fputs(", debuginfo ", f);
				rep_fputs_clean(f, oi.debug_path);
			}
			fputs(oi.has_dwarf ? "\n" : " (no DWARF: function names only)\n", f);
		}
		else
			fprintf(f, "      MISSING: %s\n", bsym_reason_str(oi.status));
	}
	fflush(f);
	return ferror(f) ? -(errno ? errno : EIO) : 0;
}
