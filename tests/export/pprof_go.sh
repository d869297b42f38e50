#!/usr/bin/env bash
# Go binaries through --pprof and `go tool pprof`, built the two ways Go
# links: internally (a Go build ID note only, no GNU build-id) and
# externally with gcc (GNU build-id next to .note.gnu.property and the Go
# note).  go tool pprof must accept the export without a build-id warning
# and name main.spin from the binary; the mapping carries the GNU build-id
# only where the binary has one.
source "$BPROF_SRC/tests/e2e/lib.sh"
source "$BPROF_SRC/tests/export/lib-export.sh"
require_bpf
need_cmd go golang-go
need_cmd gcc gcc
export HOME=${HOME:-/root} GOFLAGS=-mod=mod GOTOOLCHAIN=local GOCACHE=$T_DIR/gocache
export PPROF_TMPDIR=$T_DIR/pprof-tmp

mkdir "$T_DIR/src"
cp "$BPROF_SRC/tests/workloads/go/main.go" "$T_DIR/src/"
printf 'module gowork\ngo 1.19\n' > "$T_DIR/src/go.mod"
(cd "$T_DIR/src" && go build -o "$T_DIR/go-internal" . &&
	go build -ldflags=-linkmode=external -o "$T_DIR/go-external" .) 2> "$T_DIR/build.err" ||
	{ cat "$T_DIR/build.err"; fail "go build"; finish; }

for kind in internal external; do
	bin=$T_DIR/go-$kind
	gnu=$(readelf -n "$bin" | awk '/Build ID:/ { print $3 }')
	"$BPROF_RECORD" -q -F 499 -o "$T_DIR/$kind.bprof" -- "$bin" 2> /dev/null
	for sym in yes no; do
		opt=; [ "$sym" = no ] && opt=--no-symbolize
		# shellcheck disable=SC2086
		"$BPROF_REPORT" -q --pprof "$T_DIR/$kind-$sym.pb.gz" $opt "$T_DIR/$kind.bprof"
		go tool pprof -symbolize=local -top "$bin" "$T_DIR/$kind-$sym.pb.gz" \
			> "$T_DIR/$kind-$sym.top" 2> "$T_DIR/$kind-$sym.err" || true
		check "go-$kind, symbolized=$sym: go tool pprof reads it" grep -q 'Type: cpu' "$T_DIR/$kind-$sym.top"
		check "go-$kind, symbolized=$sym: no build-id warning" \
			sh -c "! grep -iE 'build.?id|mismatch' '$T_DIR/$kind-$sym.err'"
		check "go-$kind, symbolized=$sym: main.spin is the hot function" \
			grep -qE '^ +[0-9.]+m?s +(9[0-9]|100)(\.[0-9]+)?% .* main\.spin$' "$T_DIR/$kind-$sym.top"
	done
	go tool pprof -raw "$T_DIR/$kind-no.pb.gz" > "$T_DIR/$kind.raw" 2>&1
	line=$(grep -E "^ *[0-9]+: 0x[0-9a-f]+/0x[0-9a-f]+/0x[0-9a-f]+ $bin" "$T_DIR/$kind.raw" || true)
	echo "mapping: $line"
	if [ -n "$gnu" ]; then
		check "go-$kind: the mapping carries the GNU build-id $gnu" grep -qF "$gnu" <<< "$line"
	else
		check "go-$kind: no GNU build-id, none invented" bash -c "! grep -qE ' [0-9a-f]{16,}( |$)' <<< '$line'"
	fi
done
finish
