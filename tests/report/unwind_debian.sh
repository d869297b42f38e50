#!/usr/bin/env bash
# Complete stacks on programs we did not write: Debian's own binaries, built
# without frame pointers (an interpreter, a compressor, a compiler,
# coreutils).  Under the default mode >= 95 % of each program's samples
# walked with its tables, and >= 90 % of all of them, must reach its start
# frames (__libc_start_call_main, start_thread); before the .eh_frame
# unwinder, under 1 % did.  The start frames are libc's local
# functions: their names come from libc6-dbg (tools/install-deps.sh).
source "$BPROF_SRC/tests/e2e/lib.sh"
require_bpf
for p in /usr/bin/python3 /usr/bin/xz /usr/bin/sha256sum /usr/bin/sort /usr/bin/gcc; do
	[ -x "$p" ] || skip "$p is not installed"
done
libc=$(ldd /usr/bin/xz | awk '$1 ~ /^libc\.so/ { print $3 }')
libc_id=$(readelf -n "$libc" | awk '/Build ID/ { print $3 }')
[ -r "/usr/lib/debug/.build-id/${libc_id:0:2}/${libc_id:2}.debug" ] ||
	skip "no debuginfo for $libc (package libc6-dbg): its start frames would be unnamed"

head -c 8000000 /dev/urandom | base64 > "$T_DIR/data.txt"
# a C file that keeps cc1 busy for a few seconds: its 650k-row table takes
# ~70 ms to build, and samples before it (counted as such) stay a small share
for i in $(seq 900); do
	echo "int f$i(int *a, int n) { int s = 0; for (int i = 0; i < n; i++) { s += a[i] * $i + (a[i] >> 3); if (s > $((i * 7))) s ^= a[(i + $i) % n]; } return s; }"
done > "$T_DIR/big.c"

# run COMM COMMAND...: record, then check COMM's share of complete stacks
run() {
	local comm=$1; shift
	"$BPROF_RECORD" -q -F 499 -o "$T_DIR/$comm.bprof" -- "$@" > /dev/null
	"$BPROF_REPORT" -q -f -U "$T_DIR/$comm.bprof" > "$T_DIR/$comm.folded"
	read -r k t < <(awk -v c="$comm;" 'index($0, c) == 1 { t += $NF }
		index($0, c) == 1 && /;(__libc_start_call_main|start_thread);/ { k += $NF }
		END { print k + 0, t + 0 }' "$T_DIR/$comm.folded")
	# Samples taken before the process's tables were loaded (its first
	# milliseconds: cc1's table of 650 k rows takes 75 ms to build on an
	# idle machine, 250 ms with the cores contended) get the kernel's
	# frame-pointer walk, an id below 2^30; the recorder counts them
	# (user_stack_before_table) and they are how much of the share depends
	# on the load.  The unwinder's own work is judged on the others.
	"$BPROF_DUMP" "$T_DIR/$comm.bprof" > "$T_DIR/$comm.dump"
	pre=$(awk -v c="$comm" '$1 == "count" && $9 == c && $5 >= 0 && $5 < 1073741824 { s += $8 }
		END { print s + 0 }' "$T_DIR/$comm.dump")
	echo "$comm: $k of $t samples reach the start frames; $pre were taken before its tables arrived"
	# only that the program ran and was sampled: the share is the point
	check "$comm: enough samples ($t)" test "$t" -ge 50
	check "$comm: >= 95% of the stacks walked with tables complete ($k/$((t - pre)))" \
		test $((k * 100)) -ge $(((t - pre) * 95))
	check "$comm: >= 90% of all stacks complete ($k/$t)" test $((k * 100)) -ge $((t * 90))
	# the program prof-record starts has its tables (and its libraries')
	# built before it may exec (record/unwind/preload.c): a sample or two before
	# the mapping table arrives, not the build time's worth (python3: 20-40
	# of ~900 before).  cc1 is exec'ed later by gcc: its table is built then.
	if [ "$comm" != cc1 ]; then
		check "$comm: tables there from the start (<= 1% + 2 samples before them: $pre)" \
			test "$pre" -le $((t / 100 + 2))
	fi
}

run python3 /usr/bin/python3 -c 'import json
d = [{"k": i, "v": str(i) * 3} for i in range(150000)]
for _ in range(5):
    d = json.loads(json.dumps(d)); d.sort(key=lambda x: x["v"])'
head -c 1500000 "$T_DIR/data.txt" > "$T_DIR/small.txt"
run xz /usr/bin/xz -6 -T1 -c "$T_DIR/small.txt"
# shellcheck disable=SC2046
run sha256sum /usr/bin/sha256sum $(for i in $(seq 40); do echo "$T_DIR/data.txt"; done)
run sort /usr/bin/sort -o /dev/null "$T_DIR/data.txt" "$T_DIR/data.txt" "$T_DIR/data.txt" "$T_DIR/data.txt"
run cc1 /usr/bin/gcc -O2 -c -o "$T_DIR/big.o" "$T_DIR/big.c"
# and the chains are the programs' own: python's eval loop under its main,
# the script's Python frames in its place (record/DESIGN.md "Python
# frames"), the loop itself with --python-native
check "python3: the script's Python frames under Py_BytesMain" \
	grep -qE '^python3;_start;[^ ]*;Py_BytesMain;[^ ]*;<module> \(<string>:[0-9]+\)' "$T_DIR/python3.folded"
"$BPROF_REPORT" -q -f -U --python-native "$T_DIR/python3.bprof" > "$T_DIR/python3.native.folded"
check "python3: the interpreter loop under Py_BytesMain (--python-native)" \
	grep -qE '^python3;_start;[^ ]*;Py_BytesMain;[^ ]*_PyEval_EvalFrameDefault' "$T_DIR/python3.native.folded"
check "cc1: the compiler's passes under toplev::main" \
	grep -qE '^cc1;_start;[^ ]*;main;[^ ]*toplev::main' "$T_DIR/cc1.folded"
finish
