#!/usr/bin/env bash
# Complete stacks without frame pointers: the unwind workload (qsort through
# libc, 40-deep recursion, threads, a signal handler, PLT calls, a library
# opened late, a frameless leaf) built as distros build (-O2
# -fomit-frame-pointer) with gcc, clang and as a static PIE, plus a
# frame-pointer build.  Under the default mode (--unwind=auto, .eh_frame
# tables walked in BPF) >= 95 % of samples must reach the start frames
# (__libc_start_call_main, start_thread) and every mode's chain must be
# whole; under --unwind=fp the same binary must not (this is what the test
# exists to tell apart).
source "$BPROF_SRC/tests/e2e/lib.sh"
require_bpf

MODES="qsort recurse threads signal plt leaf dlopen"
# share NAME FOLDED: "complete total" over the user stacks of comm NAME
share() {
	awk -v c="$1;" 'index($0, c) == 1 { t += $NF }
		index($0, c) == 1 && /;(__libc_start_call_main|start_thread);/ { k += $NF }
		END { print k + 0, t + 0 }' "$2"
}
# has FOLDED REGEX: some stack matches
has() { grep -qE "$2" "$1"; }

for v in gcc clang static fp; do
	modes=$MODES
	[ "$v" = static ] && modes=${MODES% dlopen}
	# shellcheck disable=SC2086
	"$BPROF_RECORD" -q -F 499 -o "$T_DIR/$v.bprof" -- "$BPROF_WORKLOADS/uw-$v" 0.5 $modes
	"$BPROF_REPORT" -q -f -U "$T_DIR/$v.bprof" > "$T_DIR/$v.folded"
	read -r k t < <(share "uw-$v" "$T_DIR/$v.folded")
	echo "uw-$v: $k of $t samples reach the start frames"
	check "uw-$v: enough samples ($t)" test "$t" -ge 500
	check "uw-$v: >= 95% of stacks complete ($k/$t)" test $((k * 100)) -ge $((t * 95))
	f=$T_DIR/$v.folded
	start="^uw-$v;_start;[^ ]*__libc_start_call_main;main;"
	check "uw-$v qsort: cmp_u64 under libc's sort" has "$f" "${start}mode_qsort;[^ ]*qsort[^ ]*;cmp_u64 "
	check "uw-$v recurse: all 40 frames" has "$f" "${start}mode_recurse;(recurse;){40}recurse_leaf[; ]"
	check "uw-$v threads: from clone3" has "$f" "^uw-$v;clone3;start_thread;thread_main;thread_spin[; ]"
	check "uw-$v signal: handler above __restore_rt above the interrupted loop" \
		has "$f" "${start}mode_signal;signal_wait;([^ ;]+;)*__restore_rt;(on_alarm;)?handler_spin[; ]"
	check "uw-$v plt: libc through the PLT" has "$f" "${start}(mode_plt;)?plt_loop;[^ ]*(strtoul|snprintf)"
	check "uw-$v leaf: the frameless leaf's caller" has "$f" "${start}(mode_leaf;)?leaf_caller;leaf_fn "
	if [ "$v" != static ]; then
		check "uw-$v dlopen: the late library" has "$f" "${start}mode_dlopen;uw_dl_work;uw_dl_leaf "
	fi
	# a marker only where the leaf's caller came from a frame pointer: in
	# the first samples, before the process's tables arrived
	marked=$(awk '/\[missing caller\]/ { s += $NF } END { print s + 0 }' "$f")
	check "uw-$v: skipped-caller markers only before the tables (<= 2%: $marked)" \
		test $((marked * 50)) -le "$t"
	# the recorder's own count (UNWIND section) agrees
	"$BPROF_DUMP" "$T_DIR/$v.bprof" > "$T_DIR/$v.dump"
	walked=$(awk '$1 == "unwind_counter" && $2 == "samples" {print $3}' "$T_DIR/$v.dump")
	complete=$(awk '$1 == "unwind_counter" && $2 == "samples_complete" {print $3}' "$T_DIR/$v.dump")
	check "uw-$v: the recorder counts >= 95% complete walks ($complete/$walked)" \
		test $((${complete:-0} * 100)) -ge $((${walked:-1} * 95))
done

# The same program under --unwind=fp: the kernel's frame-pointer walk is
# lost in code without frame pointers.
"$BPROF_RECORD" -q -F 499 --unwind=fp -o "$T_DIR/fp-mode.bprof" -- "$BPROF_WORKLOADS/uw-gcc" 0.5 $MODES
"$BPROF_REPORT" -q -f -U "$T_DIR/fp-mode.bprof" > "$T_DIR/fp-mode.folded"
read -r k t < <(share uw-gcc "$T_DIR/fp-mode.folded")
echo "uw-gcc under --unwind=fp: $k of $t samples reach the start frames"
check "--unwind=fp on -fomit-frame-pointer code: < 20% complete ($k/$t)" test $((k * 5)) -lt "$t"
# ... and lost is all it may be, never made up: a frame-pointer walk
# through a function that uses rbp as a general register reads whatever rbp
# points at as callers.  prof-report checks each step against the object's
# CFI: it ends the stack there, or marks a skipped caller.  The ground truth
# is the .eh_frame walk of the same program (gcc.folded): each claim the fp
# stacks make - "a calls b" for adjacent frames, "a is an ancestor of b"
# across a "[missing caller]" - is checked against it where the truth has
# both frames (a frame sampled too rarely to be there cannot be judged);
# an "[unknown]" frame (an address in no mapping: never a return address)
# is made up unless the truth has one too.  Before the check ~60% of
# these samples failed ("[unknown]" and "__GI___clock_gettime" as callers
# of strtoul and of the workload's loops); a handful may fail by chance.
python3 - "$T_DIR/gcc.folded" "$T_DIR/fp-mode.folded" > "$T_DIR/made-up" <<'PY'
import sys
MISSING = "[missing caller]"
def stacks(path):
    for line in open(path):
        stack, _, n = line.rstrip("\n").rpartition(" ")
        f = stack.split(";")
        if f[0] == "uw-gcc" and n.isdigit():
            yield f[1:], int(n)
known, edges, anc = set(), set(), set()
for f, _ in stacks(sys.argv[1]):
    f = [x for x in f if x != MISSING]
    known.update(f)
    for i in range(len(f)):
        if i + 1 < len(f):
            edges.add((f[i], f[i + 1]))
        for j in range(i + 1, len(f)):
            anc.add((f[i], f[j]))
bad = tot = 0
for f, n in stacks(sys.argv[2]):
    tot += n
    why = [x for x in f if x == "[unknown]" and x not in known]
    real = [(i, x) for i, x in enumerate(f) if x != MISSING]
    for (i, a), (j, b) in zip(real, real[1:]):
        if a not in known or b not in known:
            continue
        if (j == i + 1 and (a, b) not in edges) or (j > i + 1 and (a, b) not in anc):
            why.append(a + (" > " if j == i + 1 else " >...> ") + b)
    if why:
        bad += n
        print("made up:", ";".join(f), n, "-", ", ".join(why), file=sys.stderr)
print(bad, tot)
PY
read -r bad tot < "$T_DIR/made-up"
echo "--unwind=fp: $bad of $tot samples claim callers the unwinder contradicts"
check "--unwind=fp: no made-up callers (<= 1%: $bad/$tot)" test $((bad * 100)) -le "$tot"
# report_unwind_tailwalk: the walk above was the tail-call one
if [ "${BPROF_TAILWALK:-}" = 1 ]; then
	"$BPROF_RECORD" -v -F 99 -o "$T_DIR/tw.bprof" -- "$BPROF_WORKLOADS/uw-gcc" 0.2 recurse >/dev/null 2>"$T_DIR/tw.err"
	check "BPROF_TAILWALK=1: tailwalk.bpf.c's sampler walked" grep -q 'program do_perf_event_lean:' "$T_DIR/tw.err"
fi

finish
