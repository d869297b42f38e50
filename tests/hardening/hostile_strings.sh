#!/bin/bash
# Recorded strings are hostile (a .bprof comes from another host): comm,
# hostname, command line, object paths, module and symbol names may hold
# control bytes, newlines, ';', DEL, invalid UTF-8.  No output of
# prof-report may pass them on: not the folded or multi-line stacks, not
# --diff, not --info, not the summary on stderr.  No BPF needed.
. "${BPROF_SRC:?}/tests/e2e/lib.sh"

R=${BPROF_REPORT:?}
[ -x "$R" ] || skip "$R not built"
ODD=$BPROF_SRC/tests/data/format/valid/odd-strings.bprof
TC="python3 $BPROF_SRC/tests/hardening/textcheck.py"

# the fixture really is hostile (else this test proves nothing)
check "fixture has control bytes in its strings" \
	grep -q 'x0a' "$BPROF_SRC/tests/data/format/valid/odd-strings.dump"

"$R" -f -a -d "$ODD" >"$T_DIR/folded" 2>"$T_DIR/folded.err"
check "folded -a -d: stdout clean, one stack per line" $TC folded "$T_DIR/folded"
check "folded -a -d: stderr clean, one message per line" $TC stderr "$T_DIR/folded.err"
"$R" -f --addresses "$ODD" >"$T_DIR/folded-addr" 2>/dev/null
check "folded --addresses (paths in frames): clean" $TC folded "$T_DIR/folded-addr"
"$R" -a -d --addresses "$ODD" >"$T_DIR/multi" 2>/dev/null
check "multi-line: clean" $TC text "$T_DIR/multi"
"$R" --diff -n "$ODD" "$ODD" >"$T_DIR/diff" 2>"$T_DIR/diff.err"
check "--diff: clean" $TC diff "$T_DIR/diff"
check "--diff: stderr clean" $TC stderr "$T_DIR/diff.err"
"$R" --info "$ODD" >"$T_DIR/info" 2>"$T_DIR/info.err"
check "--info: stdout clean (hostname, options, paths escaped)" $TC info "$T_DIR/info"
check "--info: stderr clean" $TC stderr "$T_DIR/info.err"
finish
