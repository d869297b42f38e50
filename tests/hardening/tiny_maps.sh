#!/bin/bash
# Tiny BPF maps (--stack-storage-size 4 --hash-storage-size 32) on a busy
# system: stacks and samples are lost.  The losses must be counted in the
# file, both warnings printed by prof-record, and prof-report must say that
# stack traces could not be displayed - and still work.
. "$(dirname "$0")/common.sh"

bg "$W/demo" 600 # killed at exit
bg "$W/syscalls" 600 # killed at exit
bg "$W/cxxwork" 600 # killed at exit
sleep 0.2
d=$T_DIR/out
mkdir "$d"
plant_earlier "$d"
rc=0
"$REC" -q -F 499 --stack-storage-size 4 --hash-storage-size 32 -o "$d/tiny.bprof" 2 \
	2>"$T_DIR/err" || rc=$?
cat "$T_DIR/err"
check "tiny maps: exit 0" test "$rc" -eq 0
aftermath "tiny maps" "$d" tiny.bprof
t=$d.tiny.bprof.txt
stack_loss=$(( $(loss "$t" user_stack_enomem) + $(loss "$t" user_stack_eexist) + \
	$(loss "$t" kernel_stack_enomem) + $(loss "$t" kernel_stack_eexist) ))
full=$(loss "$t" counts_full)
echo "stack losses $stack_loss, samples dropped $full, rows $(grep -c '^count ' "$t")"
check "stack losses counted in the file" test "$stack_loss" -gt 0
check "dropped samples counted in the file" test "$full" -gt 0
check "at most 32 count rows" test "$(grep -c '^count ' "$t")" -le 32
# Before Linux 6.1: 4 in the kernel's stack map, plus 4/4 = 1 in the
# second-chance map for collision victims, plus 4 user stacks walked by the
# unwinder (--unwind=auto, the default).  From 6.1 every stack is in the
# recorder's own map, room for 4 user and 4 kernel stacks.  Fewer stack
# slots than count rows: rows whose stacks were lost are kept, and the
# report has something to say about them (with as many slots as rows, the
# rows could fill before any stack was lost).
check "at most 4 + 1 + 4 stacks" test "$(grep -c '^stack ' "$t")" -le 9
check "warning: stack traces lost" grep -q 'WARNING: [0-9]* stack traces could not be recorded' "$T_DIR/err"
check "warning: samples dropped" grep -q 'WARNING: [0-9]* samples were dropped' "$T_DIR/err"

rc=0
"$REP" -f "$d/tiny.bprof" >"$T_DIR/folded" 2>"$T_DIR/rerr" || rc=$?
cat "$T_DIR/rerr"
check "prof-report: exit 0" test "$rc" -eq 0
check "prof-report: some stacks printed" test -s "$T_DIR/folded"
check "prof-report: 'could not be displayed' warning" \
	grep -q 'WARNING: [0-9]* stack traces could not be displayed' "$T_DIR/rerr"
check "prof-report: lost stacks shown as [Missed ... Stack]" grep -q '\[Missed \(User\|Kernel\) Stack\]' "$T_DIR/folded"
rc=0
"$REP" --info "$d/tiny.bprof" >"$T_DIR/info" 2>&1 || rc=$?
check "prof-report --info: exit 0 and shows the dropped samples" \
	grep -q "samples, counts map full: *$full\$" "$T_DIR/info"
finish
