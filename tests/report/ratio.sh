#!/usr/bin/env bash
# Two functions in a known 1:3 CPU ratio: the report must name them, keep
# main as their caller, and show the ratio within sampling error; the
# multi-line output must have bcc profile's structure.
source "$BPROF_SRC/tests/e2e/lib.sh"
require_bpf

"$BPROF_RECORD" -q -F 499 -o "$T_DIR/r.bprof" -- "$BPROF_WORKLOADS/ratio" 4
"$BPROF_REPORT" -q -f "$T_DIR/r.bprof" > "$T_DIR/folded"
"$BPROF_REPORT" -q "$T_DIR/r.bprof" > "$T_DIR/multi"

a=$(awk '/^ratio;/ && /;func_a( |;)/ { s += $NF } END { print s + 0 }' "$T_DIR/folded")
b=$(awk '/^ratio;/ && /;func_b( |;)/ { s += $NF } END { print s + 0 }' "$T_DIR/folded")
echo "func_a=$a func_b=$b"
check "func_a sampled" test "$a" -gt 50
check "func_b sampled" test "$b" -gt 150
# Samples are a random draw of the CPU time: with n samples split p = 3/4,
# the ratio p/(1-p) has a standard deviation of sqrt(p(1-p)/n)/(1-p)^2
# (0.2 at n = 1250, what a 4 s run gets with two CPU hogs competing).  Under
# heavier load the draws are not independent (the workload runs in time
# slices, and samples cluster in them): CI saw 3.91 at n = 1021 with a
# second test suite beside it, 4.2 of those deviations.  The bound is 6 of
# them or 30 %, whichever is larger: a real misattribution (a function's
# samples given to the other, or the two swapped: 0.33) still fails it.
check "func_b:func_a = 3 within sampling error" python3 -c "
import math, sys
a, b = $a, $b; n = a + b; p = 0.75; r = b / a
sd = math.sqrt(p * (1 - p) / n) / (1 - p) ** 2
tol = max(0.9, 6 * sd)
print('ratio %.3f, n %d, allowed 3 +- %.2f' % (r, n, tol))
sys.exit(0 if abs(r - 3) <= tol else 1)"
check "main calls func_a" grep -qE ';main;([^ ]*;)?func_a[; ]' "$T_DIR/folded"
check "main calls func_b" grep -qE ';main;([^ ]*;)?func_b[; ]' "$T_DIR/folded"
check "folded lines end in a count" awk 'NF < 2 || $NF !~ /^[0-9]+$/ { exit 1 }' "$T_DIR/folded"
# the stack is all but the last field: frames may hold spaces ("[missing
# caller]", C++ signatures)
check "identical stacks merged" test "$(sed 's/ [0-9]*$//' "$T_DIR/folded" | sort | uniq -d | wc -l)" -eq 0

# multi-line: frames leaf first, then "    -                comm (pid)", then the count
check "multi-line has the process line" grep -qE '^    -                ratio \([0-9]+\)$' "$T_DIR/multi"
check "multi-line leaf before caller" python3 - "$T_DIR/multi" <<'PY'
import sys, re
blocks = open(sys.argv[1]).read().strip().split("\n\n")
ok = False
for b in blocks:
    lines = b.split("\n")
    assert re.match(r"^        \d+$", lines[-1]), lines[-1]
    assert lines[-2].startswith("    -   "), lines[-2]
    names = [l.strip() for l in lines[:-2]]
    if "func_b" in names and "main" in names:
        ok = ok or names.index("func_b") < names.index("main")
sys.exit(0 if ok else 1)
PY
check "hottest stack printed last" python3 - "$T_DIR/multi" <<'PY'
import sys
counts = [int(b.split("\n")[-1]) for b in open(sys.argv[1]).read().strip().split("\n\n")]
sys.exit(0 if counts == sorted(counts) else 1)
PY
finish
