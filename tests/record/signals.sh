#!/bin/bash
# SIGINT ends a recording and writes the file; a second signal aborts with no
# file; an existing file or a planted symlink at -o is never overwritten.
. "$(dirname "$0")/common.sh"

bg "$W/ratio" 600 1 # killed at exit

# start_rec OUT: the recorder in the background ($rp), once it samples (its
# "Sampling at" line: the signal handlers are in place by then; a fixed
# sleep was shorter than the BPF load on a loaded host, and SIGTERM then
# killed it before it had a handler)
start_rec() {
	# emptied here, not by the background job's redirection: that runs
	# after the fork, and the loop below could read the previous run's
	# "Sampling" line first
	: >"$T_DIR/rec.err"
	"$BPROF_RECORD" -o "$1" 2>>"$T_DIR/rec.err" &
	rp=$!
	for _ in $(seq 500); do
		grep -q '^Sampling' "$T_DIR/rec.err" && return 0
		kill -0 "$rp" 2>/dev/null || return 0
		sleep 0.04
	done
}

# one SIGINT: a valid file
out=$T_DIR/int.bprof
start_rec "$out"
sleep 0.5
kill -INT $rp
rc=0; wait $rp || rc=$?
check "SIGINT: exit status 0" test "$rc" -eq 0
check "SIGINT: file readable by bprof-dump" dump "$out"
check "SIGINT: has samples" test "$(dumpq "$out.txt" samples '*')" -gt 0
check "file mode 0600" test "$(stat -c %a "$out")" = 600

# SIGTERM works the same
out=$T_DIR/term.bprof
start_rec "$out"
kill -TERM $rp
rc=0; wait $rp || rc=$?
check "SIGTERM: exit 0 and a readable file" dump "$out"

# two signals: no file, no temporary left behind
mkdir "$T_DIR/two"
out=$T_DIR/two/x.bprof
start_rec "$out"
# Signals of one kind do not queue, and a small recording is dumped in
# less time than a shell takes between two kills (the CI saw the recorder
# gone before the second). So both arrive while the recorder is stopped:
# SIGINT and SIGTERM are two signals, pending together, taken one after the
# other on SIGCONT, before any table is read.
kill -STOP $rp
kill -INT $rp
kill -TERM $rp
kill -CONT $rp
rc=0; wait $rp || rc=$?
check "second signal: non-zero exit" test "$rc" -ne 0
check "second signal: no file" test ! -e "$out"
check "second signal: directory left empty" test -z "$(ls -A "$T_DIR/two")"

# existing file: refused before recording, untouched
out=$T_DIR/exists.bprof
echo keep >"$out"
rc=0; "$BPROF_RECORD" -q -o "$out" 1 2>"$T_DIR/err" || rc=$?
cat "$T_DIR/err"
check "existing output: non-zero exit" test "$rc" -ne 0
check "existing output: untouched" test "$(cat "$out")" = keep
check "existing output: message names --force" grep -q -- --force "$T_DIR/err"
"$BPROF_RECORD" -q --force -o "$out" 1
check "--force replaces it" dump "$out"

# symlink planted at -o: not followed, target untouched
echo precious >"$T_DIR/target"
ln -s "$T_DIR/target" "$T_DIR/link.bprof"
rc=0; "$BPROF_RECORD" -q -o "$T_DIR/link.bprof" 1 2>/dev/null || rc=$?
check "symlink at -o: non-zero exit" test "$rc" -ne 0
check "symlink target untouched" test "$(cat "$T_DIR/target")" = precious
check "symlink still a symlink" test -L "$T_DIR/link.bprof"
finish
