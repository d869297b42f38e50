# Shared by the hardening tests that record (real BPF, root): source it
# first thing.  Helpers to check what a failed or interrupted recording
# leaves behind.
# shellcheck shell=bash
. "${BPROF_SRC:?}/tests/e2e/lib.sh"
require_bpf
W=${BPROF_WORKLOADS:?}
REC=${BPROF_RECORD:?}
DUMP=${BPROF_DUMP:?}
REP=${BPROF_REPORT:?}
for t in "$REC" "$DUMP" "$REP"; do
	[ -x "$t" ] || skip "$t not built"
done
BG_PIDS=""
CLEANUP=""
# KEEP=1 keeps $T_DIR for debugging a failure
trap 'rc=$?; for p in $BG_PIDS; do kill "$p" 2>/dev/null || true; done; eval "$CLEANUP"; if [ -n "${KEEP:-}" ]; then echo "kept $T_DIR" >&2; else (exit $rc); t_exit; fi' EXIT

# bg CMD...: start a workload in the background; its pid in $BG.
bg() {
	"$@" >/dev/null 2>&1 &
	BG=$!
	BG_PIDS="$BG_PIDS $BG"
}

# plant_earlier DIR: an earlier recording in DIR (earlier.bprof) that no
# failed or interrupted run may touch.
plant_earlier() {
	cp "$BPROF_SRC/tests/data/format/valid/typical.bprof" "$1/earlier.bprof"
	sha256sum <"$1/earlier.bprof" >"$T_DIR/.earlier.$(echo "$1" | md5sum | cut -c1-8)"
}

# aftermath WHAT DIR NAME: (DIR a fresh directory under $T_DIR) after a run that wrote (or not) DIR/NAME:
#  - DIR/NAME is either absent or a complete file bprof-dump reads;
#  - nothing else but earlier.bprof in DIR (no temporary file left);
#  - earlier.bprof untouched.
# Sets HAVE_FILE=1 when DIR/NAME exists; its dump is then in DIR.NAME.txt
# (DIR.long-name.txt for names over 100 bytes).
aftermath() {
	local what=$1 dir=$2 name=$3 other
	HAVE_FILE=0
	if [ -e "$dir/$name" ] || [ -L "$dir/$name" ]; then
		HAVE_FILE=1
		local txt=$dir.$name.txt
		[ ${#name} -le 100 ] || txt=$dir.long-name.txt
		check "$what: $name is complete (bprof-dump reads it)" dump_to "$dir/$name" "$txt"
	else
		ok "$what: no $name"
	fi
	other=$(cd "$dir" && ls -A | grep -v -x -e earlier.bprof -e "$name" || true)
	check "$what: no temporary file left in $(basename "$dir") [${other//$'\n'/ }]" test -z "$other"
	check "$what: earlier.bprof untouched" \
		sh -c "sha256sum <'$dir/earlier.bprof' | cmp -s - '$T_DIR/.earlier.$(echo "$dir" | md5sum | cut -c1-8)'"
}

# dump_to FILE OUT: bprof-dump FILE into OUT (status of bprof-dump)
dump_to() { "$DUMP" "$1" >"$2" 2>"$2.err"; }

# loss FILE.txt NAME: a loss counter from a bprof-dump output
loss() { awk -v n="$2" '$1 == "loss" && $2 == n { print $3 }' "$1"; }
