#!/bin/bash
# dlopener maps libdlwork.so ~1 s after the recording started: the periodic
# rescan must add it, with its build-id.
. "$(dirname "$0")/common.sh"

out=$T_DIR/dl.bprof
bg "$W/dlopener" 600 # killed at exit; dlopens its library after 1 s
"$BPROF_RECORD" -q -F 99 -p "$BG" -o "$out" 3
dump "$out"
id=$(build_id "$W/libdlwork.so")
check "libdlwork.so object recorded with its build-id $id" \
	awk -v id="$id" '$1 == "object" && $3 == id && $NF ~ /libdlwork\.so$/ { ok = 1 } END { exit !ok }' "$out.txt"
check "libdlwork.so mapped in the dlopener process" dumpq "$out.txt" build-id-mapped dlopener "$id"
check "every user ip inside a recorded mapping" dumpq "$out.txt" ips-in-maps dlopener
finish
