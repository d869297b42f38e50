#!/bin/bash
# prof-record -- COMMAND: follows the command and its descendants, passes
# the exit status on.
. "$(dirname "$0")/common.sh"

out=$T_DIR/cmd.bprof
bg "$W/syscalls" 600 # an unrelated busy process that must not be recorded (killed at exit)
rc=0
"$BPROF_RECORD" -q -F 99 -o "$out" -- sh -c "'$W/ratio' 2 2; exit 7" || rc=$?
check "exit status of the command (7) passed on" test "$rc" -eq 7
dump "$out"
n=$(dumpq "$out.txt" samples ratio)
echo "ratio samples: $n"
check "grandchild ratio counted" test "$n" -gt 5
check "unrelated process not counted" test "$(dumpq "$out.txt" samples syscalls)" -eq 0
check "ratio images have snapshots" test "$(dumpq "$out.txt" coverage ratio | cut -d' ' -f1)" -eq 100

rc=0
"$BPROF_RECORD" -q -o "$T_DIR/f.bprof" -- false || rc=$?
check "exit status 1 of false passed on" test "$rc" -eq 1
rc=0
"$BPROF_RECORD" -q -o "$T_DIR/n.bprof" -- /nonexistent/cmd 2>/dev/null || rc=$?
check "missing command: 127" test "$rc" -eq 127
finish
