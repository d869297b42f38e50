#!/bin/bash
# JIT code named from what the JIT wrote (issue 37), for a process that
# exits before the recording ends (prof-record -- COMMAND), BPROF_JIT:
#   node     node --perf-basic-prof: /tmp/perf-PID.map, appended as V8 compiles
#   java     java -XX:+DumpPerfMapAtExit: the map is written only as the JVM
#            exits, when /proc/PID/root is about to go (read through the
#            /tmp the recorder kept open)
#   jitdump  node --perf-prof: jit-PID.dump, found as the file node maps
# A sample is a "JIT sample" when its leaf user frame is in anonymous
# executable memory (-a marks it _[j]); >= 90 % of them must be named (not
# [unknown], not [jit-ambiguous]) and most of them by the workload's own
# functions (its hot chain: leafHot, midHot, topHot).
. "$(dirname "$0")/common.sh"

SRC=$BPROF_SRC/tests/workloads/jit
cd "$T_DIR" || exit 1
# prof-record's own options for the command:
# --no-v8 for node: its JavaScript frames would be V8 frames (issue 38,
# record_v8), named from the V8 section, not from the perf map or jitdump
# this test is about (a node without v8dbg_ symbols still needs them);
# --no-jvm for java, likewise (record_jvm)
rec_opts=()
case "${BPROF_JIT:?}" in
node | jitdump)
	command -v node >/dev/null || skip "node missing (tools/install-deps.sh)"
	cp "$SRC/hot.js" .
	if [ "$BPROF_JIT" = node ]; then
		cmd=(node --perf-basic-prof hot.js 3000)
	else
		cmd=(node --perf-prof hot.js 3000)
	fi
	own='hot\.js'
	rec_opts=(--no-v8)
	;;
java)
	if ! command -v java >/dev/null || ! command -v javac >/dev/null; then
		skip "java/javac missing (OpenJDK 17)"
	fi
	cp "$SRC/Hot.java" .
	javac Hot.java
	cmd=(java -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit Hot 3000)
	rec_opts=(--no-jvm)
	own='Hot\.(leaf|mid|top)Hot'
	;;
esac

out=$T_DIR/jit.bprof
"$BPROF_RECORD" -q "${rec_opts[@]}" -F 199 -o "$out" -- "${cmd[@]}" >/dev/null
# the maps this test's processes left in /tmp (the command's, not others')
for p in $(awk '$1 == "process" { print $2 }' < <("$BPROF_DUMP" "$out")); do
	rm -f "/tmp/perf-$p.map"
done
rm -f jit-*.dump
dump "$out"
"$BPROF_REPORT" -q -f -a -U "$out" > "$T_DIR/jit.folded"
"$BPROF_REPORT" -q --info "$out" > "$T_DIR/info.txt"

# leaf frame and count of every JIT-leaf stack
awk '{ n = $NF; $NF = ""; sub(/ $/, ""); k = split($0, f, ";"); if (f[k] ~ /_\[j\]$/) print n "\t" f[k] }' \
	"$T_DIR/jit.folded" > "$T_DIR/leaves.txt"
total=$(awk -F'\t' '{ s += $1 } END { print s + 0 }' "$T_DIR/leaves.txt")
named=$(awk -F'\t' '$2 !~ /^\[(unknown|jit-ambiguous)\]/ { s += $1 } END { print s + 0 }' "$T_DIR/leaves.txt")
ownn=$(awk -F'\t' -v re="$own" '$2 ~ re { s += $1 } END { print s + 0 }' "$T_DIR/leaves.txt")
echo "JIT-leaf samples: $total, named: $named, by the workload's functions: $ownn"
sort -t$'\t' -k1,1 -rn "$T_DIR/leaves.txt" | head -5

check "at least 150 JIT-leaf samples (the hot chain ran ~3 s of CPU time at 199 Hz)" test "$total" -ge 150
check ">= 90 % of JIT-leaf samples named ($named of $total)" test $((named * 100)) -ge $((total * 90))
check "most JIT-leaf samples are the workload's hot functions ($ownn of $total)" \
	test $((ownn * 100)) -ge $((total * 60))
case "$BPROF_JIT" in
node | java)
	check "the perf map is in the recording" \
		awk '$1 == "process" && $7 > 0 { ok = 1 } END { exit !ok }' "$out.txt"
	check "no jitdump expected" bash -c "! grep -q '^jitdump ' '$out.txt'"
	;;
jitdump)
	check "the jitdump is in the recording, code bytes stripped" \
		awk '$1 == "jitdump" && $4 > 40 { j = 1 } $1 == "jit_counter" && $2 == "jitdump_code_stripped" && $3 > 0 { s = 1 } END { exit !(j && s) }' "$out.txt"
	;;
esac
if [ "$BPROF_JIT" = java ]; then
	# written at exit only: the read at the image's end (or the last one
	# through the kept /tmp) is what caught it
	check "the map was read when the JVM ended" \
		awk '$1 == "jit_counter" && $2 == "perf_map_final" && $3 > 0 { ok = 1 } END { exit !ok }' "$out.txt"
fi
check "prof-report --info describes the JIT code" grep -q "^jit code:" "$T_DIR/info.txt"
if [ "$BPROF_JIT" = node ]; then
	# --rotate: each file carries the map its samples need
	mkdir "$T_DIR/rot"
	"$BPROF_RECORD" -q "${rec_opts[@]}" -F 199 --rotate=1 -o "$T_DIR/rot" -- "${cmd[@]}" >/dev/null
	for p in $(for f in "$T_DIR"/rot/*.bprof; do "$BPROF_DUMP" "$f"; done | awk '$1 == "process" { print $2 }' | sort -u); do
		rm -f "/tmp/perf-$p.map"
	done
	nf=0 bad=0
	for f in "$T_DIR"/rot/*.bprof; do
		nf=$((nf + 1))
		read -r t m < <("$BPROF_REPORT" -q -f -a -U "$f" | awk '{ n = $NF; $NF = ""; sub(/ $/, ""); k = split($0, f, ";"); if (f[k] ~ /_\[j\]$/) { t += n; if (f[k] !~ /^\[(unknown|jit-ambiguous)\]/) m += n } } END { print t + 0, m + 0 }')
		echo "--rotate file $nf: $m of $t JIT-leaf samples named"
		[ $((m * 100)) -ge $((t * 90)) ] || bad=$((bad + 1))
	done
	check "--rotate: $nf files, each names >= 90 % of its JIT-leaf samples" test "$nf" -ge 2 -a "$bad" -eq 0
fi
if [ "$BPROF_JIT" = node ]; then
	# a container: its own pid namespace (node is pid 1 there and writes
	# perf-1.map) and a tmpfs /tmp in its own mount namespace, gone with
	# it (nothing left on the host for a later reader)
	"$BPROF_RECORD" -q "${rec_opts[@]}" -F 199 -o "$T_DIR/ns.bprof" -- unshare -m -p -f --propagation private sh -c \
		'exec 3<"$1"; mount -t tmpfs none /tmp && cat <&3 > /tmp/hot.js && cd /tmp &&
		 exec node --perf-basic-prof hot.js 2000' sh "$T_DIR/hot.js" >/dev/null
	read -r t m < <("$BPROF_REPORT" -q -f -a -U "$T_DIR/ns.bprof" | awk '{ n = $NF; $NF = ""; sub(/ $/, ""); k = split($0, f, ";"); if (f[k] ~ /_\[j\]$/) { t += n; if (f[k] !~ /^\[(unknown|jit-ambiguous)\]/) m += n } } END { print t + 0, m + 0 }')
	echo "own pid namespace, private /tmp: $m of $t JIT-leaf samples named"
	check "pid 1 of its own namespace, a private /tmp gone with it: >= 90 % of $t JIT-leaf samples named" \
		test "$t" -ge 100 -a $((m * 100)) -ge $((t * 90))
fi
check "no cap was reached" bash -c "! grep -q 'CAP REACHED' '$T_DIR/info.txt'"
finish
