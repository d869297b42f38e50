#!/bin/bash
# A process whose code mappings change thousands of times a second (a JIT's
# churn: uw-gcc's churn mode maps, re-protects and unmaps anonymous
# executable pages in one thread) keeps whole stacks in its other thread,
# which burns a known chain built without frame pointers
# (main;mode_churn;churn_outer;churn_inner;churn_leaf: only the tables can
# walk it).  Each change begins a mapping generation; the process's table
# is of an older one almost always, and is used with the range changed
# since excluded (record/DESIGN.md, "Older tables").  Before that, each
# change dropped the whole table until user space rewrote it: 87 % of the
# chains complete on an idle machine, fewer on a busy one.
. "$(dirname "$0")/common.sh"

out=$T_DIR/churn.bprof
t0=$(date +%s.%N)
"$BPROF_RECORD" -v -F 199 -o "$out" -- "$W/uw-gcc" 3 churn > /dev/null 2> "$T_DIR/churn.err"
t1=$(date +%s.%N)
grep -E "^unwind: churn:|executable mappings made while|program do_perf_event" "$T_DIR/churn.err"
made=$(awk '/^unwind: churn:/ { print $3 }' "$T_DIR/churn.err")
rate=$(awk -v n="${made:-0}" -v a="$t0" -v b="$t1" 'BEGIN { printf "%d", n / (b - a) }')
check "the workload churned >= 1,000 executable mappings a second ($made in $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s: $rate/s)" \
	test "${rate:-0}" -ge 1000

"$BPROF_REPORT" -q -f "$out" > "$T_DIR/churn.folded"
leaf=$(awk '/;churn_leaf [0-9]+$/ { n += $NF } END { print n + 0 }' "$T_DIR/churn.folded")
whole=$(awk '/(^|;)main;mode_churn;churn_outer;churn_inner;churn_leaf [0-9]+$/ { n += $NF } END { print n + 0 }' "$T_DIR/churn.folded")
echo "churn_leaf samples: $leaf, with the whole chain: $whole"
awk '/;churn_leaf [0-9]+$/ && !/(^|;)main;mode_churn;churn_outer;churn_inner;churn_leaf [0-9]+$/' \
	"$T_DIR/churn.folded" | sort -t' ' -k2 -rn | head -5 | sed 's/^/  not whole: /'
check "churn_leaf sampled >= 200 times ($leaf; ~600: 3 s of its CPU time at 199 Hz)" test "$leaf" -ge 200
check ">= 98 % of them with the whole chain ($whole of $leaf)" test "$((100 * whole))" -ge "$((98 * leaf))"

grep -E "^prof-record: older tables:" "$T_DIR/churn.err"
older=$(awk '/^prof-record: older tables:/ { print $4 }' "$T_DIR/churn.err")
check "prof-record -v: stacks walked with an older table of the process (${older:-none})" test "${older:-0}" -gt 0
"$BPROF_REPORT" --info "$out" | grep -E "before their tables" || true
finish
