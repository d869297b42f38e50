#!/usr/bin/env bash
# Bad inputs get a clear error and a non-zero exit (never a crash or hang);
# a pipe closed early ends quietly.
source "$BPROF_SRC/tests/e2e/lib.sh"
require_bpf

"$BPROF_RECORD" -q -F 99 -o "$T_DIR/good.bprof" -- "$BPROF_WORKLOADS/ratio" 1

bad() { # NAME FILE: exit 1 with a message naming the file, within 10 s
	local name=$1 file=$2 rc=0
	timeout 10 "$BPROF_REPORT" -f "$file" > /dev/null 2> "$T_DIR/err" || rc=$?
	T_CHECKS=$((T_CHECKS + 1))
	if [ "$rc" -eq 1 ] && grep -q "prof-report: " "$T_DIR/err"; then
		echo "ok: $name -> $(head -c 200 "$T_DIR/err")"
	else
		fail "$name: exit $rc, stderr: $(head -c 300 "$T_DIR/err")"
	fi
}

: > "$T_DIR/empty"; bad "empty file" "$T_DIR/empty"
bad "missing file" "$T_DIR/nope"
mkdir "$T_DIR/nobprof"; : > "$T_DIR/nobprof/notes.txt"
bad "directory without .bprof files" "$T_DIR/nobprof"
mkdir "$T_DIR/baddir"; cp "$T_DIR/good.bprof" "$T_DIR/baddir/a.bprof"
head -c 4096 /dev/urandom > "$T_DIR/baddir/b.bprof"
bad "directory with a damaged .bprof file" "$T_DIR/baddir"
mkfifo "$T_DIR/fifo"; bad "FIFO" "$T_DIR/fifo"
head -c 4096 /dev/urandom > "$T_DIR/random"; bad "random bytes" "$T_DIR/random"
size=$(stat -c %s "$T_DIR/good.bprof")
for cut in 8 16 $((size / 2)) $((size - 1)); do
	head -c "$cut" "$T_DIR/good.bprof" > "$T_DIR/trunc"; bad "truncated to $cut bytes" "$T_DIR/trunc"
done
cp "$T_DIR/good.bprof" "$T_DIR/garbage"; echo junk >> "$T_DIR/garbage"; bad "trailing garbage" "$T_DIR/garbage"

rc=0; "$BPROF_REPORT" "$T_DIR/good.bprof" "$T_DIR/good.bprof" 2>"$T_DIR/err" | head -n 1 > /dev/null || rc=$?
check "a pipe closed early ends quietly" sh -c "[ $rc -eq 0 ] && ! grep -qi 'broken pipe' '$T_DIR/err'"
rc=0; "$BPROF_REPORT" > /dev/null 2>&1 || rc=$?
check "no file is a usage error (exit 2)" test "$rc" -eq 2
rc=0; "$BPROF_REPORT" --diff "$T_DIR/good.bprof" > /dev/null 2>&1 || rc=$?
check "--diff with one file is a usage error" test "$rc" -eq 2
finish
