#!/bin/bash
# A 4-entry stack map overflows on a busy workload: the losses are counted
# in the file and a warning names the remedy.
. "$(dirname "$0")/common.sh"

out=$T_DIR/loss.bprof
bg "$W/demo" 4
sleep 0.2
"$BPROF_RECORD" -q -F 199 --stack-storage-size 4 -o "$out" 2 2>"$T_DIR/err"
cat "$T_DIR/err"
dump "$out"
l=$(( $(dumpq "$out.txt" loss user_stack_enomem) + $(dumpq "$out.txt" loss user_stack_eexist) + \
	$(dumpq "$out.txt" loss kernel_stack_enomem) + $(dumpq "$out.txt" loss kernel_stack_eexist) ))
echo "stack losses: $l"
check "stack losses counted" test "$l" -gt 0
check "warning printed" grep -q 'WARNING: [0-9]* stack traces could not be recorded; consider --stack-storage-size' "$T_DIR/err"
check "lost stacks kept as negative ids in counts" \
	awk '$1 == "count" && ($5 == -12 || $5 == -17 || $6 == -12 || $6 == -17) { ok = 1 } END { exit !ok }' "$out.txt"

# a 4-key counts table: samples dropped, counted, warned about.  Its own
# busy workload: the first one may be over by now (the first recording's
# start-up and dump take longer on a loaded machine), and an idle host
# may not fill four keys in a second.
bg "$W/demo" 3
sleep 0.2
"$BPROF_RECORD" -q -F 199 --hash-storage-size 4 -o "$T_DIR/h.bprof" 1 2>"$T_DIR/err"
dump "$T_DIR/h.bprof"
check "counts_full counted" test "$(dumpq "$T_DIR/h.bprof.txt" loss counts_full)" -gt 0
check "counts table warning printed" grep -q 'WARNING: [0-9]* samples were dropped (counts table full); consider --hash-storage-size' "$T_DIR/err"
check "at most 4 count rows" test "$(grep -c '^count ' "$T_DIR/h.bprof.txt")" -le 4

# At the default sizes nothing is lost, not even a CPU's first sample with
# a new user and a new kernel stack: where the stack map grows as stacks
# come (Linux 6.1+), its per-CPU element caches are warmed before sampling
# (record/loader.c, warm_caches).  Unwarmed, about one run in five lost one.
bg "$W/demo" 20
sleep 0.2
full=0
for i in 1 2 3 4 5 6 7 8; do
	"$BPROF_RECORD" -q -F 999 -o "$T_DIR/s$i.bprof" 1 2>/dev/null
	dump "$T_DIR/s$i.bprof"
	full=$(( full + $(dumpq "$T_DIR/s$i.bprof.txt" loss user_stack_enomem) + \
		$(dumpq "$T_DIR/s$i.bprof.txt" loss kernel_stack_enomem) ))
done
echo "stacks lost to a full map in 8 short recordings: $full"
check "default sizes: no stack lost to a full map in 8 recordings" test "$full" -eq 0
finish
