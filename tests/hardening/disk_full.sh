#!/bin/bash
# A full disk while writing the recording: a 64 KiB tmpfs is far too small
# for a recording with the full kallsyms snapshot (--full-kallsyms).  prof-record must say so
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
# --full-kallsyms: ~650 KiB, far more than the 64 KiB the tmpfs holds
"$REC" -q -F 99 --full-kallsyms -o "$full/new.bprof" 1 2>"$T_DIR/err" || rc=$?
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

# inject_case WHAT NAME STRACE-ARGS -- RECORD-ARGS: prof-record under strace
# fault injection; outcome checked by aftermath; the message must match the
# outcome: "nothing written" exactly when there is no file (when the file is
# in place but its directory could not be synced, say so - exit 0 with a
# warning or 1 are both acceptable).
inject_case() {
	local what=$1 name=$2 rc=0; shift 2
	local sargs=()
	while [ "$1" != "--" ]; do sargs+=("$1"); shift; done
	shift
	local d=$T_DIR/inject-$name
	mkdir "$d"
	plant_earlier "$d"
	strace -f "${sargs[@]}" -o /dev/null "$REC" -q -F 99 "$@" -o "$d/new.bprof" 1 \
		2>"$T_DIR/err" || rc=$?
	cat "$T_DIR/err"
	check "$what: exit below 128 (got $rc)" test "$rc" -lt 128
	aftermath "$what" "$d" new.bprof
	if [ "$HAVE_FILE" = 0 ]; then
		check "$what: no file, so a non-zero exit" test "$rc" -ne 0
	fi
	if [ "$HAVE_FILE" = 1 ]; then
		check "$what: the file is there, so the message must not say 'nothing written'" \
			sh -c "! grep -q 'nothing written' '$T_DIR/err'"
	else
		check "$what: no file, message says 'nothing written'" grep -q 'nothing written' "$T_DIR/err"
	fi
}

# the steps of the atomic write failing one by one
inject_case "link EIO (no --force)" link -e trace=link,linkat -e inject=link,linkat:error=EIO --
inject_case "rename EIO (--force)" rename -e trace=rename,renameat,renameat2 \
	-e inject=rename,renameat,renameat2:error=EIO -- --force
inject_case "fsync of the file EIO" fsync1 -e trace=fsync -e inject=fsync:error=EIO:when=1 --
# the directory's fsync (the last step) failing: the file is in place
inject_case "fsync of the directory EIO" fsync2 -e trace=fsync -e inject=fsync:error=EIO:when=2 --

# write(2) -> ENOSPC from the third call on.  stderr is written with
# write(2) too, so the message cannot be checked here, only the outcome.
d=$T_DIR/inject-write
mkdir "$d"
plant_earlier "$d"
rc=0
strace -f -e trace=write -e inject=write:error=ENOSPC:when=3+ -o /dev/null \
	"$REC" -q -F 99 --full-kallsyms -o "$d/new.bprof" 1 2>"$T_DIR/err" || rc=$?
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
