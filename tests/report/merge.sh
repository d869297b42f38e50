#!/usr/bin/env bash
# Many recordings at once (report/fold.c folds their rows before rendering):
# prof-report -f A B C is A's, B's and C's folded lines summed, in every
# folded form; copies of one file multiply its counts; --before sets give
# each side's sum.  A, B and C are separate runs of one program: other
# pids, other load addresses.
source "$BPROF_SRC/tests/e2e/lib.sh"
require_bpf

for r in a b c; do
	"$BPROF_RECORD" -q -F 499 -o "$T_DIR/$r.bprof" -- "$BPROF_WORKLOADS/ratio" 1
done
for r in a b c; do cp "$T_DIR/a.bprof" "$T_DIR/copy$r.bprof"; done

# "stack count" lines of files summed by stack, sorted
sum() { awk '{ n = $NF; $NF = ""; s[$0] += n } END { for (k in s) print k s[k] }' "$@" | sort; }

for opts in "-f" "-f -a" "-f -d" "-f -U" "-f -K" "-f --addresses"; do
	for r in a b c; do "$BPROF_REPORT" -q $opts "$T_DIR/$r.bprof" > "$T_DIR/$r.txt"; done
	"$BPROF_REPORT" -q $opts "$T_DIR/a.bprof" "$T_DIR/b.bprof" "$T_DIR/c.bprof" > "$T_DIR/merged"
	sum "$T_DIR/a.txt" "$T_DIR/b.txt" "$T_DIR/c.txt" > "$T_DIR/want"
	check "$opts of three runs: their lines summed" cmp <(sort "$T_DIR/merged") "$T_DIR/want"
	"$BPROF_REPORT" -q $opts "$T_DIR"/copy?.bprof > "$T_DIR/copies"
	check "$opts of three copies: three times the counts" cmp <(sort "$T_DIR/copies") \
		<(sum "$T_DIR/a.txt" "$T_DIR/a.txt" "$T_DIR/a.txt")
done
check "the runs were folded across pids (fewer lines than the three files)" \
	test "$(wc -l < "$T_DIR/merged")" -lt "$(cat "$T_DIR"/[abc].txt | wc -l)"

# Files are read one at a time and a copy that adds no new row is closed
# at once (report/main.c, fold_sides): the summary's notes about objects
# still come from the files kept, and say the same as for one file.
"$BPROF_REPORT" -f "$T_DIR/a.bprof" > /dev/null 2> "$T_DIR/one.err"
"$BPROF_REPORT" -f "$T_DIR"/copy?.bprof > /dev/null 2> "$T_DIR/copies.err"
check "three copies: the summary's notes are one file's" \
	cmp <(tail -n +2 "$T_DIR/one.err") <(tail -n +2 "$T_DIR/copies.err")
check "three copies: three times the samples in the summary" python3 - "$T_DIR" <<'PY'
import re, sys
d = sys.argv[1]
n = lambda p: int(re.match(r"prof-report: (\d+) samples", open(p).readline()).group(1))
print(n(d + "/one.err"), n(d + "/copies.err"))
sys.exit(0 if 3 * n(d + "/one.err") == n(d + "/copies.err") else 1)
PY
# a file that cannot be read among many: named, exit 1, nothing printed
printf 'not a recording' > "$T_DIR/bad.bprof"
rc=0
"$BPROF_REPORT" -f "$T_DIR/a.bprof" "$T_DIR/bad.bprof" "$T_DIR/b.bprof" > "$T_DIR/out" 2> "$T_DIR/err" || rc=$?
check "a bad file among three: exit 1" test "$rc" -eq 1
check "a bad file among three: named" grep -q "bad.bprof: " "$T_DIR/err"
check "a bad file among three: nothing printed" test ! -s "$T_DIR/out"

# --diff over sets: BEFORE = a + b, AFTER = c
"$BPROF_REPORT" -q --before "$T_DIR/a.bprof" --before "$T_DIR/b.bprof" "$T_DIR/c.bprof" > "$T_DIR/diff"
"$BPROF_REPORT" -q -f "$T_DIR/a.bprof" "$T_DIR/b.bprof" > "$T_DIR/ab.txt"
"$BPROF_REPORT" -q -f "$T_DIR/c.bprof" > "$T_DIR/c.txt"
check "--before sets: 'stack before after' from each side's sum" python3 - "$T_DIR" <<'PY'
import sys
d = sys.argv[1]
def lines(p):
    out = {}
    for l in open(p):
        k, _, n = l.rstrip("\n").rpartition(" ")
        out[k] = int(n)
    return out
b, a = lines(d + "/ab.txt"), lines(d + "/c.txt")
want = sorted(f"{k} {b.get(k, 0)} {a.get(k, 0)}" for k in set(b) | set(a))
got = sorted(l.rstrip("\n") for l in open(d + "/diff"))
print(len(got), "lines;", "equal" if got == want else "DIFFERENT")
sys.exit(0 if got == want else 1)
PY
"$BPROF_REPORT" -q --diff "$T_DIR/a.bprof" "$T_DIR/c.bprof" > "$T_DIR/d1"
"$BPROF_REPORT" -q --before "$T_DIR/a.bprof" "$T_DIR/c.bprof" > "$T_DIR/d2"
check "--before A C is --diff A C" cmp "$T_DIR/d1" "$T_DIR/d2"
rc=0; "$BPROF_REPORT" -q --before "$T_DIR/a.bprof" > /dev/null 2>&1 || rc=$?
check "--before without AFTER files is a usage error" test "$rc" -eq 2
finish
