#!/bin/bash
# -p PID: only that process is counted, filtered in the kernel; -p with a
# pid that does not exist fails before recording.
. "$(dirname "$0")/common.sh"

# both outlive the two recordings (killed at exit): each costs its
# start-up and dump too, seconds on a loaded host
bg "$W/ratio" 600 1
p1=$BG
bg "$W/ratio" 600 1
p2=$BG
sleep 0.2
out=$T_DIR/p.bprof
"$BPROF_RECORD" -q -F 99 -p "$p1" -o "$out" 2
dump "$out"
check "only pid $p1 in counts" test "$(dumpq "$out.txt" pids '*')" = "$p1"
check "and it was sampled" test "$(dumpq "$out.txt" samples ratio)" -gt 5

"$BPROF_RECORD" -q -F 99 -p "$p1,$p2" -o "$T_DIR/p2.bprof" 2
dump "$T_DIR/p2.bprof"
check "-p with two pids: both, nothing else" \
	test "$(dumpq "$T_DIR/p2.bprof.txt" pids '*')" = "$(printf '%s\n' "$p1" "$p2" | sort -n | tr '\n' ' ' | sed 's/ $//')"

rc=0
"$BPROF_RECORD" -q -p 999999999 -o "$T_DIR/bad.bprof" 1 2>"$T_DIR/err" || rc=$?
cat "$T_DIR/err"
check "bad pid: non-zero exit" test "$rc" -ne 0
check "bad pid: says no such process" grep -q 'no such process' "$T_DIR/err"
check "bad pid: no file" test ! -e "$T_DIR/bad.bprof"
rc=0
"$BPROF_RECORD" -q -o /proc/nope/x.bprof 1 2>"$T_DIR/err" || rc=$?
check "unwritable output directory: non-zero exit and a reason" \
	bash -c "[ $rc -ne 0 ] && grep -q 'cannot write in directory' '$T_DIR/err'"
rc=0
"$BPROF_RECORD" -q -F abc 1 2>/dev/null || rc=$?
check "bad -F rejected" test "$rc" -ne 0
finish
