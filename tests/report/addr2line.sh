#!/usr/bin/env bash
# No frame name may be contradicted by addr2line: recordings of the kinds
# the suite makes (C built by gcc and clang without frame pointers, a C++
# program, the demo, a Go program, Debian's python3 and xz with libc's
# debuginfo) are exported with --pprof, and every named location is
# compared with binutils' addr2line on the object it came from
# (addr2line_check.py; llvm-symbolizer arbitrates where binutils misreads
# an inline chain).  A control with one name doctored must be caught.
source "$BPROF_SRC/tests/e2e/lib.sh"
require_bpf
need() { command -v "$1" > /dev/null || skip "$1 is not installed ($2)"; }
need go golang-go
need addr2line binutils
need llvm-symbolizer-14 llvm-14
export HOME=${HOME:-/root} GOFLAGS=-mod=mod GOTOOLCHAIN=local GOCACHE=$T_DIR/gocache

mkdir "$T_DIR/go"
cp "$BPROF_SRC/tests/workloads/go/main.go" "$T_DIR/go/"
printf 'module gowork\ngo 1.19\n' > "$T_DIR/go/go.mod"
(cd "$T_DIR/go" && go build -o "$T_DIR/gowork" .) || { fail "go build"; finish; }
head -c 400000 /dev/urandom | base64 > "$T_DIR/data.txt"

rec() { # NAME COMMAND...
	local name=$1; shift
	"$BPROF_RECORD" -q -F 499 -o "$T_DIR/$name.bprof" -- "$@" > /dev/null 2>&1
	"$BPROF_REPORT" -q --pprof "$T_DIR/$name.pb.gz" "$T_DIR/$name.bprof"
	go tool pprof -symbolize=none -raw "$T_DIR/$name.pb.gz" > "$T_DIR/$name.raw" 2>&1
}
rec uw-gcc "$BPROF_WORKLOADS/uw-gcc" 0.3 qsort recurse threads signal plt leaf dlopen
rec uw-clang "$BPROF_WORKLOADS/uw-clang" 0.3 qsort recurse threads signal plt leaf dlopen
rec cxxwork "$BPROF_WORKLOADS/cxxwork" 1.5
rec demo "$BPROF_WORKLOADS/demo" 1.5
rec go "$T_DIR/gowork"
rec python3 /usr/bin/python3 -c 'import json
d = [{"k": i, "v": str(i) * 3} for i in range(50000)]
for _ in range(3):
    d = json.loads(json.dumps(d)); d.sort(key=lambda x: x["v"])'
rec xz /usr/bin/xz -6 -T1 -c "$T_DIR/data.txt"

python3 "$BPROF_SRC/tests/report/addr2line_check.py" "$T_DIR"/*.raw > "$T_DIR/check" 2>&1 &&
	rc=0 || rc=$?
cat "$T_DIR/check"
n=$(sed -n 's/^addr2line check: \([0-9]*\) named locations.*/\1/p' "$T_DIR/check")
check "addr2line compared many locations (${n:-0})" test "${n:-0}" -ge 300
check "no frame name contradicted by addr2line" test "$rc" -eq 0

# control: one innermost name changed to another function of the same
# object (main's own location renamed leaf_fn) must be reported
awk 'BEGIN { done = 0 }
	!done && $0 ~ /^ +[0-9]+: 0x[0-9a-f]+ M=[0-9]+ main / { sub(/ main /, " leaf_fn "); done = 1 }
	{ print }' "$T_DIR/uw-gcc.raw" > "$T_DIR/doctored.raw"
check "control: one name doctored (main -> leaf_fn)" sh -c "! cmp -s '$T_DIR/uw-gcc.raw' '$T_DIR/doctored.raw'"
check "control: the checker catches it" sh -c \
	"! python3 '$BPROF_SRC/tests/report/addr2line_check.py' '$T_DIR/doctored.raw' > '$T_DIR/control' 2>&1 && grep -q CONTRADICTION '$T_DIR/control'"
finish
