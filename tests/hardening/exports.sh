#!/bin/bash
# The exports (--speedscope, --svg, --pprof, --missing-buildids) fed hostile
# recordings: the golden odd-strings file and bprof-mkrec's control-comm,
# empty-comm and huge-counts.  Each must be a valid document of its kind
# (exportcheck.py) or well-formed text; a damaged input is refused with exit
# 1 and leaves no export behind.  No BPF needed.
. "${BPROF_SRC:?}/tests/e2e/lib.sh"

R=${BPROF_REPORT:?}
MK=${BPROF_MKREC:-${BPROF_BUILD:?}/tests/hardening/bprof-mkrec}
[ -x "$R" ] || skip "$R not built"
[ -x "$MK" ] || skip "$MK not built"
"$R" --help | grep -q -- --speedscope || skip "this prof-report has no exports"
EC="python3 $BPROF_SRC/tests/hardening/exportcheck.py"
TC="python3 $BPROF_SRC/tests/hardening/textcheck.py"

cp "$BPROF_SRC/tests/data/format/valid/odd-strings.bprof" "$T_DIR/odd.bprof"
for k in control-comm empty-comm huge-counts; do
	"$MK" "$k" "$T_DIR/$k.bprof"
done

for f in odd control-comm empty-comm huge-counts; do
	in=$T_DIR/$f.bprof
	rc=0
	"$R" -q --speedscope "$T_DIR/$f.json" "$in" 2>"$T_DIR/err" || rc=$?
	check "$f: --speedscope exit 0 (got $rc)" test "$rc" -eq 0
	check "$f: speedscope valid JSON, profile spans its weights" $EC speedscope "$T_DIR/$f.json"
	rc=0
	"$R" -q --svg "$T_DIR/$f.svg" "$in" 2>"$T_DIR/err" || rc=$?
	check "$f: --svg exit 0 (got $rc)" test "$rc" -eq 0
	check "$f: svg is well-formed XML" $EC svg "$T_DIR/$f.svg"
	rc=0
	"$R" -q --diff --svg "$T_DIR/$f.diff.svg" "$in" "$in" 2>"$T_DIR/err" || rc=$?
	check "$f: --diff --svg exit 0 (got $rc)" test "$rc" -eq 0
	check "$f: differential svg is well-formed XML" $EC svg "$T_DIR/$f.diff.svg"
	rc=0
	"$R" -q --pprof "$T_DIR/$f.pb.gz" "$in" 2>"$T_DIR/err" || rc=$?
	check "$f: --pprof exit 0 (got $rc)" test "$rc" -eq 0
	check "$f: pprof sane (UTF-8 strings, sample values not wrapped)" $EC pprof "$T_DIR/$f.pb.gz"
	rc=0
	"$R" -q --missing-buildids "$in" >"$T_DIR/$f.missing" 2>"$T_DIR/err" || rc=$?
	check "$f: --missing-buildids exit 0 (got $rc)" test "$rc" -eq 0
	check "$f: --missing-buildids output clean text" $TC text "$T_DIR/$f.missing"
	check "$f: --missing-buildids one 'BUILDID PATH' per line" \
		sh -c "! grep -v -E '^[0-9a-f]+ .' '$T_DIR/$f.missing'"
done

# a damaged input: exit 1, no export file left behind
bad=$BPROF_SRC/tests/data/format/invalid/stack-ips-past-section-end.bprof
for e in speedscope svg pprof; do
	rc=0
	"$R" -q --$e "$T_DIR/bad.$e" "$T_DIR/odd.bprof" "$bad" 2>"$T_DIR/err" || rc=$?
	check "damaged input, --$e: exit 1 (got $rc)" test "$rc" -eq 1
	check "damaged input, --$e: message names the file" grep -qF "$bad" "$T_DIR/err"
	check "damaged input, --$e: no export left" test ! -e "$T_DIR/bad.$e"
done
finish
