#!/bin/bash
# Valid recordings with awkward content (written by bprof-mkrec, see
# mkrec.c) through prof-report: what it prints must stay well-formed and
# true.  No BPF needed.
. "${BPROF_SRC:?}/tests/e2e/lib.sh"

R=${BPROF_REPORT:?}
MK=${BPROF_MKREC:-${BPROF_BUILD:?}/tests/hardening/bprof-mkrec}
[ -x "$R" ] || skip "$R not built"
[ -x "$MK" ] || skip "$MK not built"
TC="python3 $BPROF_SRC/tests/hardening/textcheck.py"

# 1. a row with an empty comm and no frames: the folded line must still
#    have a frame before its count (flamegraph.pl and friends split on the
#    last space; " 5" is a stack with no name at all)
"$MK" empty-comm "$T_DIR/empty-comm.bprof"
"$R" -f "$T_DIR/empty-comm.bprof" >"$T_DIR/ec" 2>"$T_DIR/ec.err"
cat -A "$T_DIR/ec"
check "empty comm: folded lines are '<frames> <count>' with a non-empty frame" \
	$TC folded "$T_DIR/ec"
check "empty comm: no line starts with a space or ';'" sh -c "! grep -q '^[ ;]' '$T_DIR/ec'"

# 2. counts adding past 2^64: totals saturate, never wrap
"$MK" huge-counts "$T_DIR/huge.bprof"
"$R" -f --addresses "$T_DIR/huge.bprof" >"$T_DIR/huge" 2>"$T_DIR/huge.err"
cat "$T_DIR/huge" "$T_DIR/huge.err"
check "huge counts: both stacks printed with their counts" \
	test "$(grep -c ' 9223372036854775808$' "$T_DIR/huge")" -eq 2
check "huge counts: summary total saturates (not wrapped to 0)" \
	grep -q '^prof-report: 18446744073709551615 samples' "$T_DIR/huge.err"
# merged into one line (same rendering), saturated; normalizing an
# identical file must keep both sides equal (not overflow to 0)
"$R" --diff -n "$T_DIR/huge.bprof" "$T_DIR/huge.bprof" >"$T_DIR/hdiff" 2>/dev/null
cat "$T_DIR/hdiff"
check "huge counts: --diff -n of a file with itself keeps both sides equal" \
	awk '$(NF-1) != $NF { bad = 1 } END { exit bad || NR != 1 }' "$T_DIR/hdiff"
"$R" --diff "$T_DIR/huge.bprof" "$T_DIR/huge.bprof" >"$T_DIR/hdiff2" 2>/dev/null
check "huge counts: --diff saturates at 2^64-1" grep -q ' 18446744073709551615 18446744073709551615$' "$T_DIR/hdiff2"

# 3. control bytes (terminal escapes) in comms and paths: not passed on
"$MK" control-comm "$T_DIR/ctl.bprof"
"$R" -f --addresses "$T_DIR/ctl.bprof" >"$T_DIR/ctl" 2>"$T_DIR/ctl.err"
check "control bytes: folded output clean" $TC folded "$T_DIR/ctl"
check "control bytes: summary on stderr clean" $TC stderr "$T_DIR/ctl.err"
"$R" --info "$T_DIR/ctl.bprof" >"$T_DIR/ctl.info" 2>&1
check "control bytes: --info clean" $TC info "$T_DIR/ctl.info"

# 4. recorded paths naming special files (a FIFO no one writes, /dev/zero,
#    a directory): prof-report opens recorded paths to check build-ids and
#    fallback hashes; it must neither block nor read forever
mkfifo "$T_DIR/fifo"
mkdir "$T_DIR/dir"
for p in "$T_DIR/fifo" /dev/zero "$T_DIR/dir"; do
	for bid in 0123456789abcdef0123456789abcdef01234567 none; do
		"$MK" nosym "$T_DIR/special.bprof" "$p" "$bid"
		for mode in -f --info; do
			rc=0
			timeout -k 2 10 "$R" "$mode" "$T_DIR/special.bprof" >/dev/null 2>&1 </dev/null || rc=$?
			check "object path $p (build-id $bid), $mode: exit 0 (got $rc; 124 = hung)" test "$rc" -eq 0
		done
		rm -f "$T_DIR/special.bprof"
	done
done

# 5. an object that has symbols, sampled where none is (its ELF header):
#    the summary must not claim "no symbols for X: ok"
elf=$BPROF_WORKLOADS/demo
if [ -n "${BPROF_WORKLOADS:-}" ] && [ -x "$elf" ]; then
	bid=$(readelf -n "$elf" | sed -n 's/^ *Build ID: *\([0-9a-f]*\)$/\1/p' | head -n1)
	"$MK" nosym "$T_DIR/nosym.bprof" "$elf" "$bid"
	rc=0
	"$R" -f "$T_DIR/nosym.bprof" >"$T_DIR/nosym" 2>"$T_DIR/nosym.err" || rc=$?
	cat "$T_DIR/nosym" "$T_DIR/nosym.err"
	check "unnamed address in a symbolized object: exit 0" test "$rc" -eq 0
	check "unnamed address in a symbolized object: frame names the object, [demo]" grep -q '^nosym;\[demo\] 6$' "$T_DIR/nosym"
	check "unnamed address in a symbolized object: summary does not say 'no symbols for ...: ok'" \
		sh -c "! grep -q 'no symbols for .*: ok\$' '$T_DIR/nosym.err'"
else
	skip "BPROF_WORKLOADS/demo not built"
fi
finish
