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

# start_share FOLDED COMM: "k t", COMM's samples (prof-report -f -U) whose
# stack reaches the first frame of its thread, and all of them.  Reached:
# main's stacks (__libc_start_call_main), a thread's (start_thread), and
# the program's start-up before main, in ld.so's entry code (_start
# calling _dl_start: relocation; _dl_start_user calling _dl_init: the
# libraries' constructors) or in the executable's constructors
# (__libc_start_main_impl calling call_init).  Before 2026-11-30 only the
# first two counted: clang++'s start-up (12-15 of ~1,900 samples here, 36
# with a cold page cache) was counted incomplete whatever the walk did.
# A stack with a skipped caller is not complete.
start_share() {
	awk -v c="$2;" 'index($0, c) == 1 { t += $NF } index($0, c) == 1 && !/\[missing caller\]/ &&
		(/;(__libc_start_call_main|start_thread);/ ||
		 index($0, c "_start;_dl_start;") == 1 || index($0, c "_dl_start_user;_dl_init;") == 1 ||
		 index($0, c "_start;__libc_start_main_impl;call_init;") == 1) { k += $NF }
		END { print k + 0, t + 0 }' "$1"
}
