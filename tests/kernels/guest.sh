#!/bin/bash
# Runs inside a tools/guest-vm guest (tests/kernels/run.sh): the recordings of the
# kernel matrix, each as NAME.bprof with its stderr (NAME.err) and exit
# status (NAME.rc) under /out, checked on the host.  Arguments: the static
# prof-record, the workloads' folder and the source folder, staged at their
# host paths, then the scenarios to run (default: all).
REC=$1 W=$2 S=$3; shift 3
# (guest-vm leaves /tmp the root's own folder: what was staged there at its
# host path, a checkout under /tmp as a CI clone may be, stays visible)
# the BPF programs' run times, for -v's "N runs, X us each" (Linux 5.1)
echo 1 >/proc/sys/kernel/bpf_stats_enabled 2>/dev/null
# Debian 12's perf with the libraries a minbase root lacks (run.sh)
PERF=/opt/bprof-perf/perf
[ -x "$PERF" ] && export LD_LIBRARY_PATH=/opt/bprof-perf/lib
PY=$(ls -d /root/.pyenv/versions/3.1[2-9]*/bin/python3 2>/dev/null | head -n1)
cd /tmp || exit 1
echo "guest: $(uname -r), scenarios: ${*:-all}"
echo "guest build: $(uname -v)"

# A recording still running after 300 s: what it and its command wait on,
# into /out/NAME.hang and the console (the host prints the console of a
# guest that does not finish), then SIGKILL.  timeout(1)'s SIGTERM was not
# enough: prof-record finishes its file on it, and a finish stuck in the
# kernel hung a whole guest once with nothing on its console.  /proc only:
# the guest's minbase root has no procps.
dump_task() { # PID: its state, where it waits, its threads' kernel stacks
	local p=$1 task
	echo "== $p: $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | cut -c1-100)"
	for task in /proc/$p/task/*; do
		echo "-- thread ${task##*/}: state $(cut -d' ' -f3 "$task/stat" 2>/dev/null), wchan $(cat "$task/wchan" 2>/dev/null)"
		cat "$task/stack" 2>/dev/null
	done
}
watch_rec() { # NAME PID
	local name=$1 pid=$2 t=0 p
	while kill -0 "$pid" 2>/dev/null; do
		sleep 0.2
		t=$((t + 1))
		[ $t -ge 1500 ] || continue
		{
			echo "still running after 300 s"
			dump_task "$pid"
			for p in /proc/[0-9]*; do # its command and that one's children
				p=${p#/proc/}
				[ "$(cut -d' ' -f4 "/proc/$p/stat" 2>/dev/null)" = "$pid" ] && dump_task "$p"
			done
			echo "== dmesg:"
			dmesg 2>/dev/null | tail -n 40
		} >"/out/$name.hang" 2>&1
		sed "s/^/guest: $name hang: /" "/out/$name.hang"
		for p in /proc/[0-9]*; do
			p=${p#/proc/}
			[ "$(cut -d' ' -f4 "/proc/$p/stat" 2>/dev/null)" = "$pid" ] && kill -KILL "$p" 2>/dev/null
		done
		kill -KILL "$pid" 2>/dev/null
		return
	done
}

# rec NAME ARGS...: prof-record ARGS, its file, stderr and status
rec() {
	local name=$1 pid rc; shift
	"$REC" -v "$@" >"/out/$name.out" 2>"/out/$name.err" &
	pid=$!
	watch_rec "$name" "$pid"
	wait "$pid"
	rc=$?
	echo $rc >"/out/$name.rc"
	# -v's libbpf log is long: keep prof-record's own lines and the
	# verifier's last words
	grep -v '^libbpf: \(elf\|sec\|prog .*: relo\|prog .*: found\|map .*: \(found\|at sec\|created\|setting\)\|CO-RE\|gen: \|loading\|collected\|looking\|license\)' \
		"/out/$name.err" | tail -n 400 >"/out/$name.err.short"
	mv "/out/$name.err.short" "/out/$name.err"
	echo "guest: $name exited $(cat "/out/$name.rc") at $(date +%T)"
}

want() { [ $# -eq 0 ] || [[ " $* " == *" $SCEN "* ]]; }
all=("$@")
for SCEN in load perf plain fp wall offcpu dlswap python pylazy rotate rotatewall nobody; do
	want "${all[@]}" || continue
	case $SCEN in
	load) # the fixed cost: five recordings of true, CPU time by bash's times
		for i in 1 2 3 4 5; do
			( "$REC" -v -F 99 -o "/tmp/true$i.bprof" -- true >/dev/null 2>"/out/load$i.err"; times ) \
				2>/dev/null | tail -n1 >"/out/load$i.times"
		done ;;
	perf) # the reference: perf record -g (frame pointers), its fixed cost
		# and the same recording as plain's
		if ! "$PERF" --version >/out/perf.err 2>&1; then
			echo 127 >/out/perf.rc
			continue
		fi
		for i in 1 2 3 4 5; do
			( "$PERF" record -q -e cpu-clock -g -F 99 -o "/tmp/ptrue$i.data" -- true >/dev/null 2>>/out/perf.err; times ) \
				2>/dev/null | tail -n1 >"/out/perfload$i.times"
		done
		timeout 300 "$PERF" record -q -e cpu-clock -g -F 199 -o /tmp/perf.data -- "$W/uw-gcc" 3 qsort recurse \
			>/dev/null 2>>/out/perf.err
		echo $? >/out/perf.rc
		"$PERF" script -i /tmp/perf.data -F comm,ip,sym >/out/perf.script 2>>/out/perf.err
		echo "guest: perf exited $(cat /out/perf.rc) at $(date +%T)" ;;
	plain) rec plain -F 199 -o /out/plain.bprof -- "$W/uw-gcc" 3 qsort recurse ;;
	fp) rec fp --unwind=fp -F 199 -o /out/fp.bprof -- "$W/uw-fp" 2 recurse ;;
	wall) rec wall --wall -F 99 -o /out/wall.bprof -- "$W/offcpu" 3 ;;
	offcpu) rec offcpu --off-cpu -F 99 -o /out/offcpu.bprof -- "$W/offcpu" 3 ;;
	dlswap) rec dlswap -F 499 -o /out/dlswap.bprof -- "$W/dlswap" swap 3 ;;
	python)
		if [ -n "$PY" ]; then
			rec python -F 199 -o /out/python.bprof -- "$PY" "$S/tests/workloads/python/pywork.py" 3
		else
			echo "no python staged" >/out/python.err; echo 127 >/out/python.rc
		fi ;;
	pylazy) # a shell's command: the walks loaded when the interpreter is met
		if [ -n "$PY" ]; then
			rec pylazy -F 199 -o /out/pylazy.bprof -- sh -c 'exec "$0" "$1" 3' "$PY" \
				"$S/tests/workloads/python/pywork.py"
		else
			echo "no python staged" >/out/pylazy.err; echo 127 >/out/pylazy.rc
		fi ;;
	rotate)
		mkdir -p /out/rotate
		rec rotate -F 199 --rotate=1 -o /out/rotate -- "$W/uw-gcc" 3 qsort ;;
	rotatewall)
		mkdir -p /out/rotatewall
		rec rotatewall --wall -F 99 --rotate=1 -o /out/rotatewall -- "$W/offcpu" 3 ;;
	nobody) # CAP_BPF + CAP_PERFMON, no root (ambient capabilities): refused
		# at Debian's kernel.perf_event_paranoid=3 (with the reason), then
		# at 2; and with CAP_SYS_RESOURCE (before 5.11, BPF maps count
		# against the locked-memory limit)
		mkdir -p /tmp/nb && chmod 777 /tmp/nb
		for run in 3:bpf,perfmon 2:bpf,perfmon 2:bpf,perfmon,sys_resource; do
			level=${run%%:*} caps=+${run#*:}
			caps=${caps//,/,+}
			name=nobody$level
			[[ $caps != *sys_resource* ]] || name=nobody-res
			echo "$level" >/proc/sys/kernel/perf_event_paranoid
			timeout 300 setpriv --reuid=65534 --regid=65534 --clear-groups \
				--inh-caps="$caps" --ambient-caps="$caps" \
				"$REC" -v -F 199 -o "/tmp/nb/$name.bprof" -- "$W/uw-gcc" 2 qsort \
				>/dev/null 2>"/out/$name.err"
			echo $? >"/out/$name.rc"
			cp "/tmp/nb/$name.bprof" /out/ 2>/dev/null
		done ;;
	esac
done
echo "guest: done"
