#!/bin/bash
# Process churn under -- COMMAND: thousands of short processes (a shell
# loop of /bin/true), a long exec chain in one pid (200 execs), and the
# forker workload.  The recorder must not crash, must exit with the
# command's status, write a valid file, and account honestly for images
# whose mappings it could not read: manifest_lost in the file, the warning
# printed exactly when it is non-zero, with the same number, and every
# sampled image without a snapshot counted in manifest_lost.
. "$(dirname "$0")/common.sh"

# images_missing DUMP: sampled (pid, exec_id) images with a user stack but
# no process snapshot of that exact image
images_missing() {
	awk '$1 == "process" { have[$2 " " $4] = 1 }
	     $1 == "count" && $5 != "none" && $5 >= 0 { img[$2 " " $4] = 1 }
	     END { n = 0; for (k in img) if (!(k in have)) n++; print n }' "$1"
}

# honest WHAT FILE ERR: the loss accounting of one recording
honest() {
	local what=$1 f=$2 err=$3 lost missing warned
	check "$what: file complete (bprof-dump)" dump_to "$f" "$f.txt"
	lost=$(loss "$f.txt" manifest_lost)
	missing=$(images_missing "$f.txt")
	warned=$(sed -n 's/^WARNING: mappings of \([0-9]*\) process images could not be read.*/\1/p' "$err")
	echo "$what: manifest_lost=$lost events_lost=$(loss "$f.txt" events_lost) sampled images without snapshot=$missing warning=${warned:-none}"
	check "$what: manifest_lost recorded" test -n "$lost"
	if [ "${lost:-0}" -gt 0 ]; then
		check "$what: warning printed with the same number" test "$warned" = "$lost"
	else
		check "$what: no loss, no warning" test -z "$warned"
	fi
	check "$what: every sampled image without snapshot counted in manifest_lost" \
		test "${lost:-0}" -ge "$missing"
	check "$what: prof-report reads it" sh -c "'$REP' -f -q '$f' >/dev/null"
}

# 1. thousands of short processes
rc=0
"$REC" -q -F 199 -o "$T_DIR/true.bprof" -- sh -c 'for i in $(seq 3000); do /bin/true; done; exit 3' \
	2>"$T_DIR/true.err" || rc=$?
cat "$T_DIR/true.err"
check "3000 /bin/true: exit status is the command's (3)" test "$rc" -eq 3
honest "3000 /bin/true" "$T_DIR/true.bprof" "$T_DIR/true.err"

# 2. an exec chain: one pid, 200 successive images, each burning a little CPU
cat >"$T_DIR/chain.sh" <<'EOS'
n=${1:-0}
i=0; while [ $i -lt 200 ]; do i=$((i + 1)); done
[ "$n" -ge 200 ] && exit 0
exec bash "$0" $((n + 1))
EOS
rc=0
"$REC" -q -F 999 -o "$T_DIR/chain.bprof" -- bash "$T_DIR/chain.sh" 2>"$T_DIR/chain.err" || rc=$?
cat "$T_DIR/chain.err"
check "exec chain: exit 0" test "$rc" -eq 0
honest "exec chain" "$T_DIR/chain.bprof" "$T_DIR/chain.err"
snaps=$(awk '$1 == "process" { n[$2]++ } END { m = 0; for (p in n) if (n[p] > m) m = n[p]; print m }' "$T_DIR/chain.bprof.txt")
echo "exec chain: most snapshots for one pid: $snaps"
check "exec chain: several images of one pid kept apart (exec_id)" test "${snaps:-0}" -ge 2

# 3. forker: fork, and exec a helper, a few hundred times
rc=0
"$REC" -q -F 199 -o "$T_DIR/fork.bprof" -- "$W/forker" 3 >/dev/null 2>"$T_DIR/fork.err" || rc=$?
cat "$T_DIR/fork.err"
check "forker: exit 0" test "$rc" -eq 0
honest "forker" "$T_DIR/fork.bprof" "$T_DIR/fork.err"
finish
