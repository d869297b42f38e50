#!/bin/bash
# dlopener maps libdlwork.so after the recording started: the recorder's
# rescans (each second, and at the end) must add it, with its build-id.
# Nothing is left to timing: dlopener spins in main_work until the test,
# having seen the recorder's start line, tells it to go on (DLOPENER_GO),
# and the recording ends once the library is in the process's maps.
. "$(dirname "$0")/common.sh"

out=$T_DIR/dl.bprof
export DLOPENER_GO=$T_DIR/go
bg "$W/dlopener" 600 # killed at exit
unset DLOPENER_GO
"$BPROF_RECORD" -F 99 -p "$BG" -o "$out" 600 2>"$T_DIR/rec.err" >/dev/null &
rp=$!
BG_PIDS="$BG_PIDS $rp"
for _ in $(seq 1200); do grep -q '^Sampling at' "$T_DIR/rec.err" && break; sleep 0.1; done
check "the recorder started sampling" grep -q '^Sampling at' "$T_DIR/rec.err"
check "libdlwork.so not mapped before the recording started" bash -c "! grep -q libdlwork '/proc/$BG/maps'"
touch "$T_DIR/go"
for _ in $(seq 1200); do grep -q libdlwork "/proc/$BG/maps" && break; sleep 0.1; done
check "libdlwork.so mapped while recorded" grep -q libdlwork "/proc/$BG/maps"
sleep 1 # a rescan's period of samples in dl_work (the last rescan is at the end)
kill -INT "$rp"
wait "$rp" || fail "prof-record: $(cat "$T_DIR/rec.err")"
dump "$out"
id=$(build_id "$W/libdlwork.so")
check "libdlwork.so object recorded with its build-id $id" \
	awk -v id="$id" '$1 == "object" && $3 == id && $NF ~ /libdlwork\.so$/ { ok = 1 } END { exit !ok }' "$out.txt"
check "libdlwork.so mapped in the dlopener process" dumpq "$out.txt" build-id-mapped dlopener "$id"
check "every user ip inside a recorded mapping" dumpq "$out.txt" ips-in-maps dlopener
finish
