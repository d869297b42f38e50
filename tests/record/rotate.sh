#!/bin/bash
# --rotate: one loaded recorder writes one complete, self-contained file per
# interval; no sample is lost or counted twice at a boundary (the kernel's
# own count of counted samples equals the sum over the files, and a single
# recording of the same workload at the same time agrees); prof-report reads
# the directory; --keep and --max-disk remove only this run's oldest files.
. "$(dirname "$0")/common.sh"

bg "$W/ratio" 600 2 # killed at exit (60 s ended mid-test on a loaded host: -p of a dead pid)
pid=$BG
sleep 0.3

# the same workload, recorded twice at once: rotating and in one file
dir=$T_DIR/rot
"$BPROF_RECORD" -v -F 199 -p "$pid" -o "$T_DIR/single.bprof" 4 2>"$T_DIR/single.err" &
single=$!
"$BPROF_RECORD" -v -F 199 -p "$pid" --rotate=1 -o "$dir" 4 2>"$T_DIR/rot.err"
rc=$?
wait $single
grep -v '^libbpf' "$T_DIR/rot.err" | grep -v '^prof-record: unwind' | head -20
check "--rotate: exit 0" test "$rc" -eq 0
check "directory created with mode 0700" test "$(stat -c %a "$dir")" = 700

mapfile -t files < <(ls "$dir"/*.bprof)
echo "files: ${#files[@]}"
# boundaries at 1, 2 and 3 s, the end at 4 s (3 if a dump outlasted a second)
check "4 s at --rotate=1: 3 or 4 files" between "${#files[@]}" 3 4
check "no temporary file left" test -z "$(ls -A "$dir" | grep -v '\.bprof$')"

id=$(build_id "$W/ratio")
sum=0
for f in "${files[@]}"; do
	check "$(basename "$f"): readable" dump "$f"
	n=$(dumpq "$f.txt" samples '*')
	sum=$((sum + n))
	check "$(basename "$f"): has samples" test "$n" -gt 0
	# self-contained: each file carries the process and its objects again
	check "$(basename "$f"): build-id of ratio mapped" dumpq "$f.txt" build-id-mapped ratio "$id"
	check "$(basename "$f"): every user ip inside a recorded mapping" dumpq "$f.txt" ips-in-maps ratio
	check "$(basename "$f"): mode 0600" test "$(stat -c %a "$f")" = 600
	# samples dropped (counts table full) or stacks lost would hide a
	# boundary's loss behind a counter
	for l in counts_full user_stack_enomem user_stack_eexist kernel_stack_enomem kernel_stack_eexist other; do
		check "$(basename "$f"): loss $l is 0" test "$(dumpq "$f.txt" loss "$l")" -eq 0
	done
	rm -f "$f.txt"
done

# exact: what the BPF program counted is what the files hold
line=$(grep 'samples counted in the kernel' "$T_DIR/rot.err")
echo "$line; sum over files: $sum"
kernel=$(echo "$line" | sed -n 's/^prof-record: \([0-9]*\) samples counted in the kernel, \([0-9]*\) in the files.*/\1/p')
check "kernel's count equals the sum over the files" test "$kernel" = "$sum"
check "no boundary warning" test -z "$(grep 'the kernel counted' "$T_DIR/rot.err")"

# the single recording saw the same CPU time at the same rate
dump "$T_DIR/single.bprof"
one=$(dumpq "$T_DIR/single.bprof.txt" samples '*')
echo "single recording: $one samples; rotating: $sum"
check "rotating total within 10% of one recording's" \
	between "$sum" $((one * 90 / 100)) $((one * 110 / 100 + 4))

# prof-report: the directory is the merged files
"$BPROF_REPORT" -q -f "$dir" >"$T_DIR/dir.folded"
"$BPROF_REPORT" -q -f "${files[@]}" >"$T_DIR/files.folded"
check "prof-report DIR = prof-report DIR/*.bprof" cmp -s "$T_DIR/dir.folded" "$T_DIR/files.folded"
total=$(awk '{ s += $NF } END { print s + 0 }' "$T_DIR/dir.folded")
check "prof-report DIR counts every sample" test "$total" -eq "$sum"
check "prof-report DIR names the workload" grep -q 'func_b' "$T_DIR/dir.folded"
mkdir "$T_DIR/empty"
rc=0; "$BPROF_REPORT" -f "$T_DIR/empty" >/dev/null 2>"$T_DIR/err" || rc=$?
check "prof-report on an empty directory: exit 1" test "$rc" -eq 1
check "... saying so" grep -q 'no .bprof files' "$T_DIR/err"

# --keep=2: the two newest of this run stay; a file not ours is untouched
kdir=$T_DIR/keep
mkdir "$kdir"
echo theirs >"$kdir/aaa-not-ours.bprof"
"$BPROF_RECORD" -F 99 -p "$pid" --rotate=1 --keep=2 -o "$kdir" 4 2>"$T_DIR/keep.err"
grep -c removed "$T_DIR/keep.err" || true
check "--keep=2: two files of ours left" test "$(ls "$kdir" | grep -c '^prof-')" -eq 2
check "--keep=2: says what it removed" grep -q 'removed .* (--keep)' "$T_DIR/keep.err"
check "--keep=2: another file untouched" test "$(cat "$kdir/aaa-not-ours.bprof")" = theirs
newest=$(ls "$kdir" | grep '^prof-' | tail -n1)
check "--keep=2: the newest one kept (000004 or 000003)" grep -Eq -- '-00000[34]\.bprof$' <<<"$newest"

# --max-disk smaller than one file: only the newest is kept
mdir=$T_DIR/maxdisk
"$BPROF_RECORD" -q -F 99 -p "$pid" --rotate=1 --max-disk=1K -o "$mdir" 3
check "--max-disk=1K: one file left" test "$(ls "$mdir" | wc -l)" -eq 1

# SIGINT: the current interval is written, then the recorder ends
sdir=$T_DIR/sig
"$BPROF_RECORD" -F 99 -p "$pid" --rotate=1 -o "$sdir" 2>"$T_DIR/sig.err" &
rp=$!
for _ in $(seq 500); do
	[ "$(ls "$sdir" 2>/dev/null | grep -c bprof)" -ge 2 ] && break
	kill -0 "$rp" 2>/dev/null || break
	sleep 0.04
done
kill -INT $rp
rc=0; wait $rp || rc=$?
check "SIGINT: exit 0" test "$rc" -eq 0
check "SIGINT: the last interval written too (3 files or more)" test "$(ls "$sdir" | wc -l)" -ge 3
for f in "$sdir"/*.bprof; do
	check "SIGINT: $(basename "$f") readable" dump "$f"
done

# short-lived processes: every file still has the mappings of every image it
# counts (they are read once, then carried), and the recorder forgets the
# dead ones instead of holding every image of the run (~180 here)
fdir=$T_DIR/forker
"$BPROF_RECORD" -v -F 199 --rotate=1 -o "$fdir" -- "$W/forker" 4 >/dev/null 2>"$T_DIR/forker.err"
held=$(sed -n 's/^prof-record: \([0-9]*\) process images held.*/\1/p' "$T_DIR/forker.err" | sort -n | tail -n1)
echo "forker: at most $held process images held between files"
check "forker: images forgotten once dead (at most 100 held)" between "${held:-999}" 1 100
for f in "$fdir"/*.bprof; do
	dump "$f"
	check "forker $(basename "$f"): no image without mappings" test "$(dumpq "$f.txt" loss manifest_lost)" -eq 0
done
check "forker: kernel's count = files' sum" test -z "$(grep 'the kernel counted' "$T_DIR/forker.err")"

# usage
rc=0; "$BPROF_RECORD" --keep=3 -o "$T_DIR/x" 1 2>"$T_DIR/err" || rc=$?
check "--keep without --rotate: usage error" test "$rc" -eq 2
check "... naming --rotate" grep -q -- '--rotate' "$T_DIR/err"
echo file >"$T_DIR/afile"
rc=0; "$BPROF_RECORD" --rotate=1 -o "$T_DIR/afile" 1 2>"$T_DIR/err" || rc=$?
check "--rotate -o FILE: refused" test "$rc" -ne 0
check "... saying it is not a directory" grep -q 'not a directory' "$T_DIR/err"
check "... the file untouched" test "$(cat "$T_DIR/afile")" = file
rc=0; "$BPROF_RECORD" --rotate=0 -o "$T_DIR/y" 1 2>/dev/null || rc=$?
check "--rotate=0: usage error" test "$rc" -eq 2
rc=0; "$BPROF_RECORD" --rotate=1 --max-disk=12X -o "$T_DIR/y" 1 2>/dev/null || rc=$?
check "--max-disk=12X: usage error" test "$rc" -eq 2
check "nothing created by refused runs" test ! -e "$T_DIR/y" -a ! -e "$T_DIR/x"
# --wall with --rotate: the off-CPU programs keep this CPU's rotate_seq as
# the sampler does (their counts go to the set of the interval)
"$BPROF_RECORD" -q --wall -F 99 --rotate=1 -o "$T_DIR/wall" -- "$BPROF_WORKLOADS/offcpu" 3 >/dev/null
nw=$(find "$T_DIR/wall" -name '*.bprof' | wc -l)
off=0
for f in "$T_DIR"/wall/*.bprof; do
	n=$("$BPROF_REPORT" -q -f --off-cpu "$f" 2>/dev/null | awk '{ s += $NF } END { print s + 0 }')
	off=$((off + n))
done
check "--wall --rotate=1 over 3 s: >= 2 files ($nw), off-CPU samples in them ($off)" \
	test "$nw" -ge 2 -a "$off" -gt 100

finish
