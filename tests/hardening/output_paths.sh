#!/bin/bash
# Output paths that cannot work must be refused before recording, not after
# the user waited for the whole recording: a missing directory, a read-only
# file system, an existing directory (even with --force).  And awkward but
# valid ones must work: a 250-byte file name (the temporary name is longer
# still), a relative path.  After each: the directory holds what it held.
. "$(dirname "$0")/common.sh"

# fast_refusal WHAT PATTERN ARGS...: non-zero exit within 5 s of a 60 s
# recording (a refusal after recording would take a minute; 5 s leave a
# busy host its start-up), message matching PATTERN
fast_refusal() {
	local what=$1 pat=$2 rc=0 t0 t1; shift 2
	t0=$(date +%s%N)
	"$REC" -q "$@" 60 2>"$T_DIR/err" || rc=$?
	t1=$(date +%s%N)
	cat "$T_DIR/err"
	check "$what: non-zero exit (got $rc)" test "$rc" -ne 0 -a "$rc" -lt 128
	check "$what: refused before recording ($(( (t1 - t0) / 1000000 )) ms)" \
		test $(( (t1 - t0) / 1000000 )) -lt 5000
	check "$what: message says why" grep -q -E "$pat" "$T_DIR/err"
}

fast_refusal "missing directory" 'No such file or directory' -o "$T_DIR/missing/x.bprof"

mkdir "$T_DIR/ro"
if mount -t tmpfs -o ro,size=1m bprof-hardening-ro "$T_DIR/ro"; then
	CLEANUP='umount "$T_DIR/ro" 2>/dev/null || true'
	fast_refusal "read-only file system" 'Read-only file system' -o "$T_DIR/ro/x.bprof"
	umount "$T_DIR/ro"
	CLEANUP=""
fi

d=$T_DIR/dir
mkdir -p "$d/target.bprof"
plant_earlier "$d"
fast_refusal "existing directory at -o" 'already exists' -o "$d/target.bprof"
fast_refusal "existing directory at -o, --force" 'directory' --force -o "$d/target.bprof"
check "the directory is still there" test -d "$d/target.bprof"
left=$(cd "$d" && ls -A | sort | tr '\n' ' ')
check "nothing else in its parent [$left]" test "$left" = "earlier.bprof target.bprof "

# valid but awkward
d=$T_DIR/long
mkdir "$d"
plant_earlier "$d"
name=$(printf 'n%.0s' $(seq 244)).bprof
rc=0
"$REC" -q -o "$d/$name" 1 2>"$T_DIR/err" || rc=$?
cat "$T_DIR/err"
check "250-byte file name: exit 0" test "$rc" -eq 0
aftermath "250-byte file name" "$d" "$name"

d=$T_DIR/rel
mkdir "$d"
plant_earlier "$d"
rc=0
(cd "$d" && "$REC" -q -o rel.bprof 1) 2>"$T_DIR/err" || rc=$?
check "relative -o: exit 0" test "$rc" -eq 0
aftermath "relative -o" "$d" rel.bprof
finish
