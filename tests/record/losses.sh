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
l=$(( $($DUMPQ "$out.txt" loss user_stack_enomem) + $($DUMPQ "$out.txt" loss user_stack_eexist) + \
	$($DUMPQ "$out.txt" loss kernel_stack_enomem) + $($DUMPQ "$out.txt" loss kernel_stack_eexist) ))
echo "stack losses: $l"
check "stack losses counted" test "$l" -gt 0
check "warning printed" grep -q 'WARNING: [0-9]* stack traces could not be recorded; consider --stack-storage-size' "$T_DIR/err"
check "lost stacks kept as negative ids in counts" \
	awk '$1 == "count" && ($5 == -12 || $5 == -17 || $6 == -12 || $6 == -17) { ok = 1 } END { exit !ok }' "$out.txt"
finish
