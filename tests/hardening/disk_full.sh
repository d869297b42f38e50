#!/bin/bash
# A full disk while writing the recording: a 64 KiB tmpfs is far too small
# for a recording with its kallsyms snapshot.  prof-record must say so
# (ENOSPC / "No space"), exit non-zero, leave no file and no temporary file,
# and not touch an earlier file in that directory.  Then the same with
# write(2) failing with ENOSPC injected by strace (from the third write on),
# and fsync(2) failing with ENOSPC (delayed allocation on NFS, thin disks).
. "$(dirname "$0")/common.sh"

bg "$W/demo" 20
full=$T_DIR/full
mkdir "$full"
mount -t tmpfs -o size=64k,mode=0755 bprof-hardening "$full" || skip "cannot mount a tmpfs"
CLEANUP='umount "$T_DIR/full" 2>/dev/null || true'
plant_earlier "$full"

rc=0
"$REC" -q -F 99 -o "$full/new.bprof" 1 2>"$T_DIR/err" || rc=$?
cat "$T_DIR/err"
check "tmpfs full: non-zero exit" test "$rc" -ne 0
check "tmpfs full: exit below 128 (no crash)" test "$rc" -lt 128
check "tmpfs full: message names the cause" grep -q -E 'No space|ENOSPC' "$T_DIR/err"
check "tmpfs full: message names the file" grep -qF "$full/new.bprof" "$T_DIR/err"
check "tmpfs full: says nothing was written" grep -q 'nothing written' "$T_DIR/err"
aftermath "tmpfs full" "$full" new.bprof
check "tmpfs full: no file under the final name" test "$HAVE_FILE" -eq 0

# the same directory with room again: the recording succeeds (a sanity
# check that the failure above was the disk, not the setup)
umount "$full"
mount -t tmpfs -o size=16m,mode=0755 bprof-hardening "$full"
plant_earlier "$full"
rc=0
"$REC" -q -F 99 -o "$full/new.bprof" 1 2>"$T_DIR/err" || rc=$?
check "tmpfs with room: exit 0" test "$rc" -eq 0
aftermath "tmpfs with room" "$full" new.bprof
check "tmpfs with room: file written" test "$HAVE_FILE" -eq 1
umount "$full"
CLEANUP=""

if ! command -v strace >/dev/null; then
	skip "strace not installed (apt-get install strace) for the injected faults"
fi

# write(2) -> ENOSPC from the third call on.  stderr is written with
# write(2) too, so the message cannot be checked here, only the outcome.
d=$T_DIR/inject-write
mkdir "$d"
plant_earlier "$d"
rc=0
strace -f -e trace=write -e inject=write:error=ENOSPC:when=3+ -o /dev/null \
	"$REC" -q -F 99 -o "$d/new.bprof" 1 2>"$T_DIR/err" || rc=$?
check "write ENOSPC (strace): non-zero exit" test "$rc" -ne 0
check "write ENOSPC (strace): exit below 128 (no crash)" test "$rc" -lt 128
aftermath "write ENOSPC (strace)" "$d" new.bprof
check "write ENOSPC (strace): no file under the final name" test "$HAVE_FILE" -eq 0

# fsync(2) -> ENOSPC: the data never reached the disk
d=$T_DIR/inject-fsync
mkdir "$d"
plant_earlier "$d"
rc=0
strace -f -e trace=fsync -e inject=fsync:error=ENOSPC -o /dev/null \
	"$REC" -q -F 99 -o "$d/new.bprof" 1 2>"$T_DIR/err" || rc=$?
cat "$T_DIR/err"
check "fsync ENOSPC (strace): non-zero exit" test "$rc" -ne 0
check "fsync ENOSPC (strace): exit below 128 (no crash)" test "$rc" -lt 128
check "fsync ENOSPC (strace): message names the cause" grep -q -E 'No space|ENOSPC' "$T_DIR/err"
aftermath "fsync ENOSPC (strace)" "$d" new.bprof
check "fsync ENOSPC (strace): no file under the final name" test "$HAVE_FILE" -eq 0
finish
