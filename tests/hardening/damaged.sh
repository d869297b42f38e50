#!/bin/bash
# Damaged and hostile inputs through the real prof-report: every golden
# invalid file (tests/data/format/invalid/), special files (FIFO, directory,
# /dev/zero), an empty file, a missing file.  For each: exit status exactly 1,
# a "prof-report:" message naming the file, no crash, no hang (timeout 10 s),
# bounded memory (ulimit -v ~1 GB unless the binary carries ASan).
# No BPF needed.
. "${BPROF_SRC:?}/tests/e2e/lib.sh"

R=${BPROF_REPORT:?}
[ -x "$R" ] || skip "$R not built"
INV=$BPROF_SRC/tests/data/format/invalid
VALID=$BPROF_SRC/tests/data/format/valid

# ASan reserves terabytes of address space: no ulimit -v then.
memcap="ulimit -v 1000000"
if nm -an "$R" 2>/dev/null | grep -q __asan_init || ldd "$R" 2>/dev/null | grep -q libasan; then
	memcap=":"
	echo "note: $R is built with ASan: no ulimit -v memory cap"
fi

# run_report OUTBASE ARGS...: prof-report under timeout and the memory cap;
# stdout/stderr in OUTBASE.out/.err, exit status in $RC.
run_report() {
	local base=$1; shift
	RC=0
	( eval "$memcap"; exec timeout -k 2 10 "$R" "$@" ) >"$base.out" 2>"$base.err" </dev/null || RC=$?
}

# expect_refused WHAT FILE ARGS...: exit 1, "prof-report:" and FILE in stderr
expect_refused() {
	local what=$1 file=$2; shift 2
	local base
	base=$T_DIR/run.$T_CHECKS
	run_report "$base" "$@"
	T_CHECKS=$((T_CHECKS + 1))
	local why=""
	if [ "$RC" -eq 124 ] || [ "$RC" -eq 137 ]; then
		why="hung (timeout, exit $RC)"
	elif [ "$RC" -ge 128 ]; then
		why="crashed (exit $RC, signal $((RC - 128)))"
	elif [ "$RC" -ne 1 ]; then
		why="exit status $RC, expected 1"
	elif ! grep -q 'prof-report:' "$base.err"; then
		why="stderr lacks 'prof-report:'"
	elif ! grep -qF -- "$file" "$base.err"; then
		why="stderr does not name $file"
	fi
	if [ -n "$why" ]; then
		fail "$what: $why; stderr: $(head -c 400 "$base.err")"
	else
		echo "ok: $what: $(head -n1 "$base.err")"
	fi
}

n=0
for f in "$INV"/*.bprof; do
	b=$(basename "$f")
	expect_refused "$b (-f)" "$f" -f "$f"
	expect_refused "$b (--info)" "$f" --info "$f"
	n=$((n + 1))
done
check "golden invalid files found (>= 100)" test "$n" -ge 100
# The huge-count files exist and were run above; name them for the log.
for b in count-claims-10e12-entries stacks-claim-10e12-entries ksyms-claim-10e12-entries; do
	check "$b.bprof present" test -f "$INV/$b.bprof"
done

# A damaged file among good ones: still refused as a whole, naming the bad one.
expect_refused "valid + damaged (merge)" "$INV/zstd-checksum-mismatch.bprof" \
	-f "$VALID/typical.bprof" "$INV/zstd-checksum-mismatch.bprof"
expect_refused "--diff with damaged AFTER" "$INV/trailing-garbage.bprof" \
	--diff "$VALID/typical.bprof" "$INV/trailing-garbage.bprof"

# Special files.
mkfifo "$T_DIR/fifo.bprof"
expect_refused "FIFO (-f)" "$T_DIR/fifo.bprof" -f "$T_DIR/fifo.bprof"
expect_refused "FIFO (--info)" "$T_DIR/fifo.bprof" --info "$T_DIR/fifo.bprof"
mkdir "$T_DIR/dir.bprof"
expect_refused "directory (-f)" "$T_DIR/dir.bprof" -f "$T_DIR/dir.bprof"
expect_refused "directory (--info)" "$T_DIR/dir.bprof" --info "$T_DIR/dir.bprof"
expect_refused "/dev/zero (-f)" /dev/zero -f /dev/zero
expect_refused "/dev/zero (--info)" /dev/zero --info /dev/zero
expect_refused "/dev/null (-f)" /dev/null -f /dev/null
: >"$T_DIR/zero-bytes.bprof"
expect_refused "0-byte file (-f)" "$T_DIR/zero-bytes.bprof" -f "$T_DIR/zero-bytes.bprof"
expect_refused "0-byte file (--info)" "$T_DIR/zero-bytes.bprof" --info "$T_DIR/zero-bytes.bprof"
expect_refused "missing file" "$T_DIR/missing.bprof" -f "$T_DIR/missing.bprof"
# A sparse 2 GiB file of zeros: refused from its header, not read whole.
truncate -s 2G "$T_DIR/sparse.bprof"
expect_refused "2 GiB sparse file" "$T_DIR/sparse.bprof" -f "$T_DIR/sparse.bprof"
# A valid header followed by 64 MiB of garbage.
{ head -c 24 "$VALID/typical.bprof"; head -c 64M /dev/urandom; } >"$T_DIR/garbage.bprof"
expect_refused "valid header + 64 MiB garbage" "$T_DIR/garbage.bprof" -f "$T_DIR/garbage.bprof"

# Damaged symbol cache files (libsym/CACHE.md): a recording naming a real
# object (bprof-mkrec nosym) is reported once to create its cache file,
# whose contents are then replaced by each defect.  Each time: exit 0, the
# output of --no-cache, no hang, no crash, bounded memory; damaged contents
# are named in a warning and the file is rebuilt.
MKREC=${BPROF_BUILD:?}/tests/hardening/bprof-mkrec
ELF=${BPROF_WORKLOADS:?}/demo
BID=$(readelf -n "$ELF" | awk '/Build ID/ {print $3}')
if [ -x "$MKREC" ] && [ -n "$BID" ]; then
	CD=$T_DIR/symcache
	"$MKREC" nosym "$T_DIR/nosym.bprof" "$ELF" "$BID"
	run_report "$T_DIR/nocache" -f --no-cache "$T_DIR/nosym.bprof"
	run_report "$T_DIR/cold" -f --cache-dir "$CD" "$T_DIR/nosym.bprof"
	CF=$(find "$CD" -name '*.bsc' | head -1)
	check "a cache file was written for $ELF" test -n "$CF"
	cache_case() { # WHAT WARN(yes/no): CF already damaged
		local what=$1 warn=$2
		run_report "$T_DIR/dmg" -f --cache-dir "$CD" "$T_DIR/nosym.bprof"
		T_CHECKS=$((T_CHECKS + 1))
		if [ "$RC" -ne 0 ]; then
			fail "cache file $what: exit $RC: $(head -c 300 "$T_DIR/dmg.err")"
		elif ! cmp -s "$T_DIR/nocache.out" "$T_DIR/dmg.out"; then
			fail "cache file $what: output differs from --no-cache"
		elif [ "$warn" = yes ] && ! grep -q "cache file .* is damaged" "$T_DIR/dmg.err"; then
			fail "cache file $what: no warning: $(head -c 300 "$T_DIR/dmg.err")"
		else
			echo "ok: cache file $what: exit 0, same output$([ "$warn" = yes ] && echo ', warned')"
		fi
	}
	size=$(stat -c %s "$CF")
	cp "$CF" "$T_DIR/good.bsc"
	for cut in 0 1 8 35 36 $((size / 2)) $((size - 1)); do
		head -c "$cut" "$T_DIR/good.bsc" > "$CF"; cache_case "truncated to $cut bytes" yes
	done
	{ cat "$T_DIR/good.bsc"; echo junk; } > "$CF"; cache_case "with trailing garbage" yes
	head -c 1M /dev/urandom > "$CF"; cache_case "1 MiB of random bytes" yes
	rm -f "$CF"; truncate -s 2G "$CF"; cache_case "2 GiB sparse (not read)" yes
	rm -f "$CF"; mkfifo "$CF"; cache_case "a FIFO (no hang)" yes
	rm -f "$CF"; mkdir "$CF"; cache_case "a directory" yes
	rmdir "$CF"; ln -s /dev/zero "$CF"; cache_case "a symlink to /dev/zero (not followed)" no
	check "the symlink was replaced by a valid file" test -f "$CF" -a ! -L "$CF"
	run_report "$T_DIR/again" -f --cache-dir "$CD" "$T_DIR/nosym.bprof"
	check "rebuilt: no warning the next time" sh -c "! grep -q 'cache file' '$T_DIR/again.err'"
fi

# Sanity: the same harness accepts a valid file (exit 0).
run_report "$T_DIR/valid" -f "$VALID/typical.bprof"
check "valid golden file: exit 0" test "$RC" -eq 0
run_report "$T_DIR/valid-info" --info "$VALID/typical.bprof"
check "valid golden file --info: exit 0" test "$RC" -eq 0
finish
