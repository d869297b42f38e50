#!/bin/bash
# prof-report's output failing: a full device (stdout or -o), a directory
# that does not exist, a reader that closes the pipe early.  Full device and
# bad -o: exit 1 with a message; a closed pipe (| head) is not an error:
# exit 0, no message.  No BPF needed.
. "${BPROF_SRC:?}/tests/e2e/lib.sh"

R=${BPROF_REPORT:?}
MK=${BPROF_MKREC:-${BPROF_BUILD:?}/tests/hardening/bprof-mkrec}
[ -x "$R" ] || skip "$R not built"
[ -x "$MK" ] || skip "$MK not built"
[ -w /dev/full ] || skip "no /dev/full"
V=$BPROF_SRC/tests/data/format/valid/typical.bprof

# a recording whose report is a few MB (past every buffer)
"$MK" many "$T_DIR/many.bprof" 20000
check "large recording written" test -s "$T_DIR/many.bprof"

# out_fails WHAT ARGS...: exit 1, "prof-report:" and "No space" on stderr
out_fails() {
	local what=$1 rc=0; shift
	timeout 20 "$R" "$@" >/dev/full 2>"$T_DIR/err" || rc=$?
	cat "$T_DIR/err"
	check "$what: exit 1 (got $rc)" test "$rc" -eq 1
	check "$what: says the device is full" grep -q '^prof-report: .*No space left on device' "$T_DIR/err"
}
out_fails "stdout /dev/full, small -f" -q -f "$V"
out_fails "stdout /dev/full, large --addresses" -q -f --addresses "$T_DIR/many.bprof"
out_fails "stdout /dev/full, --info" --info "$V"
out_fails "stdout /dev/full, --diff" -q --diff "$V" "$V"

rc=0
"$R" -q -f "$V" -o /dev/full 2>"$T_DIR/err" || rc=$?
cat "$T_DIR/err"
check "-o /dev/full: exit 1" test "$rc" -eq 1
check "-o /dev/full: message names the output file" grep -q '/dev/full' "$T_DIR/err"

rc=0
"$R" -q -f "$V" -o "$T_DIR/no/such/dir/out.txt" 2>"$T_DIR/err" || rc=$?
cat "$T_DIR/err"
check "-o in a missing directory: exit 1" test "$rc" -eq 1
check "-o in a missing directory: message names it" grep -qF "$T_DIR/no/such/dir/out.txt" "$T_DIR/err"

# a reader that stops early: quiet success
rc=0
"$R" -q --addresses "$T_DIR/many.bprof" 2>"$T_DIR/err" | head -c 100 >/dev/null || true
rc=${PIPESTATUS[0]}
check "| head -c 100: exit 0 (got $rc)" test "$rc" -eq 0
check "| head -c 100: no error message" test ! -s "$T_DIR/err"
finish
