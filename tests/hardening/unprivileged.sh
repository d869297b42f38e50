#!/bin/bash
# BPF unavailable: prof-record run as nobody (no capabilities) must say
# what it needs (root / CAP_BPF / CAP_PERFMON), exit non-zero, and leave no
# file - in a directory nobody may write, so that the permission check is
# not what stops it.
. "$(dirname "$0")/common.sh"
command -v setpriv >/dev/null || skip "setpriv (util-linux) not installed"

d=$T_DIR/out
mkdir "$d"
chmod 0777 "$d"
chmod 0755 "$T_DIR"
plant_earlier "$d"
chmod 0644 "$d/earlier.bprof"
# the binary must be reachable by nobody: the build tree may sit in a
# private directory, so run a copy
cp "$REC" "$T_DIR/prof-record"
chmod 0755 "$T_DIR/prof-record"
REC=$T_DIR/prof-record
check "nobody can run the copy" setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$REC"
rc=0
setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
	"$REC" -o "$d/x.bprof" 1 >"$T_DIR/out.txt" 2>"$T_DIR/err" || rc=$?
cat "$T_DIR/err"
check "unprivileged: non-zero exit" test "$rc" -ne 0
check "unprivileged: exit below 128 (no crash)" test "$rc" -lt 128
check "unprivileged: message names root or the capabilities" \
	grep -q -E 'root|CAP_BPF|CAP_PERFMON' "$T_DIR/err"
check "unprivileged: message starts with prof-record:" grep -q '^prof-record:' "$T_DIR/err"
aftermath "unprivileged" "$d" x.bprof
check "unprivileged: no file" test "$HAVE_FILE" -eq 0

# also with a capability set that has CAP_PERFMON but not CAP_BPF
if setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=+perfmon --ambient-caps=+perfmon true 2>/dev/null; then
	rc=0
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=+perfmon --ambient-caps=+perfmon \
		"$REC" -o "$d/y.bprof" 1 >/dev/null 2>"$T_DIR/err2" || rc=$?
	cat "$T_DIR/err2"
	check "CAP_PERFMON only: non-zero exit" test "$rc" -ne 0 -a "$rc" -lt 128
	check "CAP_PERFMON only: message names CAP_BPF" grep -q 'CAP_BPF' "$T_DIR/err2"
	aftermath "CAP_PERFMON only" "$d" y.bprof
fi
finish
