#!/usr/bin/env bash
# The symbol cache (libsym/CACHE.md) end to end: every output of prof-report
# is byte-identical with no cache, a cold cache and a warm one, over
# recordings of the project's workloads and of the whole system; a
# damaged or truncated cache file is ignored with a warning and rebuilt
# (exit 0, the same output); debuginfo that appears later is used, and
# debuginfo that disappears is not remembered; the default directory follows
# XDG; --no-cache writes nothing; two reports at once share the cache.
source "$BPROF_SRC/tests/e2e/lib.sh"
require_bpf

C=$T_DIR/cache
export XDG_CACHE_HOME=$T_DIR/xdg # the default, when a check does not pass --cache-dir

cp "$BPROF_WORKLOADS/stripped" "$T_DIR/stripped"
"$BPROF_RECORD" -q -F 499 -o "$T_DIR/demo.bprof" -- "$BPROF_WORKLOADS/demo" 1
"$BPROF_RECORD" -q -F 499 -o "$T_DIR/cxx.bprof" -- "$BPROF_WORKLOADS/cxxwork" 1
"$BPROF_RECORD" -q -F 499 -o "$T_DIR/uw.bprof" -- "$BPROF_WORKLOADS/uw-gcc" 0.5 qsort recurse threads signal plt dlopen leaf
"$BPROF_RECORD" -q -F 499 -o "$T_DIR/dl.bprof" -- "$BPROF_WORKLOADS/dlopener" 1
"$BPROF_RECORD" -q -F 499 -o "$T_DIR/s.bprof" -- "$T_DIR/stripped" 1
# the whole system (kernel stacks, many objects) while a workload runs
"$BPROF_WORKLOADS/ratio" 2 > /dev/null &
wl=$!
"$BPROF_RECORD" -q -F 999 -o "$T_DIR/all.bprof" 1
wait "$wl" || true

# same DESCRIPTION ARGS...: prof-report ARGS with --no-cache, then twice with
# the cache in $C (cold, then warm): stdout and exit status identical.
same() {
	local what=$1; shift
	local r0=0 r1=0 r2=0
	"$BPROF_REPORT" -q --no-cache "$@" > "$T_DIR/o0" 2>/dev/null || r0=$?
	"$BPROF_REPORT" -q --cache-dir "$C" "$@" > "$T_DIR/o1" 2>/dev/null || r1=$?
	"$BPROF_REPORT" -q --cache-dir "$C" "$@" > "$T_DIR/o2" 2>/dev/null || r2=$?
	T_CHECKS=$((T_CHECKS + 1))
	if [ "$r0$r1$r2" = 000 ] && { [ -s "$T_DIR/o0" ] || [ -n "${EMPTY_OK:-}" ]; } && cmp -s "$T_DIR/o0" "$T_DIR/o1" &&
		cmp -s "$T_DIR/o0" "$T_DIR/o2"; then
		echo "ok: $what: identical ($(wc -c < "$T_DIR/o0") bytes)"
	else
		fail "$what: exit $r0/$r1/$r2; $(diff "$T_DIR/o0" "$T_DIR/o2" | head -5)"
	fi
}

for r in demo cxx uw dl s all; do
	f=$T_DIR/$r.bprof
	same "$r: multi-line" "$f"
	same "$r: -f -a" -f -a "$f"
	same "$r: -f --addresses -d" -f --addresses -d "$f"
	same "$r: -f --no-inline" -f --no-inline "$f"
	same "$r: -f --no-demangle -U" -f --no-demangle -U "$f"
	same "$r: --speedscope" --speedscope - "$f"
	EMPTY_OK=1 same "$r: --missing-buildids" --missing-buildids "$f"
done
same "all: -K" -f -K "$T_DIR/all.bprof"
same "merge of three" -f "$T_DIR/demo.bprof" "$T_DIR/cxx.bprof" "$T_DIR/all.bprof"
same "--diff" --diff -n "$T_DIR/demo.bprof" "$T_DIR/all.bprof"
same "--svg" --svg - "$T_DIR/cxx.bprof"
same "--info" --info "$T_DIR/all.bprof"
same "--debug-dir" -f --debug-dir "$BPROF_WORKLOADS/debug" "$T_DIR/s.bprof"
nfiles=$(find "$C" -name '*.bsc' | wc -l)
check "the cache holds files ($nfiles)" test "$nfiles" -gt 3

# The summary on stderr (named share, objects lacking symbols) is the same too.
"$BPROF_REPORT" -f --no-cache "$T_DIR/all.bprof" 2> "$T_DIR/e0" > /dev/null
"$BPROF_REPORT" -f --cache-dir "$C" "$T_DIR/all.bprof" 2> "$T_DIR/e1" > /dev/null
check "warm summary equals the uncached one" cmp -s "$T_DIR/e0" "$T_DIR/e1"

# Debuginfo that appears later is used; when it goes away, its names go too.
rm "$T_DIR/stripped"
"$BPROF_REPORT" -q -f --cache-dir "$C" "$T_DIR/s.bprof" > "$T_DIR/bare1"
"$BPROF_REPORT" -q -f --cache-dir "$C" --debug-dir "$BPROF_WORKLOADS/debug" "$T_DIR/s.bprof" > "$T_DIR/named"
"$BPROF_REPORT" -q -f --cache-dir "$C" "$T_DIR/s.bprof" > "$T_DIR/bare2"
check "debuginfo found later names stripped_work (no cached [stripped] hides it)" \
	grep -qE '^stripped;.*stripped_work[; ]' "$T_DIR/named"
check "debuginfo gone again: no cached name appears" sh -c "! grep -q stripped_work '$T_DIR/bare2'"
check "... and the output is the first run's" cmp -s "$T_DIR/bare1" "$T_DIR/bare2"

# Damaged cache files: truncated, a flipped byte, garbage, empty.  Each is
# refused with a warning naming it, exit 0, the same output, and rebuilt.
"$BPROF_REPORT" -q -f --no-cache "$T_DIR/demo.bprof" > "$T_DIR/ref"
files=$(find "$C" -name '*.bsc' | sort)
damage() { # HOW FILE
	local sz
	sz=$(stat -c %s "$2")
	case $1 in
	truncated) truncate -s $((sz / 2)) "$2" ;;
	flipped) printf '\x55' | dd of="$2" bs=1 seek=$((sz - 5)) conv=notrunc status=none ;;
	garbage) head -c "$sz" /dev/urandom > "$2" ;;
	empty) : > "$2" ;;
	esac
}
for how in truncated flipped garbage empty; do
	for f in $files; do damage "$how" "$f"; done
	rc=0
	"$BPROF_REPORT" -f --cache-dir "$C" "$T_DIR/demo.bprof" > "$T_DIR/out" 2> "$T_DIR/err" || rc=$?
	check "$how cache files: exit 0" test "$rc" -eq 0
	check "$how cache files: same output" cmp -s "$T_DIR/ref" "$T_DIR/out"
	check "$how cache files: a warning says damaged, rebuilt" \
		grep -q "prof-report: warning: cache file .*\.bsc is damaged (.*): ignored, rebuilt" "$T_DIR/err"
	"$BPROF_REPORT" -f --cache-dir "$C" "$T_DIR/demo.bprof" > "$T_DIR/out" 2> "$T_DIR/err"
	check "$how cache files: rebuilt (no warning the next time)" sh -c "! grep -q 'cache file' '$T_DIR/err'"
	check "$how cache files: rebuilt, same output" cmp -s "$T_DIR/ref" "$T_DIR/out"
done

# A cache file another user planted (--cache-dir on shared storage) is not
# believed, however valid: warned about, replaced by our own.
for f in $files; do chown 65534:65534 "$f"; done
rc=0
"$BPROF_REPORT" -f --cache-dir "$C" "$T_DIR/demo.bprof" > "$T_DIR/out" 2> "$T_DIR/err" || rc=$?
check "another user's cache files: exit 0, same output" sh -c "[ $rc -eq 0 ] && cmp -s '$T_DIR/ref' '$T_DIR/out'"
check "another user's cache files: a warning says so" \
	grep -q "prof-report: warning: cache file .*\.bsc belongs to another user: ignored, replaced" "$T_DIR/err"
"$BPROF_REPORT" -f --cache-dir "$C" "$T_DIR/demo.bprof" > "$T_DIR/out" 2> "$T_DIR/err"
check "another user's cache files: replaced by ours (no warning the next time)" \
	sh -c "! grep -q 'cache file' '$T_DIR/err'"

# The default directory follows XDG_CACHE_HOME; --no-cache writes nothing.
"$BPROF_REPORT" -q -f --no-cache "$T_DIR/demo.bprof" > /dev/null
check "--no-cache writes nothing" test ! -e "$XDG_CACHE_HOME/bprof"
"$BPROF_REPORT" -q -f "$T_DIR/demo.bprof" > /dev/null
check "default cache is \$XDG_CACHE_HOME/bprof" sh -c "find '$XDG_CACHE_HOME/bprof' -name '*.bsc' | grep -q ."
check "the cache directory is private (0700)" test "$(stat -c %a "$XDG_CACHE_HOME/bprof")" = 700
rc=0; "$BPROF_REPORT" -f --no-cache --cache-dir "$C" "$T_DIR/demo.bprof" > /dev/null 2>&1 || rc=$?
check "--no-cache with --cache-dir is a usage error" test "$rc" -eq 2
# an unwritable default (HOME elsewhere, no XDG): no cache, no warning
rc=0
env -u XDG_CACHE_HOME HOME=/proc "$BPROF_REPORT" -f "$T_DIR/demo.bprof" > "$T_DIR/out" 2> "$T_DIR/err" || rc=$?
check "unusable default cache: exit 0, same output" sh -c "[ $rc -eq 0 ] && cmp -s '$T_DIR/ref' '$T_DIR/out'"
check "unusable default cache: no warning" sh -c "! grep -q warning '$T_DIR/err'"

# Two reports at once, four times, on a fresh cache: both succeed with the
# same output, no damage is ever seen, no temporary file is left.
rm -rf "$C"
ok=1
for i in 1 2 3 4; do
	"$BPROF_REPORT" -f --cache-dir "$C" "$T_DIR/all.bprof" > "$T_DIR/p1" 2> "$T_DIR/q1" &
	p=$!
	"$BPROF_REPORT" -f --cache-dir "$C" "$T_DIR/all.bprof" > "$T_DIR/p2" 2> "$T_DIR/q2" || ok=0
	wait "$p" || ok=0
	cmp -s "$T_DIR/p1" "$T_DIR/p2" || ok=0
	! grep -q "damaged" "$T_DIR/q1" "$T_DIR/q2" || ok=0
done
check "concurrent reports: same output, nothing damaged" test "$ok" -eq 1
check "concurrent reports: no temporary file left" sh -c "! find '$C' -name '*.tmp.*' | grep -q ."
finish
