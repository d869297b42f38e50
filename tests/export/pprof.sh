#!/usr/bin/env bash
# --pprof read back by its real consumer, `go tool pprof`: the same total,
# the same func_a/func_b samples as `prof-report -f`, labels, build-ids
# and inlined frames; --no-symbolize leaves names to the consumer, which
# finds the binary by its recorded path.
source "$BPROF_SRC/tests/e2e/lib.sh"
source "$BPROF_SRC/tests/export/lib-export.sh"
require_bpf
need_cmd go golang-go
export HOME=${HOME:-/root} GOFLAGS=-mod=mod GOTOOLCHAIN=local
export PPROF_TMPDIR=$T_DIR/pprof-tmp

"$BPROF_RECORD" -q -F 499 -o "$T_DIR/r.bprof" -- "$BPROF_WORKLOADS/ratio" 4
"$BPROF_REPORT" -q -f "$T_DIR/r.bprof" > "$T_DIR/folded"
"$BPROF_REPORT" -q --pprof "$T_DIR/r.pb.gz" "$T_DIR/r.bprof"
check "gzip-compressed" sh -c "head -c2 '$T_DIR/r.pb.gz' | od -An -tx1 | grep -q '1f 8b'"

total=$(awk '{ s += $NF } END { print s }' "$T_DIR/folded")
fa=$(folded_sum "$T_DIR/folded" ';func_a( |;)')
fb=$(folded_sum "$T_DIR/folded" ';func_b( |;)')
echo "prof-report -f: total=$total func_a=$fa func_b=$fb"

# -symbolize=none: what the file says, nothing added by pprof
go tool pprof -symbolize=none -sample_index=samples -top -nodecount=1000 -nodefraction=0 \
	-edgefraction=0 "$T_DIR/r.pb.gz" > "$T_DIR/top" 2> "$T_DIR/top.err" || { cat "$T_DIR/top.err"; fail "go tool pprof -top"; }
cat "$T_DIR/top" | head -20
ptotal=$(sed -n 's/.* of \([0-9]*\) total.*/\1/p' "$T_DIR/top" | head -1)
cum() { awk -v f="$1" '$6 == f && NF == 6 { print $4 }' "$T_DIR/top"; }
check "pprof total samples = prof-report -f total ($ptotal = $total)" test "$ptotal" = "$total"
check "pprof func_a cum = folded func_a ($(cum func_a) = $fa)" test "$(cum func_a)" = "$fa"
check "pprof func_b cum = folded func_b ($(cum func_b) = $fb)" test "$(cum func_b)" = "$fb"
# The workload's 1:3 split is the kernel's sampling, not pprof export: under
# CPU contention it drifts (2.52 seen).  What the export decides is checked
# exactly above; here only that the heavier function stays the heavier.
check "func_b outweighs func_a in pprof" test "$(cum func_b)" -gt "$(cum func_a)"
check "pprof names the main binary ratio" grep -q '^File: ratio$' "$T_DIR/top"
check "sample type cpu: ns = samples x 1e9/499" sh -c \
	"go tool pprof -symbolize=none -top -unit=ns '$T_DIR/r.pb.gz' 2>/dev/null | grep -q '^Type: cpu'"
go tool pprof -symbolize=none -raw "$T_DIR/r.pb.gz" > "$T_DIR/raw" 2>&1
check "period 1e9/499 ns" grep -q 'PeriodType: cpu nanoseconds' "$T_DIR/raw"
check "values samples/count and cpu/nanoseconds" grep -qE 'samples/count cpu/nanoseconds' "$T_DIR/raw"
bid=$(eu-readelf -n "$BPROF_WORKLOADS/ratio" | awk '/Build ID:/ { print $3 }')
check "mapping of ratio carries its build-id $bid" grep -qE "/ratio $bid" "$T_DIR/raw"
check "inlined frames: spin_units inlined into func_b (one Line each, innermost first)" python3 - "$T_DIR/raw" <<'PY'
import sys, re
lines = open(sys.argv[1]).read().split("\n")
for i, l in enumerate(lines):
    if re.match(r"^\s+\d+: 0x[0-9a-f]+ M=\d+ spin_units ", l) and i + 1 < len(lines) \
       and re.match(r"^\s+func_[ab] ", lines[i + 1]):
        sys.exit(0)
sys.exit(1)
PY
go tool pprof -symbolize=none -tags "$T_DIR/r.pb.gz" > "$T_DIR/tags" 2>&1
check "label comm=ratio" grep -qE '%\): ratio$' "$T_DIR/tags"
check "label pid" grep -q 'pid: Total' "$T_DIR/tags"

# raw addresses for a backend: no Line in the file ...
"$BPROF_REPORT" -q --pprof "$T_DIR/raw.pb.gz" --no-symbolize "$T_DIR/r.bprof"
go tool pprof -symbolize=none -raw "$T_DIR/raw.pb.gz" > "$T_DIR/raw2" 2>&1
check "--no-symbolize: no function in the file" sh -c \
	"! grep -qE '^ +[0-9]+: 0x[0-9a-f]+ M=[0-9]+ [^ ]' '$T_DIR/raw2'"
check "--no-symbolize: build-ids kept" grep -qE "/ratio $bid" "$T_DIR/raw2"
# ... which pprof symbolizes itself from the binary at its recorded path (build-id
# in the mapping).  (Go 1.19's pprof cannot read the build-id of binaries with
# a .note.gnu.property note, so PPROF_BINARY_PATH lookups by build-id refuse
# them: "build-id mismatch (... != )"; the recorded path is used here.)
go tool pprof -symbolize=local -sample_index=samples -top \
	-nodefraction=0 "$T_DIR/raw.pb.gz" > "$T_DIR/top2" 2>&1
cat "$T_DIR/top2" | head -12
check "pprof symbolizes the raw profile: func_a and func_b flat" sh -c \
	"grep -qE ' func_a$' '$T_DIR/top2' && grep -qE ' func_b$' '$T_DIR/top2'"
fa2=$(awk '$6 == "func_a" { print $4 }' "$T_DIR/top2"); fb2=$(awk '$6 == "func_b" { print $4 }' "$T_DIR/top2")
check "same func_a/func_b totals after pprof's symbolization ($fa2/$fb2 vs $fa/$fb)" \
	test "$fa2" = "$fa" -a "$fb2" = "$fb"
# C++: demangled name for pprof's views, the mangled symbol as system_name
"$BPROF_RECORD" -q -F 499 -o "$T_DIR/c.bprof" -- "$BPROF_WORKLOADS/cxxwork" 2
"$BPROF_REPORT" -q --pprof "$T_DIR/c.pb.gz" "$T_DIR/c.bprof"
go tool pprof -symbolize=none -sample_index=samples -top "$T_DIR/c.pb.gz" > "$T_DIR/ctop" 2>&1
check "pprof shows demangled C++ names" grep -q 'bprof_demo::Accumulator<double>::accumulate(' "$T_DIR/ctop"
python3 "$BPROF_SRC/tests/export/pprof-functions.py" "$T_DIR/c.pb.gz" > "$T_DIR/cfuncs"
check "Function.system_name is the mangled symbol" \
	grep -qP '^bprof_demo::Accumulator<double>::accumulate\(.*\t_ZN10bprof_demo11AccumulatorIdE10accumulate' "$T_DIR/cfuncs"
finish
