#!/usr/bin/env bash
# --diff between two recordings, and both -f and --diff rendered by flamegraph.pl.
source "$BPROF_SRC/tests/e2e/lib.sh"
require_bpf
FG=/usr/share/perl5/Devel/NYTProf/flamegraph.pl
[ -x "$FG" ] || [ -r "$FG" ] || skip "flamegraph.pl missing (libdevel-nytprof-perl)"

"$BPROF_RECORD" -q -F 299 -o "$T_DIR/before.bprof" -- "$BPROF_WORKLOADS/ratio" 2
"$BPROF_RECORD" -q -F 99 -o "$T_DIR/after.bprof" -- "$BPROF_WORKLOADS/syscalls" 2
"$BPROF_REPORT" -q --diff "$T_DIR/before.bprof" "$T_DIR/after.bprof" > "$T_DIR/diff"
"$BPROF_REPORT" -q --diff -n "$T_DIR/before.bprof" "$T_DIR/after.bprof" > "$T_DIR/diffn"

check "diff lines are 'stack before after'" awk 'NF < 3 || $(NF-1) !~ /^[0-9]+$/ || $NF !~ /^[0-9]+$/ { exit 1 }' "$T_DIR/diff"
check "stacks only before have 0 after" grep -qE '^ratio;.* [1-9][0-9]* 0$' "$T_DIR/diff"
check "stacks only after have 0 before" grep -qE '^syscalls;.* 0 [1-9][0-9]*$' "$T_DIR/diff"
# -n: each BEFORE count times AFTER's total over BEFORE's, rounded (the
# totals then agree within half a sample a row, whatever their size: a
# busy host gave 15 and 16 samples once, which a 2 % bound failed)
check "-n scales every BEFORE count to AFTER's total, rounded" python3 - "$T_DIR/diff" "$T_DIR/diffn" <<'PY'
import sys
plain = [l.rsplit(" ", 2) for l in open(sys.argv[1])]
scaled = [l.rsplit(" ", 2) for l in open(sys.argv[2])]
B = sum(int(r[1]) for r in plain)
A = sum(int(r[2]) for r in plain)
assert A and B and len(plain) == len(scaled), (A, B, len(plain), len(scaled))
scale = A / B
for p, n in zip(plain, scaled):
    assert p[0] == n[0] and p[2] == n[2], (p, n)
    assert int(n[1]) == int(int(p[1]) * scale + 0.5), (p, n, scale)
b = sum(int(r[1]) for r in scaled)
rows = sum(1 for r in plain if int(r[1]))
print("before", B, "scaled", b, "after", A, "rows", rows)
assert abs(b - A) <= rows / 2
PY
"$BPROF_REPORT" -q -f -a "$T_DIR/before.bprof" > "$T_DIR/folded"
perl "$FG" "$T_DIR/folded" > "$T_DIR/fg.svg" 2>"$T_DIR/fg.err" || true
check "flamegraph.pl renders -f output" grep -q 'func_b' "$T_DIR/fg.svg"
finish
