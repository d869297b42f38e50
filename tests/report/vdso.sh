#!/usr/bin/env bash
# The vDSO (clock_gettime, gettimeofday) is code no file on a workstation
# holds: the recording carries its bytes (IMAGES, SPEC 6.10) and the report
# names its functions from them.
source "$BPROF_SRC/tests/e2e/lib.sh"
require_bpf

"$BPROF_RECORD" -q -F 499 -o "$T_DIR/c.bprof" -- "$BPROF_WORKLOADS/clocks" 2
"$BPROF_REPORT" -q -f -U "$T_DIR/c.bprof" > "$T_DIR/folded"
"$BPROF_DUMP" "$T_DIR/c.bprof" > "$T_DIR/dump"
vobj=$(awk '$1 == "object" && $NF == "[vdso]" { print $2 }' "$T_DIR/dump")
check "the vdso is an object of the recording" test -n "$vobj"
check "its bytes are carried (IMAGES)" grep -qE "^image $vobj [0-9]+ " "$T_DIR/dump"
total=$(awk '/^clocks;/ { s += $NF } END { print s + 0 }' "$T_DIR/folded")
named=$(awk '/^clocks;/ && /;(__vdso_)?(clock_gettime|gettimeofday)[^;]*( |$)/ { s += $NF } END { print s + 0 }' "$T_DIR/folded")
blind=$(awk '/^clocks;/ && /\[vdso\]/ { s += $NF } END { print s + 0 }' "$T_DIR/folded")
echo "samples: $total; leaf in a named vdso function: $named; [vdso] frames: $blind"
check "most samples end in a named vdso function" test $((named * 2)) -gt "$total"
check "no blind [vdso] frame" test "$blind" -eq 0
check "the caller chain is whole" grep -qE '^clocks;.*main;read_clocks;[^ ]*(clock_gettime|gettimeofday)' "$T_DIR/folded"
"$BPROF_REPORT" --info "$T_DIR/c.bprof" > "$T_DIR/info" 2>&1
check "--info: symbols from the image in the recording" grep -q 'symbols: \[vdso\] (image in the recording)' "$T_DIR/info"
finish
