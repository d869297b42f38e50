#!/usr/bin/env bash
# Off-CPU time (prof-record --off-cpu, --wall; issue 28).  The offcpu
# workload (-O2 -fomit-frame-pointer) has a thread, "sleeper", alternating
# two naps of known length: 30 ms in sleep_long, 10 ms in sleep_short, so
# 75 % / 25 % of its blocked time; its main thread waits in pthread_join.
# - The sampling rule is unbiased: the report's split is 75/25 within a few
#   points, also at -F 49, whose period (20.4 ms) is longer than the short
#   nap (only the carried remainder can give it samples) and does not
#   divide the long one.
# - The off-CPU samples add up to the blocked time x F.
# - Every blocked stack is complete: through libc's clock_nanosleep (no
#   frame pointer) to start_thread, main's through pthread_join to
#   __libc_start_call_main.
# - Off-CPU lines end in "[off-cpu:S]"; --on-cpu and --off-cpu select.
# - --wall: a thread's on- and off-CPU samples add up to its wall time.
# - BPROF_OFFCPU_LEAN=1 (report_offcpu_lean): all of the above with the
#   programs of kernels that lack task storage, bpf_task_pt_regs, bpf_loop
#   or growing hash maps (bpf/offcpu/offcpu_lean.bpf.c), which say so.
source "$BPROF_SRC/tests/e2e/lib.sh"
require_bpf

if [ "${BPROF_OFFCPU_LEAN:-}" = 1 ]; then
	"$BPROF_RECORD" -F 99 --off-cpu -o "$T_DIR/lean.bprof" -- "$BPROF_WORKLOADS/offcpu" 1 2> "$T_DIR/lean.err"
	check "BPROF_OFFCPU_LEAN=1: the recorder says which programs record and what they miss" \
		grep -qF 'BPROF_OFFCPU_LEAN=1: --off-cpu records with the programs for older kernels: off-CPU user stacks stop at 136 frames and hold no Python frames' "$T_DIR/lean.err"
fi

SECS=4
# sum FOLDED REGEX: the samples of the lines that match
between() { [ "$1" -ge "$2" ] && [ "$1" -le "$3" ]; }
sum() { awk -v re="$2" '$0 ~ re { s += $NF } END { print s + 0 }' "$1"; }
# truth FILE: sleep_long's true share (%) of the naps, from the wall time
# the sleeper measured in each (OFFCPU_TIMES): 75 on an idle machine; on a
# busy one each nap waits for a CPU after it ends, the short one relatively
# longer, and the samples must follow the time, not the 30:10 asked for
truth() { awk '{ printf "%.1f\n", 100 * $2 / ($2 + $4) }' "$1"; }
# share_near LONG SHORT TRUE [POINTS]: LONG's share within POINTS (6) of TRUE
share_near() {
	python3 -c "
import sys; s = 100 * $1 / ($1 + $2); print('share %.1f %% (true %s %%)' % (s, $3))
sys.exit(0 if abs(s - $3) <= ${4:-6} else 1)"
}

for hz in 99 49; do
	f=$T_DIR/off$hz
	# -F 49: ~2 samples a round, the split's spread is larger: twice as
	# long (its standard deviation ~1.8 points then, against +- 6)
	secs=$SECS
	[ $hz = 49 ] && secs=$((2 * SECS))
	OFFCPU_TIMES=$f.times "$BPROF_RECORD" -q -F $hz --off-cpu -o "$f.bprof" -- "$BPROF_WORKLOADS/offcpu" $secs 2> "$f.err"
	cat "$f.err" >&2
	"$BPROF_REPORT" -q -f "$f.bprof" > "$f.folded"
	"$BPROF_REPORT" -q -f --off-cpu "$f.bprof" > "$f.off"
	"$BPROF_REPORT" -q -f --on-cpu "$f.bprof" > "$f.on"
	long=$(sum "$f.off" '^sleeper;.*;sleep_long;.*\[off-cpu:S\] [0-9]+$')
	short=$(sum "$f.off" '^sleeper;.*;sleep_short;.*\[off-cpu:S\] [0-9]+$')
	all=$(sum "$f.off" '^sleeper;')
	main=$(sum "$f.off" '^offcpu;')
	echo "-F $hz: sleep_long $long, sleep_short $short, sleeper off-CPU $all, main thread $main"
	check "-F $hz: both naps sampled" test "$long" -gt 0 -a "$short" -gt 0
	# -F 49: +- 8 (6 points off was seen once at load ~20, 79.1 % for a
	# true 73.1 %; a biased rule, such as dropping the short nap's
	# remainders, is 25 points off)
	t=$(truth "$f.times") pts=6
	[ $hz = 49 ] && pts=8
	check "-F $hz: sleep_long's share its share of the naps' time ($t %) +- $pts" share_near "$long" "$short" "$t" "$pts"
	# the sleeper blocks ~99 % of its SECS s (its naps' lengths: the
	# loop's own work is microseconds)
	check "-F $hz: sleeper's off-CPU samples = its blocked time x F +- 10 %" \
		between "$all" $((secs * hz * 90 / 100)) $((secs * hz * 110 / 100))
	check "-F $hz: main thread blocked all along (pthread_join)" \
		between "$main" $((secs * hz * 90 / 100)) $((secs * hz * 110 / 100))
	complete=$(sum "$f.off" '^sleeper;clone3;start_thread;sleeper;sleep_(long|short);nap;__GI___clock_nanosleep;.*\[off-cpu:S\] [0-9]+$')
	check "-F $hz: every nap's stack reaches start_thread through clock_nanosleep ($complete of $((long + short)))" \
		test "$complete" -eq $((long + short))
	# main's one long block is pthread_join's, and every sample of it has
	# its whole stack.  Its other blocks (page faults, the thread's
	# creation; more and longer on a busy machine) are short but, by the
	# carried remainder, each has its chance of a sample (one in 394 was
	# seen): they may be elsewhere, at most a few
	# A block whose end no program run saw (the switch program's run for
	# it skipped, or missing: issue 50, once in ~60 lean recordings, the
	# whole pthread_join) is counted to the time the scheduler says the
	# thread arrived, without stacks, and the recorder warns of it: its
	# samples are main's, under no stack, never lost and never merged
	# into another's
	unseen=$(sum "$f.off" '^offcpu;\[Missed User Stack\];\[Missed Kernel Stack\];\[off-cpu:S\] [0-9]+$')
	if [ "$unseen" -gt 0 ]; then
		echo "  main's block ended unseen: $unseen samples without stacks"
		check "-F $hz: a block counted without stacks is one the recorder warned of" \
			grep -q 'off-CPU blocks ended unseen' "$f.err"
		main=$((main - unseen))
	fi
	joined=$(sum "$f.off" '^offcpu;.*pthread.*join')
	mcomplete=$(sum "$f.off" '^offcpu;_start;__libc_start_main_impl;__libc_start_call_main;main;.*pthread.*join.*\[off-cpu:S\] [0-9]+$')
	grep '^offcpu;' "$f.off" | grep -v 'pthread.*join' | sed 's/^/  main blocked elsewhere: /' || true
	check "-F $hz: main's blocked stack reaches __libc_start_call_main through pthread_join ($mcomplete of $joined)" \
		test "$mcomplete" -eq "$joined"
	check "-F $hz: main's samples are its pthread_join's but for a few ($joined of $main)" \
		test $((main - joined)) -le 3
	check "-F $hz: kernel frames of the nap (clock_nanosleep in the kernel)" \
		grep -qE ';__x64_sys_clock_nanosleep;.*\[off-cpu:S\] [0-9]+$' "$f.folded"
	check "-F $hz: --off-cpu lines all end in [off-cpu:...]" \
		awk '$(NF-1) !~ /\[off-cpu:[SDRT]\]$/ { exit 1 }' "$f.off"
	check "-F $hz: --on-cpu lines have no [off-cpu:...]" bash -c "! grep -q 'off-cpu' '$f.on'"
	check "-F $hz: on + off = all" test \
		"$(sum "$f.folded" .)" -eq $(($(sum "$f.off" .) + $(sum "$f.on" .)))
done

# -U: the off-CPU frame stays the leaf
"$BPROF_REPORT" -q -f -U --off-cpu "$T_DIR/off99.bprof" > "$T_DIR/u.off"
check "-U: off-CPU lines end in [off-cpu:S] after the libc wrapper" \
	grep -qE ';nap;__GI___clock_nanosleep;\[off-cpu:S\] [0-9]+$' "$T_DIR/u.off"

# --wall: every thread's samples add up to its wall time (main blocks, the
# sleeper naps and runs a little; both exist SECS s)
"$BPROF_RECORD" -q -F 99 --wall -o "$T_DIR/wall.bprof" -- "$BPROF_WORKLOADS/offcpu" $SECS
"$BPROF_REPORT" -q -f "$T_DIR/wall.bprof" > "$T_DIR/wall.folded"
w=$(sum "$T_DIR/wall.folded" '^sleeper;')
m=$(sum "$T_DIR/wall.folded" '^offcpu;')
echo "--wall: sleeper $w, main $m (each ~$((SECS * 99)))"
check "--wall: sleeper's samples = its wall time x F +- 10 %" between "$w" $((SECS * 99 * 90 / 100)) $((SECS * 99 * 110 / 100))
check "--wall: main's samples = its wall time x F +- 10 %" between "$m" $((SECS * 99 * 90 / 100)) $((SECS * 99 * 110 / 100))

# the other outputs: the SVG draws off-CPU frames cold (data-kind "o"),
# on-CPU ones warm; pprof has an off-cpu/nanoseconds sample type and a
# state label; speedscope names the [off-cpu:S] frame
"$BPROF_REPORT" -q --svg "$T_DIR/wall.svg" "$T_DIR/wall.bprof"
check "svg: off-CPU frames drawn cold" grep -q 'data-kind="o" data-name="\[off-cpu:S\]' "$T_DIR/wall.svg"
check "svg: sleep_long (off-CPU most of its time) drawn cold" grep -q 'data-kind="o" data-name="sleep_long' "$T_DIR/wall.svg"
"$BPROF_REPORT" -q --pprof "$T_DIR/wall.pb.gz" "$T_DIR/wall.bprof"
check "pprof: an off-cpu sample type and a state label" python3 -c "
import gzip, sys; d = gzip.open('$T_DIR/wall.pb.gz').read()
sys.exit(0 if b'off-cpu' in d and b'nanoseconds' in d and b'state' in d and b'[off-cpu:S]' in d else 1)"
"$BPROF_REPORT" -q --speedscope "$T_DIR/wall.json" "$T_DIR/wall.bprof"
check "speedscope: the [off-cpu:S] frame" grep -q '"\[off-cpu:S\]"' "$T_DIR/wall.json"

# --rotate: each file has its interval's blocks (counted when they end:
# main's one block of the whole run lands in the last file); over all
# files, the same totals and split
OFFCPU_TIMES=$T_DIR/rot.times "$BPROF_RECORD" -q -F 99 --off-cpu --rotate 1 -o "$T_DIR/rot" -- "$BPROF_WORKLOADS/offcpu" $SECS
nfiles=$(ls "$T_DIR"/rot/*.bprof | wc -l)
"$BPROF_REPORT" -q -f --off-cpu "$T_DIR"/rot/*.bprof > "$T_DIR/rot.off"
rl=$(sum "$T_DIR/rot.off" '^sleeper;.*;sleep_long;')
rs=$(sum "$T_DIR/rot.off" '^sleeper;.*;sleep_short;')
ra=$(sum "$T_DIR/rot.off" '^sleeper;')
echo "--rotate 1: $nfiles files, sleep_long $rl, sleep_short $rs, sleeper in all $ra"
check "--rotate: several files" test "$nfiles" -ge 3
check "--rotate: sleeper's off-CPU samples over all files = blocked time x F +- 10 %" \
	between "$ra" $((SECS * 99 * 90 / 100)) $((SECS * 99 * 110 / 100))
t=$(truth "$T_DIR/rot.times")
check "--rotate: sleep_long's share its share of the naps' time ($t %) +- 6" share_near "$rl" "$rs" "$t"
check "--rotate: every nap's stack complete in every file" test \
	"$(sum "$T_DIR/rot.off" '^sleeper;clone3;start_thread;sleeper;sleep_(long|short);nap;__GI___clock_nanosleep;.*\[off-cpu:S\] [0-9]+$')" -eq $((rl + rs))

# Fault cases.  10,000 short-lived threads (each blocks 1 ms twice, 50 at
# a time): no crash, and the samples agree with the blocked time the
# recorder measured (every thread starts at a random phase and takes its
# remainder with it when it exits: unbiased still, no time invented).
"$BPROF_RECORD" -v -F 99 --wall -o "$T_DIR/churn.bprof" -- "$BPROF_WORKLOADS/offcpu" 1 churn 10000 \
	2> "$T_DIR/churn.log"
check "10,000 threads: recorded" test -s "$T_DIR/churn.bprof"
grep 'off-CPU:' "$T_DIR/churn.log" || true
check "10,000 threads: no thread state nor waiting block left at the end (the maps are empty)" \
	grep -qE 'off-CPU: [0-9]+ thread states at the end, [0-9]+ user stacks of blocked threads walked, 0 left' "$T_DIR/churn.log"
"$BPROF_REPORT" -q --info "$T_DIR/churn.bprof" > "$T_DIR/churn.info"
"$BPROF_REPORT" -q -f --off-cpu "$T_DIR/churn.bprof" > "$T_DIR/churn.off"
cs=$(sum "$T_DIR/churn.off" .)
cns=$(awk '/^  blocks ended:/ { gsub(/[(]/, "", $4); print $4 }' "$T_DIR/churn.info")
echo "10,000 threads: $cs off-CPU samples for $cns s blocked"
check "10,000 threads: off-CPU samples = blocked time x F +- 10 %" python3 -c "
import sys; exp = $cns * 99; print('expected %.0f' % exp); sys.exit(0 if abs($cs - exp) <= 0.1 * exp else 1)"
# a process that execs while a thread sleeps (the sleeper dies blocked:
# its last block is not counted), then sleeps 0.2 s as /bin/sleep
OFFCPU_TIMES=$T_DIR/exec.times "$BPROF_RECORD" -q -F 99 --off-cpu -o "$T_DIR/exec.bprof" -- "$BPROF_WORKLOADS/offcpu" 0.5 exec
"$BPROF_REPORT" -q -f --off-cpu "$T_DIR/exec.bprof" > "$T_DIR/exec.off"
es=$(sum "$T_DIR/exec.off" '^sleeper;')
# (0.5 s on an idle host; the time it really lived, which a busy one
# stretches: 52 samples for 0.5 s were seen)
lived=$(awk '$1 == "exec" { print $2 }' "$T_DIR/exec.times")
check "exec while a thread sleeps: its blocks before the exec, no more ($es <= $lived s x 99 + 2)" \
	between "$es" 30 "$(awk -v s="$lived" 'BEGIN { print int(s * 99) + 2 }')"
check "exec while a thread sleeps: the new image's sleep counted" \
	between "$(sum "$T_DIR/exec.off" '^sleep;')" 14 26

# --unwind=fp: recorded (stacks by frame pointer, so likely cut at the
# libc wrapper: that is what --unwind=auto is for)
"$BPROF_RECORD" -q -F 99 --off-cpu --unwind=fp -o "$T_DIR/fp.bprof" -- "$BPROF_WORKLOADS/offcpu" 1
"$BPROF_REPORT" -q -f --off-cpu "$T_DIR/fp.bprof" > "$T_DIR/fp.off"
check "--unwind=fp: off-CPU samples recorded" test "$(sum "$T_DIR/fp.off" '^sleeper;')" -gt 50

# a recording without --off-cpu has no off-CPU line and stays a 1.4 file
# (without time slices: with them, the default, it is 1.6; SPEC.md 6.14)
"$BPROF_RECORD" -q -F 99 --slice=0 -o "$T_DIR/on.bprof" -- "$BPROF_WORKLOADS/offcpu" 1
"$BPROF_REPORT" -q -f "$T_DIR/on.bprof" > "$T_DIR/on.folded"
check "without --off-cpu: no off-CPU line" bash -c "! grep -q 'off-cpu' '$T_DIR/on.folded'"
check "without --off-cpu or slices: format 1.4 header" \
	test "$(od -An -tu2 -j10 -N2 "$T_DIR/on.bprof" | tr -d ' ')" = 4
"$BPROF_RECORD" -q -F 99 --slice=0 --off-cpu -o "$T_DIR/off-noslice.bprof" -- "$BPROF_WORKLOADS/offcpu" 1
check "with --off-cpu, without slices: format 1.5 header" \
	test "$(od -An -tu2 -j10 -N2 "$T_DIR/off-noslice.bprof" | tr -d ' ')" = 5
check "with --off-cpu and slices (the default): format 1.6 header" \
	test "$(od -An -tu2 -j10 -N2 "$T_DIR/off99.bprof" | tr -d ' ')" = 6
"$BPROF_DUMP" "$T_DIR/off99.bprof" > "$T_DIR/off99.dump"
check "off-CPU rows have slices too, within the recording's span" python3 - "$T_DIR/off99.dump" "$SECS" <<'PY'
import sys
lines = open(sys.argv[1]).read().splitlines()
rows = [l for l in lines if l.startswith(("count ", "offcount "))]
sl = [int(l.split()[2]) for l in lines if l.startswith("countslice ")]
off = [s for l, s in zip(rows, sl) if l.startswith("offcount ")]
assert len(sl) == len(rows) and off, (len(sl), len(rows))
# 20 ms slices over SECS s (+1 s for start-up and the end pass)
assert max(off) <= (int(sys.argv[2]) + 1) * 50, max(off)
assert len(set(off)) > 5, sorted(set(off))[:10]
PY
finish
