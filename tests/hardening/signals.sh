#!/bin/bash
# SIGINT and SIGTERM at random moments: before the BPF programs are loaded,
# while recording, while reading the tables and writing the file; single and
# doubled.  After each: exit 0 with a complete file, or non-zero with no
# file under the final name; never a temporary file; an earlier file in the
# directory untouched; and a run aimed at an existing file refuses to
# clobber it (no --force) whatever the signal does.  Last, a second signal
# after the file is written (while waiting for a command) must not abort.
. "$(dirname "$0")/common.sh"

seed=${SEED:-$$}
RANDOM=$seed
echo "seed $seed (SEED=$seed reproduces the delays)"
# many distinct stacks, so that reading and writing the tables takes a while
# the whole kallsyms too (when the recorder offers it): a longer write
FULL=""
if "$REC" --help | grep -q -- --full-kallsyms; then FULL=--full-kallsyms; fi
bg "$W/demo" 60
bg "$W/syscalls" 60

runs=10
for i in $(seq 1 $runs); do
	d=$T_DIR/run$i
	mkdir "$d"
	plant_earlier "$d"
	name=new.bprof
	clobber=0
	if [ $((i % 4)) -eq 0 ]; then
		name=earlier.bprof # aimed at the existing file, no --force
		clobber=1
	fi
	sig=INT
	[ $((i % 2)) -eq 0 ] && sig=TERM
	double=$((RANDOM % 3 == 0))
	# odd runs: from launch, 0-1.5 s (startup, BPF loading, recording);
	# even runs: after the start line, 1.0-1.6 s (end of the 1 s recording:
	# reading the tables, kallsyms, compressing and writing the file)
	if [ $((i % 2)) -eq 1 ]; then
		delay=$(awk -v r=$RANDOM 'BEGIN { printf "%.3f", r / 32767 * 1.5 }')
		when="${delay}s after launch"
	else
		delay=$(awk -v r=$RANDOM 'BEGIN { printf "%.3f", 1.0 + r / 32767 * 0.6 }')
		when="${delay}s after the start line"
	fi
	what="run $i: SIG$sig $when"
	if [ "$double" = 1 ]; then what="$what, then SIGTERM"; fi
	if [ "$clobber" = 1 ]; then what="$what, -o an existing file"; fi

	# (a background job of a script starts with SIGINT ignored: undo that,
	# as a terminal's Ctrl-C would find the default action)
	env --default-signal=INT,TERM "$REC" -F 499 $FULL --hash-storage-size 200000 --stack-storage-size 65536 \
		-o "$d/$name" 1 >"$d.out" 2>"$d.err" &
	rp=$!
	if [ $((i % 2)) -eq 0 ]; then
		for _ in $(seq 250); do
			grep -q '^Sampling' "$d.out" "$d.err" 2>/dev/null && break
			kill -0 $rp 2>/dev/null || break
			sleep 0.02
		done
	fi
	sleep "$delay"
	kill -"$sig" $rp 2>/dev/null || true
	if [ "$double" = 1 ]; then
		sleep 0.05
		kill -TERM $rp 2>/dev/null || true
	fi
	rc=0
	wait $rp || rc=$?
	echo "$what: exit $rc; $(cat "$d.out" "$d.err" | head -c 400 | tr '\n' ' ')"
	check "$what: exit below 128 or by the signal (got $rc)" \
		test "$rc" -lt 128 -o "$rc" -eq 130 -o "$rc" -eq 143
	if [ "$clobber" = 1 ]; then
		check "$what: refused (non-zero exit)" test "$rc" -ne 0
		check "$what: existing file untouched" \
			sh -c "sha256sum <'$d/earlier.bprof' | cmp -s - '$T_DIR/.earlier.$(echo "$d" | md5sum | cut -c1-8)'"
		other=$(cd "$d" && ls -A | grep -v -x earlier.bprof || true)
		check "$what: nothing else left in the directory [${other//$'\n'/ }]" test -z "$other"
		continue
	fi
	aftermath "$what" "$d" "$name"
	if [ "$HAVE_FILE" = 1 ]; then
		check "$what: a file means exit 0" test "$rc" -eq 0
	else
		check "$what: no file means a non-zero exit" test "$rc" -ne 0
	fi
done

# A second signal after the file is written, while the recorder waits for
# a command that ignored the first (up to 1 s): the file is there, so no
# "aborted, no file written" (a CI run once hit that race in the few
# milliseconds of cleanup); the wait is cut short, and the exit is 130 as
# for any command that outlived the recording.  stderr comes through a
# fifo so that the signal follows the "wrote" line at once.
d=$T_DIR/late
mkdir "$d"
plant_earlier "$d"
mkfifo "$d.fifo"
what="late: SIGINT, then SIGTERM once the file is written"
env --default-signal=INT,TERM "$REC" -F 499 -o "$d/new.bprof" -- \
	sh -c 'echo $$ >"$0"; trap "" INT TERM; exec 2>/dev/null; exec sleep 5' "$d.cmdpid" \
	>"$d.out" 2>"$d.fifo" &
rp=$!
sent=0
t0=0
while IFS= read -r line; do
	printf '%s\n' "$line" >>"$d.err"
	case $line in
	Sampling*) sleep 0.3; kill -INT $rp 2>/dev/null || true ;;
	*wrote*)
		sleep 0.1
		t0=$(date +%s%N)
		kill -TERM $rp 2>/dev/null || true
		sent=1 ;;
	esac
done <"$d.fifo"
rc=0
wait $rp || rc=$?
t1=$(date +%s%N)
# the command ignored SIGTERM and outlives the recorder (it is not killed)
kill -9 "$(cat "$d.cmdpid")" 2>/dev/null || true
echo "$what: exit $rc after $(((t1 - t0) / 1000000)) ms; $(head -c 400 "$d.err" | tr '\n' ' ')"
check "$what: the signal was sent after the file" test "$sent" = 1
check "$what: exit 130, the command outlived the recording (got $rc)" test "$rc" -eq 130
check "$what: no claim that nothing was written" sh -c "! grep -q 'no file written' '$d.err'"
check "$what: the wait for the command cut short (< 800 ms)" test $(((t1 - t0) / 1000000)) -lt 800
aftermath "$what" "$d" new.bprof
check "$what: the file is there" test "$HAVE_FILE" = 1
finish
