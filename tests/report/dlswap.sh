#!/usr/bin/env bash
# Code replaced at one address while recorded (issue 27): every 100 ms the
# dlswap workload unloads a library and loads another of the same layout,
# which the loader puts at the same address (checked).  Each sample must be
# named for the code it was taken in: each function at 50 % +- 10 % and
# none named for the other (a_phase only ever calls swap_a_work, b_phase
# only swap_b_work), under --unwind=auto and --unwind=fp.  Then the
# neighbours: the library replaced on disk under one path, a memfd
# library, anonymous memory made executable where the library was (JIT),
# a thread running a library another thread opens and closes.
source "$BPROF_SRC/tests/e2e/lib.sh"
require_bpf
W=$BPROF_WORKLOADS

# record NAME UNWIND MODE [ARGS]: $T_DIR/NAME.bprof, .out (the workload's
# stdout), .folded (with $REPORT_ARGS)
REPORT_ARGS=()
record() {
	local name=$1 unwind=$2
	shift 2
	"$BPROF_RECORD" -q -F 499 --unwind="$unwind" -o "$T_DIR/$name.bprof" -- \
		"$W/dlswap" "$@" > "$T_DIR/$name.out"
	"$BPROF_REPORT" -q -f "${REPORT_ARGS[@]}" "$T_DIR/$name.bprof" > "$T_DIR/$name.folded"
}

# samples NAME REGEX: samples of the folded stacks matching REGEX
samples() {
	awk -v re="$2" '$0 ~ re { s += $NF } END { print s + 0 }' "$T_DIR/$1.folded"
}

# one_base NAME: every library was loaded at one address
one_base() {
	local n
	n=$(awk '$1 == "base" { print $3 }' "$T_DIR/$1.out" | sort -u | wc -l)
	[ "$(awk '$1 == "base"' "$T_DIR/$1.out" | wc -l)" -ge 4 ] && [ "$n" -eq 1 ]
}

# half A B: A is 50 % +- 10 % of A + B
half() {
	python3 -c "
a, b = $1, $2
print('share %.3f of %d' % (a / max(a + b, 1), a + b))
exit(0 if a + b >= 200 and abs(a / (a + b) - 0.5) <= 0.10 else 1)"
}

for unwind in auto fp; do
	record "swap-$unwind" "$unwind" swap 4
	check "[$unwind] both libraries loaded at one address" one_base "swap-$unwind"
	a=$(samples "swap-$unwind" ';swap_a_work(;| )')
	b=$(samples "swap-$unwind" ';swap_b_work(;| )')
	echo "[$unwind] swap_a_work=$a swap_b_work=$b"
	check "[$unwind] swap_a_work at 50 % +- 10 %" half "$a" "$b"
	check "[$unwind] swap_b_work at 50 % +- 10 %" half "$b" "$a"
	check "[$unwind] no sample of b_phase named swap_a_work" \
		test "$(samples "swap-$unwind" ';b_phase;swap_a_work')" -eq 0
	check "[$unwind] no sample of a_phase named swap_b_work" \
		test "$(samples "swap-$unwind" ';a_phase;swap_b_work')" -eq 0
	check "[$unwind] a_phase calls swap_a_work" test "$(samples "swap-$unwind" ';a_phase;swap_a_work')" -gt 50
	check "[$unwind] b_phase calls swap_b_work" test "$(samples "swap-$unwind" ';b_phase;swap_b_work')" -gt 50
done
"$BPROF_REPORT" --info "$T_DIR/swap-auto.bprof" > "$T_DIR/swap-auto.info" 2>&1
check "--info says the process changed its mappings" \
	grep -qE '^mappings: +1 processes changed their executable mappings' "$T_DIR/swap-auto.info"
check "--info counts no unknowable frame (nothing was lost)" \
	grep -qE '^  frames of unknowable mapping: +0 in 0 samples' "$T_DIR/swap-auto.info"

# The same file name, another file: dlopen of one path whose file was
# replaced (rename) by the other library between two loads.  The path
# holds libswapb.so at the end: without the build directory to find
# libswapa.so by build-id, its frames are [libswap.so], never swap_b_work.
mkdir -p "$T_DIR/lib"
record replace auto replace 3 "$T_DIR/lib"
check "[replace] without libswapa.so's file: a_phase's frames unnamed, not swap_b_work" \
	test "$(samples replace ';a_phase;\\[libswap\\.so\\]')" -gt 100
REPORT_ARGS=(--debug-dir "$W")
"$BPROF_REPORT" -q -f "${REPORT_ARGS[@]}" "$T_DIR/replace.bprof" > "$T_DIR/replace.folded"
check "[replace] one address" one_base replace
a=$(samples replace ';swap_a_work(;| )')
b=$(samples replace ';swap_b_work(;| )')
echo "[replace] swap_a_work=$a swap_b_work=$b"
check "[replace] swap_a_work at 50 % +- 10 %" half "$a" "$b"
check "[replace] nothing misnamed" \
	test "$(samples replace ';b_phase;swap_a_work|;a_phase;swap_b_work')" -eq 0

# libswapb.so from a memfd: no file to name it by ([unknown]), but never
# libswapa.so's names.
record memfd auto memfd 3
check "[memfd] one address" one_base memfd
a=$(samples memfd ';a_phase;swap_a_work')
bp=$(samples memfd ';b_phase;')
echo "[memfd] a_phase;swap_a_work=$a b_phase=$bp"
check "[memfd] swap_a_work at 50 % +- 10 % (of the two phases)" half "$a" "$bp"
check "[memfd] no sample of b_phase named swap_a_work" test "$(samples memfd ';b_phase;swap_a_work')" -eq 0

# Anonymous memory mapped where libswapa.so's code was, made executable
# with mprotect: the JIT loop (named by the perf map) is never swap_a_work.
record jit auto jit 3
rm -f "$(awk '$1 == "perfmap" { print $2 }' "$T_DIR/jit.out")"
jit=$(awk '$1 == "jit" { print $2 }' "$T_DIR/jit.out")
base=$(awk '$1 == "base" { print $3 }' "$T_DIR/jit.out" | sort -u)
check "[jit] the JIT code ran inside libswapa.so's old range" python3 -c "
j, b = int('$jit', 16), int('$base', 16)
exit(0 if b <= j < b + 0x10000 else 1)"
a=$(samples jit ';swap_a_work(;| )')
aa=$(samples jit ';a_phase;swap_a_work(;| )')
j=$(samples jit ';jit_spin( |;)')
echo "[jit] swap_a_work=$a (under a_phase $aa) jit_spin=$j"
check "[jit] swap_a_work only under a_phase" test "$a" -eq "$aa"
check "[jit] jit_spin at 50 % +- 10 %" half "$j" "$a"

# One thread runs libswapa.so all along while the main thread opens and
# closes it (the thread's handle keeps it mapped) and runs libswapb.so.
record thread auto thread 3
ta=$(awk '/^dlswap-a;/ && /;swap_a_work(;| )/ { s += $NF } END { print s + 0 }' "$T_DIR/thread.folded")
tb=$(awk '/^dlswap-a;/ && /;swap_b_work(;| )/ { s += $NF } END { print s + 0 }' "$T_DIR/thread.folded")
mb=$(awk '/^dlswap;/ && /;b_phase;swap_b_work(;| )/ { s += $NF } END { print s + 0 }' "$T_DIR/thread.folded")
echo "[thread] thread: swap_a_work=$ta swap_b_work=$tb; main: b_phase;swap_b_work=$mb"
check "[thread] the thread's samples are swap_a_work" test "$ta" -gt 300
check "[thread] none of them swap_b_work" test "$tb" -eq 0
check "[thread] the main thread's library named" test "$mb" -gt 20
check "[thread] nothing misnamed" \
	test "$(samples thread ';b_phase;swap_a_work|;a_phase;swap_b_work')" -eq 0

# The older hook (the system calls' exits, where a kernel lacks the mmap_lock
# tracepoints) gives the same: the swap and the JIT.
"$BPROF_RECORD" -v -F 99 -o "$T_DIR/hook.bprof" -- "$W/dlswap" swap 0.3 >/dev/null 2>"$T_DIR/hook.err"
check "the mm lock hook is the default here" grep -q 'mapping generations: at the mm lock' "$T_DIR/hook.err"
# without bpf_loop (report_dlswap_lean: BPROF_KFEAT_OFF=loop), the lean
# hooks of kernels before 5.17: every check above went through the mm
# lock's, those below through the system calls' (5.10's)
lean=0
case ",${BPROF_KFEAT_OFF:-}," in *,loop,*) lean=1 ;; esac
if [ $lean = 1 ]; then
	check "without bpf_loop: the lean hook, each change read at the lock" \
		grep -q 'mapping generations: at the mm lock (mmap_lock_released), read there' "$T_DIR/hook.err"
fi
BPROF_GENS_HOOK=syscalls "$BPROF_RECORD" -v -F 99 -o "$T_DIR/hook2.bprof" -- "$W/dlswap" swap 0.3 \
	>/dev/null 2>"$T_DIR/hook2.err"
check "BPROF_GENS_HOOK=syscalls: every system call's exit (raw_syscalls)" \
	grep -q 'mapping generations: at every system call.s exit (raw_syscalls)' "$T_DIR/hook2.err"
[ $lean = 0 ] || check "without bpf_loop: the lean syscall hook, the mm read unlocked" \
	grep -q 'mapping generations: at every system call.s exit (raw_syscalls), the mm read unlocked' "$T_DIR/hook2.err"
export BPROF_GENS_HOOK=syscalls
for mode in swap jit; do
	record "sys-$mode" auto "$mode" 2
	a=$(samples "sys-$mode" ';swap_a_work(;| )')
	aa=$(samples "sys-$mode" ';a_phase;swap_a_work(;| )')
	o=$(samples "sys-$mode" ';(swap_b_work|jit_spin)(;| )')
	rm -f "$(awk '$1 == "perfmap" { print $2 }' "$T_DIR/sys-$mode.out")"
	echo "[syscalls $mode] swap_a_work=$a (under a_phase $aa) the other code's=$o"
	check "[syscalls $mode] swap_a_work at 50 % +- 10 %" half "$a" "$o"
	check "[syscalls $mode] nothing misnamed" \
		test "$(samples "sys-$mode" ';b_phase;swap_a_work|;a_phase;swap_b_work')" -eq 0 -a "$a" -eq "$aa"
done
unset BPROF_GENS_HOOK

# Mapping events lost (every third dropped as if the ring buffer were
# full): the generations still change, user space sees the gaps, and the
# frames a gap may concern are [unknown] and counted, never misnamed.
BPROF_TEST_DROP_MAP_EVENTS=3 record lost auto swap 2
"$BPROF_REPORT" --info "$T_DIR/lost.bprof" > "$T_DIR/lost.info" 2>&1
check "[lost] the dropped events are counted" grep -qE '^  notifications dropped: +[1-9]' "$T_DIR/lost.info"
check "[lost] --info counts the generations never seen" \
	grep -qE 'changed their executable mappings while recorded \([0-9]+ earlier mappings kept, [1-9][0-9]* generations never seen\)' "$T_DIR/lost.info"
check "[lost] --info counts unknowable frames" \
	grep -qE '^  frames of unknowable mapping: +[1-9]' "$T_DIR/lost.info"
check "[lost] some frames [unknown]" test "$(samples lost ';\\[unknown\\]')" -gt 0
check "[lost] nothing misnamed" \
	test "$(samples lost ';b_phase;swap_a_work|;a_phase;swap_b_work')" -eq 0
finish
