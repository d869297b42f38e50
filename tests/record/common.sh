# Shared by the record e2e tests: source it first thing.
# shellcheck shell=bash disable=SC2034,SC1091
. "${BPROF_SRC:?}/tests/e2e/lib.sh"
require_bpf
W=${BPROF_WORKLOADS:?}
# dumpq DUMP QUERY [ARGS]: see dumpq.py
dumpq() { python3 "$BPROF_SRC/tests/record/dumpq.py" "$@"; }
BG_PIDS=""
trap 'rc=$?; for p in $BG_PIDS; do kill "$p" 2>/dev/null || true; done; (exit $rc); t_exit' EXIT
# KEEP=1 keeps $T_DIR (recordings and dumps) for debugging a failure
if [ -n "${KEEP:-}" ]; then
	trap 'for p in $BG_PIDS; do kill "$p" 2>/dev/null || true; done; echo "kept $T_DIR" >&2' EXIT
fi

for t in "$BPROF_RECORD" "$BPROF_DUMP"; do
	[ -x "$t" ] || skip "$t not built"
done

# bg CMD...: start a workload in the background; its pid in $BG.
bg() {
	"$@" >/dev/null &
	BG=$!
	BG_PIDS="$BG_PIDS $BG"
}

# dump FILE: bprof-dump it into FILE.txt (fails the test if unreadable).
dump() {
	"$BPROF_DUMP" "$1" >"$1.txt"
}

# build_id FILE: the GNU build-id of an ELF file, hex.
build_id() {
	readelf -n "$1" | sed -n 's/^ *Build ID: *\([0-9a-f]*\)$/\1/p' | head -n1
}

# between VALUE LO HI
between() { [ "$1" -ge "$2" ] && [ "$1" -le "$3" ]; }
