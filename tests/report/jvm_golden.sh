#!/bin/bash
# Java frames named from a file alone (tests/data/format/valid/jvm.bprof,
# fx_jvm): the JVM section's names, line number tables and scopes, no JVM
# and no BPF.  Its walked stack holds, leaf first, a compiled frame of
# app.Méthode.hot whose scope at that pc has app.Main.run inlined, an
# interpreted app.Main.run, and the call stub (SPEC.md 6.18).
. "${BPROF_SRC:?}/tests/e2e/lib.sh"

f=$BPROF_SRC/tests/data/format/valid/jvm.bprof
"$BPROF_REPORT" -q -f "$f" > "$T_DIR/f.txt"
check "folded: pkg.Class.method(File:line), the inlined method after the one it is in, the stub as a stub" \
	grep -qx "java;\[worker\];\[jvm\] StubRoutines (1);app.Main.run(Main.java:21);app.Méthode.hot(M.java:21);app.Main.run(Main.java:21) 5" "$T_DIR/f.txt"
"$BPROF_REPORT" -q "$f" > "$T_DIR/m.txt"
check "multi-line: one Java frame a line" grep -qx "    app.Méthode.hot(M.java:21)" "$T_DIR/m.txt"
"$BPROF_REPORT" --info "$f" > "$T_DIR/i.txt" 2>&1
check "--info: the JVMs, their status and the counters" \
	bash -c "grep -q '^jvm: *2 JVMs (1 walked), 4 frame identities named' '$T_DIR/i.txt' && grep -q 'HotSpot 17.0.15+6: Java frames walked' '$T_DIR/i.txt' && grep -q 'HotSpot (release unknown): a HotSpot release bprof does not know' '$T_DIR/i.txt' && grep -Eq '^  guard_mismatch +2011$' '$T_DIR/i.txt'"
finish
