#!/usr/bin/env bash
# cgo stacks whole (issue 37): tests/workloads/go/cgo/main.go, Go calling C
# (main.viaC -> c_hot) and C calling back into Go (main.viaCBack ->
# c_calls_go -> ... -> main.goLeaf).  C runs on the system stack
# runtime.asmcgocall switches to; the recorder's row at asmcgocall's call
# of C (UNWIND_CFA_GO_STACK, record/unwind/gotab.c) brings the walk back to
# the goroutine's stack, through runtime.cgocall to runtime.goexit.  Each
# chain must be whole, with no caller marked missing between cgocall and
# asmcgocall (the report's marker for a frame-pointer step out of a stack
# switch), in >= 90 % of its samples.
source "$BPROF_SRC/tests/e2e/lib.sh"
require_bpf
command -v go > /dev/null 2>&1 || skip "go not installed (Debian package golang-go; tools/install-deps.sh)"
export HOME=${HOME:-/root} GOFLAGS=-mod=mod GOTOOLCHAIN=local GOCACHE=$T_DIR/gocache GOPROXY=off CGO_ENABLED=1

mkdir "$T_DIR/src"
cp "$BPROF_SRC/tests/workloads/go/cgo/main.go" "$T_DIR/src/"
printf 'module gocgo\ngo 1.19\n' > "$T_DIR/src/go.mod"
(cd "$T_DIR/src" && go build -o "$T_DIR/gocgo" .) 2> "$T_DIR/build.err" ||
	{ cat "$T_DIR/build.err"; fail "go build (cgo)"; finish; }

"$BPROF_RECORD" -q -F 199 -o "$T_DIR/cgo.bprof" -- "$T_DIR/gocgo" 2> "$T_DIR/rec.err" ||
	{ cat "$T_DIR/rec.err"; fail "prof-record"; finish; }
"$BPROF_REPORT" -q -f -U -a --comm=gocgo "$T_DIR/cgo.bprof" > "$T_DIR/cgo.folded"

# share LEAFRE CHAINRE: "whole total" of the samples whose leaf matches
share() {
	awk -v leaf="$1" -v chain="$2" '{ s = $0; sub(/ [0-9]+$/, "", s) }
		s ~ leaf { t += $NF; if (s ~ chain) k += $NF }
		END { print k + 0, t + 0 }' "$T_DIR/cgo.folded"
}
root='^gocgo;runtime\.goexit;runtime\.main;main\.main;'
read -r k t < <(share ';c_hot$' "${root}main\.viaC;main\._Cfunc_c_hot;runtime\.cgocall;runtime\.asmcgocall;[^;]*_Cfunc_c_hot;c_hot$")
echo "Go -> C: $k of $t samples in c_hot whole"
check "Go -> C: samples in c_hot ($t)" test "$t" -ge 50
check "Go -> C: >= 90 % whole from runtime.goexit through cgocall and asmcgocall ($k/$t)" \
	test $((k * 100)) -ge $((t * 90))
read -r k t < <(share ';main\.goLeaf(_\[i\])?$' "${root}main\.viaCBack;main\._Cfunc_c_calls_go;runtime\.cgocall;runtime\.asmcgocall;[^;]*_Cfunc_c_calls_go;c_calls_go;goLeaf;crosscall2;runtime\.cgocallback;.*main\.goLeaf(_\[i\])?$")
echo "Go -> C -> Go: $k of $t samples in main.goLeaf whole"
check "Go -> C -> Go: samples in main.goLeaf ($t)" test "$t" -ge 50
check "Go -> C -> Go: >= 90 % whole from runtime.goexit through C and back ($k/$t)" \
	test $((k * 100)) -ge $((t * 90))
check "no caller marked missing between cgocall and asmcgocall" \
	bash -c "! grep -q 'runtime\.cgocall;\[missing caller\];runtime\.asmcgocall' '$T_DIR/cgo.folded'"
finish
