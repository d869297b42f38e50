#!/bin/bash
# A pid reused within one recording: dlswap (which changes its mappings
# every 100 ms, so its image has mapping generations) exits, and dlopener
# is started with the same pid (ns_last_pid; retried while other processes
# of the machine take the pid first).  Each process's samples must be named
# for its own code: dlswap's swap_a_work / swap_b_work, dlopener's
# main_work / dl_work, and neither's functions in the other's rows.
. "$(dirname "$0")/common.sh"
[ -w /proc/sys/kernel/ns_last_pid ] || skip "cannot write /proc/sys/kernel/ns_last_pid"

out=$T_DIR/reuse.bprof
cat > "$T_DIR/run.sh" <<EOF
"$W/dlswap" swap 1.5 > /dev/null &
p=\$!
wait \$p
echo \$p > "$T_DIR/pid1"
for i in \$(seq 200); do
	echo \$((p - 1)) > /proc/sys/kernel/ns_last_pid
	"$W/dlopener" 2 &
	q=\$!
	if [ "\$q" = "\$p" ]; then
		wait \$q
		echo \$q > "$T_DIR/pid2"
		exit 0
	fi
	kill \$q 2> /dev/null
	wait \$q 2> /dev/null
done
EOF
"$BPROF_RECORD" -q -F 499 -o "$out" -- sh "$T_DIR/run.sh"
[ -s "$T_DIR/pid2" ] || skip "the pid could not be reused (the machine forks too much)"
check "the same pid ran both" test "$(cat "$T_DIR/pid1")" = "$(cat "$T_DIR/pid2")"
"$BPROF_REPORT" -q -f "$out" > "$T_DIR/folded"
rows() { awk -v c="$1" -v re="$2" 'index($0, c ";") == 1 && $0 ~ re { s += $NF } END { print s + 0 }' "$T_DIR/folded"; }
a=$(rows dlswap ';swap_a_work(;| )')
b=$(rows dlswap ';swap_b_work(;| )')
mw=$(rows dlopener ';main_work(;| )')
dw=$(rows dlopener ';dl_work(;| )')
echo "dlswap: swap_a_work=$a swap_b_work=$b; dlopener: main_work=$mw dl_work=$dw"
check "dlswap's functions named" test "$a" -gt 100 -a "$b" -gt 100
check "dlopener's functions named" test "$mw" -gt 100 -a "$dw" -gt 100
check "no dlswap function in dlopener's rows" test "$(rows dlopener 'swap_._work|[ab]_phase')" -eq 0
check "no dlopener function in dlswap's rows" test "$(rows dlswap 'main_work|dl_work')" -eq 0
check "dlswap: nothing misnamed" test "$(rows dlswap ';b_phase;swap_a_work|;a_phase;swap_b_work')" -eq 0
finish
