#!/bin/bash
# The BPF object loads by a loader program (CO-RE applied by the kernel)
# where the kernel can, by libbpf otherwise (BPROF_LOAD=libbpf forces that
# path, the one of kernels before 5.17): both record the same workload
# with the same truth.
. "$(dirname "$0")/common.sh"

for how in loader libbpf; do
	out=$T_DIR/$how.bprof
	if [ "$how" = libbpf ]; then
		BPROF_LOAD=libbpf "$BPROF_RECORD" -v -F 199 -o "$out" -- "$W/ratio" 2 2 2>"$T_DIR/$how.err"
	else
		"$BPROF_RECORD" -v -F 199 -o "$out" -- "$W/ratio" 2 2 2>"$T_DIR/$how.err"
	fi
	want="a loader program"
	[ "$how" = libbpf ] && want="libbpf"
	check "$how: says it loaded by $want" grep -q "BPF object loaded by $want" "$T_DIR/$how.err"
	dump "$out"
	n=$(dumpq "$out.txt" samples ratio)
	a=$(dumpq "$out.txt" leaf-in ratio "$W/ratio" func_a)
	b=$(dumpq "$out.txt" leaf-in ratio "$W/ratio" func_b)
	echo "$how: $n samples, leaf func_a $a func_b $b"
	check "$how: the command sampled" test "$n" -gt 100
	check "$how: func_a and func_b both sampled" test "$a" -gt 0 -a "$b" -gt 0
	check "$how: func_a:func_b about 1:3 (a share 12..40%)" between $((a * 100 / (a + b))) 12 40
	check "$how: every user ip inside a recorded mapping" dumpq "$out.txt" ips-in-maps ratio
	check "$how: the command's images have snapshots" test "$(dumpq "$out.txt" coverage ratio | cut -d' ' -f1)" -eq 100
done
finish
