#!/bin/bash
# ratio workload on both CPUs: sample count matches duration x freq x CPUs,
# the binary's build-id is recorded, every user ip lies in a recorded mapping
# and func_a:func_b leaf samples are about 1:3.
. "$(dirname "$0")/common.sh"

out=$T_DIR/ratio.bprof
# Longer than the recording by far (killed at exit): on a loaded host the
# recorder's start-up took seconds, and a 7 s workload had ended before its
# CPU time could be read after the recording.
bg "$W/ratio" 600 2
sleep 0.3
# CPU time of the workload over the recording: the machine may be shared,
# so the expected count is its CPU seconds x 99 Hz (4 s x 2 CPUs when idle).
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
t0=$(cpu_ticks "$BG")
"$BPROF_RECORD" -q -F 99 -p "$BG" -o "$out" 4
t1=$(cpu_ticks "$BG")
kill "$BG"
dump "$out"

n=$(dumpq "$out.txt" samples ratio)
hz=$(getconf CLK_TCK)
exp=$(( (t1 - t0) * 99 / hz ))
echo "samples: $n; expected about $exp ($(( (t1 - t0) / hz )) CPU s x 99 Hz; $((4 * 99 * 2)) on an idle box)"
check "workload got at least half a CPU-second" test "$exp" -ge 49
check "sample count within 35% of CPU time x 99 Hz" between "$n" $((exp * 65 / 100)) $((exp * 135 / 100))
check "only ratio counts with -p" test "$(dumpq "$out.txt" samples '*')" -eq "$n"

id=$(build_id "$W/ratio")
check "build-id $id of ratio recorded and mapped" dumpq "$out.txt" build-id-mapped ratio "$id"
check "every user ip inside a recorded mapping" dumpq "$out.txt" ips-in-maps ratio

a=$(dumpq "$out.txt" leaf-in ratio "$W/ratio" func_a)
b=$(dumpq "$out.txt" leaf-in ratio "$W/ratio" func_b)
echo "leaf samples: func_a $a func_b $b"
check "func_a and func_b both sampled" test "$a" -gt 0 -a "$b" -gt 0
check "func_a:func_b about 1:3 (a share 12..40%)" between $((a * 100 / (a + b))) 12 40
finish
