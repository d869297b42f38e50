#!/usr/bin/env bash
# A syscall loop: kernel frames are named (from the recorded kallsyms when no
# vmlinux is at hand), annotated with _[k] under -a, delimited under -d.
source "$BPROF_SRC/tests/e2e/lib.sh"
require_bpf

"$BPROF_RECORD" -q -F 499 -o "$T_DIR/k.bprof" -- "$BPROF_WORKLOADS/syscalls" 3
"$BPROF_REPORT" -q -f -a -d "$T_DIR/k.bprof" > "$T_DIR/ad"
"$BPROF_REPORT" -q -f -K "$T_DIR/k.bprof" > "$T_DIR/konly"
"$BPROF_REPORT" -q -f -U "$T_DIR/k.bprof" > "$T_DIR/uonly"

check "kernel frames annotated _[k]" grep -q '^syscalls;.*_\[k\]' "$T_DIR/ad"
check "a read or write path is named" grep -qE '^syscalls;.*(read|write)[a-z_]*_\[k\]' "$T_DIR/ad"
check "user/kernel delimiter" grep -qE '^syscalls;[^ ]*;-;[^ ]*_\[k\]' "$T_DIR/ad"
check "user frames never annotated _[k] before the delimiter" \
	sh -c "! grep -E '^syscalls;' '$T_DIR/ad' | sed 's/ [0-9]*\$//' | grep -qE '^[^-]*_\[k\];[^-]*;-;'"
n_k=$(grep -c '^syscalls;' "$T_DIR/konly" || true)
check "-K keeps kernel stacks" test "$n_k" -gt 0
check "-U has no kernel frames" sh -c "! grep -qE 'entry_SYSCALL|do_syscall' '$T_DIR/uonly'"
named=$(grep '^syscalls;' "$T_DIR/konly" | tr ';' '\n' | grep -vc -e '^syscalls$' -e '^\[unknown\]' || true)
check "kernel frames named (not [unknown])" test "$named" -gt 0
# libc's read/write wrappers run without a frame.  The unwinder (the
# default, --unwind=auto) follows libc's .eh_frame and finds their true
# caller, copy_loop, with no marker.
"$BPROF_REPORT" -q -f -U "$T_DIR/k.bprof" > "$T_DIR/user"
check "no false main->read edge" sh -c "! grep -qE ';main;[^;]*libc_(read|write)' '$T_DIR/user'"
check "the true caller of read/write is found" grep -qE ';main;copy_loop;[^ ]*libc_(read|write)' "$T_DIR/user"
# Only samples taken before the process's mapping table was loaded (its
# first few milliseconds) are walked by frame pointer and may carry the
# marker; the rest must not.
marked=$(awk '/;main;\[missing caller\];/ {s += $NF} END {print s + 0}' "$T_DIR/user")
total=$(awk '{s += $NF} END {print s + 0}' "$T_DIR/user")
echo "samples with a skipped-caller marker: $marked of $total"
check "skipped-caller markers only before the tables arrived (<= 10%)" test $((marked * 10)) -le "$total"
# With frame pointers (--unwind=fp) the kernel's walk skips copy_loop: the
# report must not claim that main calls read directly; it marks the
# skipped caller instead.
"$BPROF_RECORD" -q -F 499 --unwind=fp -o "$T_DIR/fp.bprof" -- "$BPROF_WORKLOADS/syscalls" 2
"$BPROF_REPORT" -q -f -U "$T_DIR/fp.bprof" > "$T_DIR/fpuser"
check "fp: no false main->read edge" sh -c "! grep -qE ';main;[^;]*libc_(read|write)' '$T_DIR/fpuser'"
check "fp: the skipped caller is marked" grep -qE ';main;\[missing caller\];[^ ]*libc_(read|write)' "$T_DIR/fpuser"
# The file says how user stacks were unwound (format 1.1, UNWIND section):
# the mode, the unwinder's counters, per-stack flags; --info prints them.
"$BPROF_DUMP" "$T_DIR/k.bprof" > "$T_DIR/k.dump"
"$BPROF_DUMP" "$T_DIR/fp.bprof" > "$T_DIR/fp.dump"
check "auto: UNWIND section says the unwinder walked" grep -qx 'unwind mode=auto flags=0x1' "$T_DIR/k.dump"
walked=$(awk '$1 == "unwind_counter" && $2 == "samples" {print $3}' "$T_DIR/k.dump")
complete=$(awk '$1 == "unwind_counter" && $2 == "samples_complete" {print $3}' "$T_DIR/k.dump")
rows=$(awk '$1 == "unwind_counter" && $2 == "table_rows" {print $3}' "$T_DIR/k.dump")
echo "unwinder: $complete of $walked walks complete, $rows table rows"
check "auto: >= 90% of walks reach the start frames" test $((complete * 10)) -ge $((walked * 9))
check "auto: tables were loaded" test "${rows:-0}" -gt 1000
# bit 1 (0x2) of a stack's flags: it reached the start frames
check "auto: complete stacks are flagged" grep -qE '^stackflags [0-9]+ 0x[0-9a-f]*[2367abef]$' "$T_DIR/k.dump"
check "fp: UNWIND section says frame pointers" grep -qx 'unwind mode=fp flags=0x0' "$T_DIR/fp.dump"
check "fp: no stack flags" sh -c "! grep -q '^stackflags' '$T_DIR/fp.dump'"
"$BPROF_REPORT" --info "$T_DIR/k.bprof" > "$T_DIR/info" 2>&1
"$BPROF_REPORT" --info "$T_DIR/fp.bprof" > "$T_DIR/fpinfo" 2>&1
check "--info: the share of complete stacks" grep -qE '^  reached the start frames: +[0-9]+ \([0-9.]+ %\)' "$T_DIR/info"
check "--info: samples before the tables, as a loss" grep -qE '^  user stacks before their tables: [0-9]+' "$T_DIR/info"
check "--info: table memory" grep -qE '^  kernel memory for the tables: +[0-9.]+ MiB' "$T_DIR/info"
check "--info: fp mode said" grep -q '^unwinding:      fp: frame pointers only' "$T_DIR/fpinfo"
"$BPROF_REPORT" --info "$BPROF_SRC/tests/data/format/valid/v1.0-typical.bprof" > "$T_DIR/oldinfo" 2>&1 || true
check "--info: a 1.0 file says it has no unwinding data" grep -q '^unwinding:      not recorded' "$T_DIR/oldinfo"
# By default only the kallsyms entries of sampled kernel addresses are kept
# (flag 0x2, partial); names must be the same as with the full table.
"$BPROF_RECORD" -q -F 499 --full-kallsyms -o "$T_DIR/full.bprof" -- "$BPROF_WORKLOADS/syscalls" 2
read -r _ _ _ _ nks flags _ < <("$BPROF_DUMP" "$T_DIR/k.bprof" | grep '^kernel ')
read -r _ _ _ _ nks_full flags_full _ < <("$BPROF_DUMP" "$T_DIR/full.bprof" | grep '^kernel ')
echo "ksyms: default $nks ($flags), --full-kallsyms $nks_full ($flags_full)"
check "default snapshot is partial and small" sh -c "[ '$flags' = 0x2 ] && [ $nks -gt 0 ] && [ $nks -lt 5000 ]"
check "--full-kallsyms keeps the whole table" sh -c "[ '$flags_full' = 0x0 ] && [ $nks_full -gt 10000 ]"
"$BPROF_REPORT" -q -f -K "$T_DIR/full.bprof" | tr ';' '\n' | sed 's/ [0-9]*$//' | sort -u > "$T_DIR/names_full"
tr ';' '\n' < "$T_DIR/konly" | sed 's/ [0-9]*$//' | sort -u > "$T_DIR/names_part"
common=$(comm -12 "$T_DIR/names_full" "$T_DIR/names_part" | grep -c . || true)
check "partial and full snapshots name the hot kernel path alike ($common common names)" \
	sh -c "[ $common -ge 5 ] && grep -qx read_zero '$T_DIR/names_part' && grep -qx read_zero '$T_DIR/names_full'"
finish
