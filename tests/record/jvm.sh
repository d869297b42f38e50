#!/bin/bash
# HotSpot frames (issue 38): Java workloads of known shape
# (tests/workloads/java/) recorded with no JVM flags, their Java frames
# walked in BPF through the interpreter and C1/C2 code and named offline.
# Chain: a hot chain main -> middle -> leaf, a recursion, an allocation
# loop (each method kept out of its callers by its size: no inlined frames
# to decode); Deopt: a method compiled, deoptimized and compiled again
# mid-run (-XX:+PrintCompilation only to see that it was: it changes no
# code).  jvmcheck.py checks every row's Java frames against the call graph
# and their lines against the source.  Hot: C2 inlines leaf into middle;
# the inlined frame is named where the compiled code has debug info for it
# (a call or safepoint inside the inlined code).
# OpenJDK 17 (/usr/lib/jvm/java-17-openjdk-amd64, tools/install-deps.sh) is
# required: with CI=true a machine without it fails.
# BPROF_JVM=11 (record_jvm_11): the same checks on Debian 11's OpenJDK 11,
# unpacked from bullseye's archive into /var/cache/bprof/jdk11 once
# (jdk11-setup.sh), the workloads compiled by 17's javac --release 11; a
# JDK 11 that cannot be obtained fails with CI=true.
# With 17, a release outside 11..21 (Temurin 25, where it is installed) is
# recorded too: told apart and not walked, never misnamed.
. "$(dirname "$0")/common.sh"

JDK17=${BPROF_JDK:-/usr/lib/jvm/java-17-openjdk-amd64}
[ -x "$JDK17/bin/java" ] && [ -x "$JDK17/bin/javac" ] || skip "$JDK17 missing (openjdk-17-jdk-headless)"
JW=$BPROF_SRC/tests/workloads/java
case ${BPROF_JVM:-17} in
17)	JDK=$JDK17
	"$JDK/bin/javac" -d "$T_DIR" "$JW/Chain.java" "$JW/Deopt.java" ;;
11)	JDK=$("$BPROF_SRC/tests/record/jdk11-setup.sh" "${BPROF_JDK_CACHE:-/var/cache/bprof}/jdk11") ||
		skip "OpenJDK 11 could not be obtained from Debian's bullseye archive (jdk11-setup.sh)"
	"$JDK17/bin/javac" --release 11 -d "$T_DIR" "$JW/Chain.java" "$JW/Deopt.java" ;;
*)	echo "BPROF_JVM=$BPROF_JVM: 17 or 11" >&2; exit 2 ;;
esac
jcheck() { python3 "$BPROF_SRC/tests/record/jvmcheck.py" "$@"; }
val() { awk -v k="$1" '$1 == k { print int($2) }' "$2"; }

out=$T_DIR/chain.bprof
"$BPROF_RECORD" -q -F 199 -o "$out" -- "$JDK/bin/java" -cp "$T_DIR" Chain 3000 > /dev/null
"$BPROF_REPORT" -q -f "$out" > "$T_DIR/chain.folded"
jcheck "$T_DIR/chain.folded" --class Chain --root main --source "$JW/Chain.java" \
	--edges "main>middle,middle>step,step>leaf,main>recurse,recurse>recurse,recurse>bottom,main>alloc" \
	--expect "main;middle;step;leaf" --expect "recurse;bottom" --expect "main;alloc" -v > "$T_DIR/chain.txt"
cat "$T_DIR/chain.txt"
n=$(val samples "$T_DIR/chain.txt")
check "Chain: >= 200 samples with Java frames ($n; ~580: 3 s of its CPU time at 199 Hz, on an idle or a busy machine)" test "${n:-0}" -ge 200
v=$(val valid_pct "$T_DIR/chain.txt")
check "Chain: >= 95 % of them right by method, reaching the thread's start ($v %)" test "${v:-0}" -ge 95
for e in "main;middle;step;leaf" "recurse;bottom" "main;alloc"; do
	c=$(awk -v e="$e" '$1 == "expect" && $2 == e { print $3 }' "$T_DIR/chain.txt")
	check "Chain: the chain $e in >= 20 % of them ($c of $n)" test "$((100 * ${c:-0}))" -ge "$((20 * n))"
done
check "Chain: the whole chain printed as Java prints it" \
	grep -Eq ";Chain\.main\(Chain\.java(:[0-9]+)?\);Chain\.middle\(Chain\.java(:[0-9]+)?\);Chain\.step\(Chain\.java(:[0-9]+)?\);Chain\.leaf\(Chain\.java(:[0-9]+)?\)" "$T_DIR/chain.folded"
check "Chain: the twelve-deep recursion whole" \
	grep -Eq "(Chain\.recurse\(Chain\.java(:[0-9]+)?\);){13}Chain\.bottom" "$T_DIR/chain.folded"
w=$(val line_wrong "$T_DIR/chain.txt")
check "Chain: no frame with a wrong line (outside its method, or a caller's not calling its callee: $w)" test "${w:-1}" -eq 0
l=$(val line_pct "$T_DIR/chain.txt")
check "Chain: >= 90 % of its frames right by line ($l %)" test "${l:-0}" -ge 90
check "Chain: the call stub named as a stub, not [unknown]" grep -q "\[jvm\] StubRoutines" "$T_DIR/chain.folded"
"$BPROF_REPORT" -q --info "$out" > "$T_DIR/chain.info"
check "--info says the JVM was walked" grep -Eq "^jvm: +1 JVM .*walked" "$T_DIR/chain.info"
check "--info names its release, ${BPROF_JVM:-17}" grep -Eq "HotSpot ${BPROF_JVM:-17}\.[0-9.]+.*: Java frames walked" "$T_DIR/chain.info"

# a JVM that exits mid-recording keeps its names: they were read from it
# when first met, not at the end
"$BPROF_RECORD" -q -F 199 -o "$T_DIR/exit.bprof" -- sh -c "'$JDK/bin/java' -cp '$T_DIR' Chain 1500 > /dev/null; sleep 1"
"$BPROF_REPORT" -q -f "$T_DIR/exit.bprof" > "$T_DIR/exit.folded"
check "a JVM that exited before the recording's end: its chain named" \
	grep -Eq ";Chain\.middle\(Chain\.java(:[0-9]+)?\);Chain\.step\(Chain\.java(:[0-9]+)?\);Chain\.leaf\(" "$T_DIR/exit.folded"
# ([java] is also how the launcher's own stripped binary, java, names its
# _start: sampled at the JVM's exit, under __libc_start_main, 1 run in 3
# with OpenJDK 11 (no debuginfo); that frame is native, not Java's.  And a
# thread sampled for the first time in its exit (do_exit: the Reference
# Handler, blocked all its life, is on a CPU only then) has Java frames
# met first when the process's memory is going: they cannot be named, and
# stay unnamed, never misnamed; 1 run in 6 with OpenJDK 11 here.)
check "... and no Java frame of it unnamed (but in a thread sampled in its exit)" \
	sh -c "! grep '\[java\]' '$T_DIR/exit.folded' | grep -v '^java;\[java\];__libc_start_main_impl;' | grep -v ';do_exit;' | grep -q ."

# --no-jvm: the walk ends at the first frame of generated code, as before
"$BPROF_RECORD" -q -F 99 --no-jvm -o "$T_DIR/off.bprof" -- "$JDK/bin/java" -cp "$T_DIR" Chain 1500 > /dev/null
"$BPROF_REPORT" -q -f "$T_DIR/off.bprof" > "$T_DIR/off.folded"
check "--no-jvm: no Java frame named" sh -c "! grep -q 'Chain\.' '$T_DIR/off.folded'"

# recompilation: work() compiled for Square, deoptimized when Circle comes,
# compiled again, and again when Triangle makes its call megamorphic; no
# phase's frames named for another's
out=$T_DIR/deopt.bprof
"$BPROF_RECORD" -q -F 199 -o "$out" -- "$JDK/bin/java" -XX:+PrintCompilation -cp "$T_DIR" Deopt 3000 > "$T_DIR/deopt.log"
check "Deopt: work() was made not entrant and compiled again" \
	sh -c "grep -q 'Deopt::work (.*made not entrant' '$T_DIR/deopt.log' && [ \$(grep -c 'Deopt::work (' '$T_DIR/deopt.log') -ge 3 ]"
"$BPROF_REPORT" -q -f "$out" > "$T_DIR/deopt.folded"
jcheck "$T_DIR/deopt.folded" --class Deopt --root main --source "$JW/Deopt.java" \
	--edges "main>phaseA,main>phaseB,main>phaseC,phaseA>work,phaseB>work,phaseC>work" \
	--expect "phaseA;work" --expect "phaseB;work" --expect "phaseC;work" -v > "$T_DIR/deopt.txt"
cat "$T_DIR/deopt.txt"
n=$(val samples "$T_DIR/deopt.txt")
v=$(val valid_pct "$T_DIR/deopt.txt")
check "Deopt: >= 95 % of $n samples right by method ($v %)" test "${v:-0}" -ge 95
if [ "${v:-0}" -lt 95 ]; then
	# for the log: what the recording knew of the JVM, its heaviest stacks
	# (once seen in a CI run beside other recordings: 0 samples graded)
	{ "$BPROF_REPORT" --info "$out" 2>&1 | grep -A12 '^jvm' | sed 's/^/  deopt --info: /'
	  awk '{ print $NF, substr($0, 1, 300) }' "$T_DIR/deopt.folded" | sort -rn | head -5 |
		sed 's/^/  deopt.folded: /'; } || true
fi
for e in "phaseA;work" "phaseB;work" "phaseC;work"; do
	c=$(awk -v e="$e" '$1 == "expect" && $2 == e { print $3 }' "$T_DIR/deopt.txt")
	check "Deopt: $e in >= 12 % of them ($c of $n)" test "$((100 * ${c:-0}))" -ge "$((12 * n))"
done

# a release outside 11..21: its JVM found, its release told, not walked;
# its samples kept with native stacks and no frame named Java
J25=${BPROF_JDK25:-/usr/lib/jvm/temurin-25-jdk-amd64}
if [ "${BPROF_JVM:-17}" = 17 ] && [ -x "$J25/bin/java" ]; then
	out=$T_DIR/j25.bprof
	"$BPROF_RECORD" -F 199 -o "$out" -- "$J25/bin/java" -cp "$T_DIR" Chain 1500 > /dev/null 2> "$T_DIR/j25.err"
	check "25: prof-record says its Java frames are not recorded, and why" \
		grep -Eq "runs HotSpot 25\.[^ ]*, a release bprof does not walk \(it walks 11 to 21\): its Java frames are not recorded" "$T_DIR/j25.err"
	"$BPROF_REPORT" -q --info "$out" > "$T_DIR/j25.info"
	check "25: --info lists it, its release and why it was not walked" \
		grep -Eq "HotSpot 25\.[^ ]*: a HotSpot release bprof does not know \(11 to 21\)" "$T_DIR/j25.info"
	check "25: --info: 0 walked, 0 named" grep -Eq "^jvm: +1 JVM \(0 walked\), 0 frame identities named" "$T_DIR/j25.info"
	"$BPROF_REPORT" -q -f "$out" > "$T_DIR/j25.folded"
	n=$(awk '$1 ~ /^java;/ { s += $NF } END { print s + 0 }' "$T_DIR/j25.folded")
	check "25: its samples kept ($n)" test "$n" -ge 100
	check "25: no frame named Java, no JVM stub" sh -c "! grep -Eq 'Chain\.|\[jvm\]|\[java\]' '$T_DIR/j25.folded'"
elif [ "${BPROF_JVM:-17}" = 17 ]; then
	echo "no $J25 here: the refusal of a release outside 11..21 is not recorded"
fi
finish
