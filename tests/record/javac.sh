#!/bin/bash
# A real Java program, not a loop written for the test: javac (OpenJDK 17)
# compiling 3,600 generated methods, recorded with no JVM flags.  Its JIT
# compiles thousands of methods and grows its code heaps while recorded:
# the walk must find compiled code committed after the JVM was first read
# (the heaps' reserved ends, not their committed ends at that read: 24 %
# of javac's samples were cut at compiled code in no known heap), and the
# unwinder must keep the process's table through the code cache's churn
# (tests/record/churn.sh), and each chunk of code heap HotSpot commits
# must be a mapping seen, not a gap.  Issue 46.
. "$(dirname "$0")/common.sh"

JDK=${BPROF_JDK:-/usr/lib/jvm/java-17-openjdk-amd64}
[ -x "$JDK/bin/javac" ] || skip "$JDK/bin/javac missing (openjdk-17-jdk-headless)"
mkdir -p "$T_DIR/src" "$T_DIR/out"
python3 - "$T_DIR/src" <<'PY'
import sys
for c in range(12):
    with open(f"{sys.argv[1]}/Gen{c}.java", "w") as f:
        f.write(f"public class Gen{c} {{\n")
        for m in range(300):
            f.write(f"  static int m{m}(int x) {{ int y = x * {m} + {c}; "
                    f"for (int i = 0; i < {m % 7}; i++) y += i ^ x; "
                    f"return y > 0 ? m{max(m - 1, 0)}(y - 1) : y; }}\n")
        f.write("}\n")
PY
out=$T_DIR/javac.bprof
"$BPROF_RECORD" -q -F 199 -o "$out" -- "$JDK/bin/javac" -d "$T_DIR/out" "$T_DIR"/src/Gen*.java
check "javac compiled the 12 classes" test "$(ls "$T_DIR/out" | grep -c '^Gen.*\.class$')" -eq 12
"$BPROF_REPORT" -q --info "$out" > "$T_DIR/javac.info"
grep -E "user stacks walked|reached the start|before their tables|stop_no_blob|frames_compiled" "$T_DIR/javac.info"
walked=$(awk '/user stacks walked:/ { print $4 }' "$T_DIR/javac.info")
whole=$(awk '/reached the start frames:/ { print $5 }' "$T_DIR/javac.info")
noblob=$(awk '$1 == "stop_no_blob" { print $2 }' "$T_DIR/javac.info")
notable=$(awk '/before their tables arrived:/ { print $5 }' "$T_DIR/javac.info")
check "javac sampled >= 300 times ($walked)" test "${walked:-0}" -ge 300
check ">= 90 % of its user stacks reach their thread's start ($whole of $walked)" \
	test "$((100 * ${whole:-0}))" -ge "$((90 * ${walked:-1}))"
check "<= 2 % of them cut at compiled code in no known heap (stop_no_blob ${noblob:-?})" \
	test "$((100 * ${noblob:-999999}))" -le "$((2 * ${walked:-0}))"
check "<= 2 % walked before their tables arrived (${notable:-?})" \
	test "$((100 * ${notable:-999999}))" -le "$((2 * ${walked:-0}))"
"$BPROF_REPORT" -q -f "$out" > "$T_DIR/javac.folded"
check "javac's own compiler named (com.sun.tools.javac.main.JavaCompiler)" \
	grep -q 'com\.sun\.tools\.javac\.main\.JavaCompiler\.compile(' "$T_DIR/javac.folded"
# every frame named: HotSpot commits its code heaps chunk by chunk with
# MAP_FIXED, each chunk merging with the one below; each was a generation
# never seen, after which no frame of any mapping could be named (66 % of
# javac's samples had an [unknown] frame)
unk=$(awk '/\[unknown\]/ { n += $NF } END { print n + 0 }' "$T_DIR/javac.folded")
all=$(awk '{ n += $NF } END { print n + 0 }' "$T_DIR/javac.folded")
grep -E "generations never seen|unknowable" "$T_DIR/javac.info" || true
check "<= 5 % of its samples with an [unknown] frame ($unk of $all)" test "$((100 * unk))" -le "$((5 * all))"
finish
