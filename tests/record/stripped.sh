#!/bin/bash
# A stripped binary still carries its build-id; it is recorded so the report
# can find the separate debuginfo.
. "$(dirname "$0")/common.sh"

check "workload is really stripped" bash -c "! readelf -S '$W/stripped' | grep -q '\.symtab'"
out=$T_DIR/st.bprof
bg "$W/stripped" 600 # killed at exit
sleep 0.2
"$BPROF_RECORD" -q -p "$BG" -o "$out" 2
dump "$out"
id=$(build_id "$W/stripped")
check "build-id $id of the stripped binary recorded" dumpq "$out.txt" build-id-mapped stripped "$id"
check "debuginfo for it exists in the build-id tree" test -f "$W/debug/.build-id/${id:0:2}/${id:2}.debug"
finish
