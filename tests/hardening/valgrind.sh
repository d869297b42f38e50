#!/bin/bash
# prof-report under valgrind (memcheck): no invalid access, no use of
# uninitialized values, no definite leak, on a real recording of the demo
# workload (2 s, with its kallsyms snapshot) and of ratio (1 s): folded,
# multi-line with -a -d, --info and --diff.  Also the hostile-strings golden
# file and a damaged file (the error path must not leak).
. "$(dirname "$0")/common.sh"
VG="valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite"
# An ASan build (BPROF_SANITIZE) cannot run under valgrind: there ASan and
# LeakSanitizer do the same checks, and any report fails the run.
if nm -an "$REP" 2>/dev/null | grep -q __asan_init || ldd "$REP" 2>/dev/null | grep -q libasan; then
	echo "note: $REP is built with ASan: checking with ASan/LSan instead of valgrind"
	VG=""
	export ASAN_OPTIONS=detect_leaks=1:exitcode=99
	export UBSAN_OPTIONS=halt_on_error=1:exitcode=99
elif ! command -v valgrind >/dev/null; then
	skip "valgrind not installed (apt-get install valgrind)"
fi

d=$T_DIR/rec
mkdir "$d"
"$REC" -q -F 199 -o "$d/demo.bprof" -- "$W/demo" 2 >/dev/null 2>"$T_DIR/rec.err"
check "recording made" dump_to "$d/demo.bprof" "$T_DIR/demo.txt"
"$REC" -q -F 199 --no-kallsyms -o "$d/ratio.bprof" -- "$W/ratio" 1 >/dev/null 2>&1
check "second recording made" dump_to "$d/ratio.bprof" "$T_DIR/ratio.txt"

# vg WHAT ARGS...: prof-report under valgrind must exit EXPECT (default 0)
vg() {
	local what=$1 expect=${EXPECT:-0} rc=0; shift
	local log=$T_DIR/vg.$T_CHECKS.log
	if [ -n "$VG" ]; then
		timeout 120 $VG --log-file="$log" "$REP" "$@" >"$T_DIR/vg.out" 2>"$T_DIR/vg.err" || rc=$?
	else
		timeout 120 "$REP" "$@" >"$T_DIR/vg.out" 2>"$T_DIR/vg.err" || rc=$?
		cp "$T_DIR/vg.err" "$log"
		if grep -q -E 'Sanitizer|runtime error' "$log"; then rc=99; fi
	fi
	if [ "$rc" -ne "$expect" ]; then
		fail "valgrind $what: exit $rc (expected $expect; 99 = valgrind errors)"
		head -n 40 "$log" >&2
		tail -n 5 "$T_DIR/vg.err" >&2
		T_CHECKS=$((T_CHECKS + 1))
	else
		ok "valgrind $what: clean (exit $rc)"
	fi
}

# (kept to what fits in ~30 s: every run loads libdw and the objects)
vg "-f (with kallsyms)" -f "$d/demo.bprof"
vg "-a -d --addresses (multi-line)" -a -d --addresses "$d/ratio.bprof"
vg "--info" --info "$d/ratio.bprof"
vg "--diff -n" --diff -n "$d/ratio.bprof" "$d/demo.bprof"
vg "-f on the hostile-strings golden file" -f "$BPROF_SRC/tests/data/format/valid/odd-strings.bprof"
EXPECT=1 vg "damaged file (exit 1)" -f "$BPROF_SRC/tests/data/format/invalid/stack-ips-past-section-end.bprof"
finish
