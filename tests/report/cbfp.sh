#!/usr/bin/env bash
# A program with frame pointers and no FDEs, called back from a library
# with only CFI (libc's qsort; glib's main loop is the same shape): the
# recorder leaves the program's frames by frame pointer and libc's by its
# table.  The report checks the leaf's step (a frameless leaf skips its
# caller: "[missing caller]") and trusts the rest of the walk as it trusts
# an exact one; it used to check every step by the CFI and end the stack
# at libc's first frame, whose rbp is libc's own (87.6 % of a glib
# program's samples reached the start).
source "$BPROF_SRC/tests/e2e/lib.sh"
require_bpf

"$BPROF_RECORD" -q -F 499 -o "$T_DIR/cb.bprof" -- "$BPROF_WORKLOADS/cbfp" 1.5
"$BPROF_REPORT" -q -f -U "$T_DIR/cb.bprof" > "$T_DIR/cb.folded"
read -r k t < <(awk '/;spin_leaf( |;)/ { t += $NF; if (/;__libc_start_call_main;/) k += $NF }
	END { print k + 0, t + 0 }' "$T_DIR/cb.folded")
echo "spin_leaf: $k of $t samples reach the start"
check "enough samples in the callback ($t)" test "$t" -ge 300
check ">= 95 % of the callback's samples reach the start ($k/$t)" test $((k * 100)) -ge $((t * 95))
check "the chain: main, libc's qsort, cmp, the skipped work marked, spin_leaf" \
	grep -qE '^cbfp;_start;[^ ]*__libc_start_call_main;main;[^ ]*qsort[^ ]*;(msort_with_tmp;)+cmp;\[missing caller\];spin_leaf ' "$T_DIR/cb.folded"
bad=$(awk '/;spin_leaf( |;)/ && !/;cmp;\[missing caller\];spin_leaf( |;)/ { s += $NF } END { print s + 0 }' "$T_DIR/cb.folded")
check "spin_leaf only ever under cmp and the marker ($bad otherwise)" test "$bad" -eq 0
finish
