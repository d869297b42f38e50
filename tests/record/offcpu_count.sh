#!/bin/bash
# --off-cpu with -c COUNT: the period is COUNT ns of cpu-clock, off-CPU as
# on-CPU (prof-record(8), -c and --off-cpu; record/offcpu/offcpu_rec.c).
# Issue 50: the period taken in the wrong unit (-c 100000 gave 5 off-CPU
# samples for 0.5 s blocked, and --info said "100 ms") passed the suite,
# where no test used --off-cpu with -c.  Exact properties only:
# - the file's off-CPU period is COUNT ns, and --info says so in ms;
# - the off-CPU samples are the recorder's own blocked time / period, give
#   or take one per thread (each thread carries less than a period);
# - `sleep 0.5` blocks at least 0.5 s (nanosleep's promise): at least
#   0.5 s / period - 1 samples, at most the recording's length / period + 1.
. "$(dirname "$0")/common.sh"

period=2000000 # -c: 2 ms of cpu-clock
"$BPROF_RECORD" -q --off-cpu -c $period -o "$T_DIR/c.bprof" -- sleep 0.5
dump "$T_DIR/c.bprof"
"$BPROF_REPORT" --info "$T_DIR/c.bprof" > "$T_DIR/info"
"$BPROF_REPORT" -q -f --off-cpu "$T_DIR/c.bprof" > "$T_DIR/off"
# offcpu mode=off-cpu period_ns=N blocks=N blocks_short=N blocked_ns=N ...
field() { awk -v k="$1" '$1 == "offcpu" { for (i = 2; i <= NF; i++) { split($i, a, "=");
	if (a[1] == k) print a[2] } }' "$T_DIR/c.bprof.txt"; }
pns=$(field period_ns)
blocked=$(field blocked_ns)
dur=$(awk '$1 == "meta" { for (i = 2; i <= NF; i++) if ($i ~ /^duration_ns=/) { sub(/.*=/, "", $i); print $i } }' "$T_DIR/c.bprof.txt")
off=$(awk '{ s += $NF } END { print s + 0 }' "$T_DIR/off")
# the threads that blocked are at most the off-CPU rows
threads=$(grep -c '^offcount ' "$T_DIR/c.bprof.txt" || true)
sleeper=$(awk '/^sleep;.*clock_nanosleep.*\[off-cpu:S\] [0-9]+$/ { s += $NF } END { print s + 0 }' "$T_DIR/off")
echo "period_ns=$pns blocked_ns=$blocked duration_ns=$dur off-CPU samples $off (sleep's $sleeper)"
check "the file's off-CPU period is -c's $period ns" test "$pns" = $period
check "--info: a sample per 2.000 ms of blocked time" \
	grep -q '^off-CPU: *--off-cpu: a sample per 2\.000 ms of blocked time' "$T_DIR/info"
check "off-CPU samples = blocked time / period, +- 1 per thread ($off, $blocked ns)" python3 -c "
import sys; sys.exit(0 if abs($off - $blocked / $period) <= max($threads, 2) + 1 else 1)"
check "sleep 0.5: >= 0.5 s / period - 1 samples ($sleeper)" test "$sleeper" -ge $((500000000 / period - 1))
check "sleep 0.5: <= the recording's length / period + 1 ($sleeper)" test "$sleeper" -le $((dur / period + 1))
finish
