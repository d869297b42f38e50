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
check "-n scales BEFORE to AFTER's total" python3 - "$T_DIR/diffn" <<'PY'
import sys
b = a = 0
for l in open(sys.argv[1]):
    f = l.split()
    b += int(f[-2]); a += int(f[-1])
print("before", b, "after", a)
sys.exit(0 if a and abs(b - a) / a < 0.02 else 1)
PY
"$BPROF_REPORT" -q -f -a "$T_DIR/before.bprof" > "$T_DIR/folded"
perl "$FG" "$T_DIR/folded" > "$T_DIR/fg.svg" 2>"$T_DIR/fg.err" || true
check "flamegraph.pl renders -f output" grep -q 'func_b' "$T_DIR/fg.svg"
finish
