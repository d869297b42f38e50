#!/bin/bash
# Kernel-side filters and what the meta says about them: --cgroup (v2),
# -L (per-thread keys), -C (one CPU), -I (idle included).
. "$(dirname "$0")/common.sh"

bg "$W/ratio" 600 1 # killed at exit; outlives every recording below on a loaded host
p1=$BG
bg "$W/ratio" 600 1 # killed at exit; outlives every recording below on a loaded host
p2=$BG
sleep 0.2

cg2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
if [ -n "$cg2" ] && mkdir "$cg2/bprof-e2e-$$" 2>/dev/null; then
	echo "$p1" >"$cg2/bprof-e2e-$$/cgroup.procs"
	"$BPROF_RECORD" -q --cgroup "$cg2/bprof-e2e-$$" -o "$T_DIR/cg.bprof" 1
	echo "$p1" >"$cg2/cgroup.procs"
	rmdir "$cg2/bprof-e2e-$$"
	dump "$T_DIR/cg.bprof"
	check "--cgroup: only the process in the cgroup" test "$(dumpq "$T_DIR/cg.bprof.txt" pids '*')" = "$p1"
else
	echo "no writable cgroup v2 hierarchy: --cgroup not checked"
fi
rc=0; "$BPROF_RECORD" -q --cgroup /nonexistent -o "$T_DIR/x.bprof" 1 2>/dev/null || rc=$?
check "--cgroup with a bad path fails" test "$rc" -ne 0

tid=$(ls "/proc/$p2/task" | head -n1)
"$BPROF_RECORD" -q -L "$tid" -o "$T_DIR/l.bprof" 1
dump "$T_DIR/l.bprof"
check "-L: only that thread, with its tid in the key" \
	test "$(awk '$1 == "count" { print $2 "/" $3 }' "$T_DIR/l.bprof.txt" | sort -u)" = "$p2/$tid"
check "-L: per-thread flag in meta" grep -q '^meta .*flags=0xb$' "$T_DIR/l.bprof.txt"

"$BPROF_RECORD" -q -C 0 -o "$T_DIR/c.bprof" 1
dump "$T_DIR/c.bprof"
check "-C 0: one CPU sampled" grep -q '^meta .* ncpus=1 ' "$T_DIR/c.bprof.txt"

"$BPROF_RECORD" -q -I -c 10000000 -o "$T_DIR/i.bprof" 1
dump "$T_DIR/i.bprof"
check "-I: include-idle flag in meta" grep -q '^meta .*flags=0x7$' "$T_DIR/i.bprof.txt"
check "-c: period recorded, no frequency" grep -q '^meta .* freq=0 period=10000000 ' "$T_DIR/i.bprof.txt"
check "-I -c: samples recorded" test "$(dumpq "$T_DIR/i.bprof.txt" samples '*')" -gt 0

# -e cycles: the hardware event where there is a PMU, else cpu-clock with a
# message (this VM has none).  Its own busy workload: the first two may be
# over by now (each recording above costs its start-up and dump too, more
# on a loaded machine), and an idle host gives no sample in a second.
bg "$W/ratio" 3 1
sleep 0.2
"$BPROF_RECORD" -q -e cycles -o "$T_DIR/cy.bprof" 1 2>"$T_DIR/err"
dump "$T_DIR/cy.bprof"
if grep -q '^meta .* event=cycles ' "$T_DIR/cy.bprof.txt"; then
	check "-e cycles: recorded on cycles" true
else
	check "-e cycles without a PMU: falls back to cpu-clock and says so" \
		bash -c "grep -q '^meta .* event=cpu-clock ' '$T_DIR/cy.bprof.txt' && grep -q 'sampling on cpu-clock instead' '$T_DIR/err'"
fi
check "-e cycles: samples recorded" test "$(dumpq "$T_DIR/cy.bprof.txt" samples '*')" -gt 0
finish
