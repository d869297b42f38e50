#!/usr/bin/env bash
# Recording without root (README "Recording without root"): a copy of
# prof-record given CAP_BPF+CAP_PERFMON as file capabilities, run as an
# ordinary user (nobody), must give a recording as symbolizable as root's -
# of its own command, of one of its processes (-p), and of the whole system
# (a root-owned workload) - and refuse loudly where it cannot: -p of a
# process it may not read, a deleted binary it cannot identify.
# The workload is uw-gcc (-O2 -fomit-frame-pointer, as distros build): its
# stacks are complete only if every object was identified (its .eh_frame
# table is built from the file), so the check covers the unwinder too.
. "$(dirname "$0")/common.sh"
command -v setcap >/dev/null || skip "setcap (libcap2-bin) not installed"
command -v setpriv >/dev/null || skip "setpriv (util-linux) not installed"

USER_ID=65534 # nobody
AS_USER=(setpriv --reuid=$USER_ID --regid=$USER_ID --clear-groups)
as_user() { "${AS_USER[@]}" "$@"; }

# Everything the user runs lives in a directory it may enter (mktemp's is
# 0700), on a file system without nosuid (file capabilities need it).
B=$T_DIR/bin
mkdir -p "$B" "$T_DIR/out"
chmod 0755 "$T_DIR" "$B"
chmod 0777 "$T_DIR/out"
cp "$BPROF_RECORD" "$B/prof-record"
cp "$W/uw-gcc" "$B/uw-gcc"
chmod 0755 "$B"/*
if findmnt -n -o OPTIONS -T "$B" | grep -qw nosuid; then
	skip "$T_DIR is on a nosuid mount: file capabilities are ignored there"
fi
setcap cap_bpf,cap_perfmon+ep "$B/prof-record"
REC=$B/prof-record
MODES="qsort recurse threads plt leaf"

# named FOLDED: "named total" samples of comm uw-gcc whose leaf has a
# function name ([libc.so.6], [unknown] are unnamed).  The leaf is named
# when its object was identified (build-id) whatever the walk did; the
# callers of a process's first samples, walked before its tables arrived,
# vary with the load, and are what complete() measures.
named() {
	awk 'index($0, "uw-gcc;") == 1 { t += $NF; s = $0; sub(/ [0-9]+$/, "", s)
		n2 = split(s, f, ";"); if (f[n2] !~ /^\[/) n += $NF }
		END { print n + 0, t + 0 }' "$1"
}
complete() {
	awk 'index($0, "uw-gcc;") == 1 { t += $NF }
		index($0, "uw-gcc;") == 1 && /;(__libc_start_call_main|start_thread);/ { k += $NF }
		END { print k + 0, t + 0 }' "$1"
}
# early BPROF: the samples the recording says were walked before their
# tables arrived (--info), of any process.
early() {
	"$BPROF_REPORT" --info "$1" | awk '/before their tables arrived:/ { print $5 + 0; f = 1 } END { if (!f) print 0 }'
}
# compare WHAT ROOT_FOLDED USER_FOLDED [ROOT_BPROF USER_BPROF]: the user's
# recording names >= 95 % of what root's names, its stacks are as complete,
# and every mode's function is there.
compare() {
	local what=$1 rn rt un ut rk uk re=0 ue=0
	read -r rn rt < <(named "$2")
	read -r un ut < <(named "$3")
	read -r rk _ < <(complete "$2")
	read -r uk _ < <(complete "$3")
	if [ -n "${4:-}" ]; then
		re=$(early "$4")
		ue=$(early "$5")
	fi
	echo "$what: root named $rn/$rt complete $rk early $re; user named $un/$ut complete $uk early $ue"
	check "$what: samples recorded (root $rt, user $ut)" test "$rt" -ge 50 -a "$ut" -ge 50
	check "$what: named share >= 95 % of root's ($un/$ut vs $rn/$rt)" \
		awk -v a="$un" -v b="$ut" -v c="$rn" -v d="$rt" 'BEGIN { exit !(b > 0 && d > 0 && a / b >= 0.95 * c / d) }'
	# A sampled process's first milliseconds are walked before its tables
	# arrive: how many depends on how soon the recorder runs, which on a
	# loaded or stolen-from VM varies by hundreds of ms (CI once saw a
	# third of a 2 s workload's samples walked early, as nobody, while
	# root's next to it were not).  The recording counts those walks
	# (--info); every other walk must reach the start as often as root's.
	# --info counts the early walks of every process: in a whole-system
	# recording on a busy machine they outnumbered the workload's samples
	# (1,181 of any process beside 619 of uw-gcc), so they are taken as
	# the workload's up to its incomplete stacks, no further.
	check "$what: complete share, early walks aside, >= 95 % of root's ($uk+$ue/$ut vs $rk+$re/$rt)" \
		awk -v a="$uk" -v e="$ue" -v b="$ut" -v c="$rk" -v f="$re" -v d="$rt" \
		'function min(x, y) { return x < y ? x : y }
		BEGIN { exit !(b > 0 && d > 0 && (a + min(e, b - a)) / b >= 0.95 * (c + min(f, d - c)) / d) }'
	# and the early walks are not the rule: most stacks are complete
	check "$what: complete share >= 50 % of root's ($uk/$ut vs $rk/$rt)" \
		awk -v a="$uk" -v b="$ut" -v c="$rk" -v d="$rt" 'BEGIN { exit !(b > 0 && d > 0 && a / b >= 0.5 * c / d) }'
	for f in cmp_u64 recurse_leaf thread_spin leaf_fn plt_loop; do
		check "$what: $f named as root names it" \
			sh -c "grep -q ';$f[; ]' '$2' && grep -q ';$f[; ]' '$3'"
	done
}
report() { "$BPROF_REPORT" -q -f -U "$@"; }

# --- the user's own command ---------------------------------------------
# shellcheck disable=SC2086
"$BPROF_RECORD" -q -F 499 -o "$T_DIR/root-cmd.bprof" -- "$B/uw-gcc" 0.4 $MODES
rc=0
# shellcheck disable=SC2086
as_user "$REC" -F 499 -o "$T_DIR/out/cmd.bprof" -- "$B/uw-gcc" 0.4 $MODES \
	2>"$T_DIR/cmd.err" >/dev/null || rc=$?
cat "$T_DIR/cmd.err"
check "own command: exit 0 with CAP_BPF+CAP_PERFMON" test "$rc" -eq 0
report "$T_DIR/root-cmd.bprof" >"$T_DIR/root-cmd.folded"
report "$T_DIR/out/cmd.bprof" >"$T_DIR/cmd.folded"
compare "own command" "$T_DIR/root-cmd.folded" "$T_DIR/cmd.folded" "$T_DIR/root-cmd.bprof" "$T_DIR/out/cmd.bprof"
dump "$T_DIR/out/cmd.bprof"
check "own command: no object recorded unreadable" \
	sh -c "! grep -E '^object [0-9]+ - 0x1[0-9a-f] ' '$T_DIR/out/cmd.bprof.txt' | grep -q ."
"$BPROF_REPORT" --info "$T_DIR/out/cmd.bprof" >"$T_DIR/cmd.info"
check "own command: --info says who recorded, with which capabilities" \
	grep -q "^access: *recorded as uid $USER_ID with CAP_BPF CAP_PERFMON (not root)" "$T_DIR/cmd.info"
check "own command: --info counts the objects identified by path" \
	grep -qE 'map_files: +closed: [1-9][0-9]* objects identified by path' "$T_DIR/cmd.info"
"$BPROF_REPORT" --info "$T_DIR/root-cmd.bprof" >"$T_DIR/root-cmd.info"
check "root's recording: --info says root" grep -q '^access: *recorded as root' "$T_DIR/root-cmd.info"
if ! as_user grep -qv '^0000000000000000 ' /proc/kallsyms 2>/dev/null; then
	check "own command: hidden kernel addresses are said before sampling, naming CAP_SYSLOG" \
		grep -q 'hidden.*CAP_SYSLOG' "$T_DIR/cmd.err"
fi

# started ERR: wait until the recorder writing its messages to ERR samples
# (its "Sampling at" line; start-up takes longer on a loaded host).
started() {
	for _ in $(seq 200); do
		grep -q '^Sampling at' "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "the recorder did not start in 20 s" >&2
	return 1
}

# rec_start OUT PREFIX... -- ARGS...: the recorder in the background (as
# PREFIX: env, or the user), writing OUT, until it samples.
rec_start() {
	local out=$1 pre=()
	shift
	while [ "$1" != -- ]; do
		pre+=("$1")
		shift
	done
	shift
	: >"$out.err"
	chmod 0666 "$out.err"
	"${pre[@]}" "$REC" -F 499 -o "$out" "$@" 2>"$out.err" >/dev/null &
	RPID=$!
	started "$out.err"
}
# rec_stop OUT: once the workload ($WPID) is done, end the recording (its
# exit status in $rc).
rec_stop() {
	wait "$WPID" || true
	kill -INT "$RPID" 2>/dev/null || true
	rc=0
	wait "$RPID" || rc=$?
	cat "$1.err"
}

# --- -p: one of the user's processes --------------------------------------
# pid_run OUT PREFIX...: the workload, held at a fifo until the recorder
# samples it, then exec'd in place (same pid).
pid_run() {
	local out=$1 fifo=$T_DIR/go
	shift
	rm -f "$fifo"
	mkfifo -m 0666 "$fifo"
	# shellcheck disable=SC2016,SC2086
	"$@" sh -c 'read -r _ < "$1"; shift; exec "$@"' sh "$fifo" "$B/uw-gcc" 0.4 $MODES >/dev/null &
	WPID=$!
	BG_PIDS="$BG_PIDS $WPID"
	# until the workload ends (rec_stop): it runs CPU time, longer than
	# any fixed recording on a busy host
	rec_start "$out" "$@" -- -p "$WPID" 600
	echo go >"$fifo"
	rec_stop "$out"
}
pid_run "$T_DIR/root-p.bprof" env
pid_run "$T_DIR/out/p.bprof" "${AS_USER[@]}"
check "-p own process: exit 0" test "$rc" -eq 0
report "$T_DIR/root-p.bprof" >"$T_DIR/root-p.folded"
report "$T_DIR/out/p.bprof" >"$T_DIR/p.folded"
compare "-p" "$T_DIR/root-p.folded" "$T_DIR/p.folded" "$T_DIR/root-p.bprof" "$T_DIR/out/p.bprof"

# --- the whole system, with a workload of another user (root) ---------------
# whole OUT PREFIX...: record the whole system while root runs the workload,
# from before it starts until after it ends.
whole() {
	local out=$1
	shift
	rec_start "$out" "$@" -- 600 # ended by rec_stop once the workload is done
	# shellcheck disable=SC2086
	"$B/uw-gcc" 0.8 $MODES >/dev/null &
	WPID=$!
	rec_stop "$out"
}
whole "$T_DIR/root-all.bprof" env
report -p "$WPID" "$T_DIR/root-all.bprof" >"$T_DIR/root-all.folded"
whole "$T_DIR/out/all.bprof" "${AS_USER[@]}"
check "whole system: exit 0" test "$rc" -eq 0
# one file is one object: an object the recorder first met unreadable (a
# process gone before it was read) and later found through a live process
# was once written twice, and a mapping and its history entry naming the
# two clashed - every frame of that library unknowable (CI, 73 % named)
dup_files=$("$BPROF_DUMP" "$T_DIR/out/all.bprof" | awk '$1 == "object" && $8 != 0 { print $7, $8, $6 }' | sort | uniq -d)
check "whole system: no file recorded as two objects" test -z "$dup_files"
[ -z "$dup_files" ] || echo "recorded twice (dev inode mtime): $dup_files"
report -p "$WPID" "$T_DIR/out/all.bprof" >"$T_DIR/all.folded"
compare "whole system (root's workload)" "$T_DIR/root-all.folded" "$T_DIR/all.folded" "$T_DIR/root-all.bprof" "$T_DIR/out/all.bprof"
# what the user's recording knew of the workload (for a failure's log: it
# once named 73 % of the workload's samples and completed none, twice in
# full suite runs, never alone).  Log only: with more than 30 lines, head
# exits first and the pipeline's earlier commands die of SIGPIPE, which
# pipefail would make this test's failure (seen on a busy machine)
{ "$BPROF_REPORT" --info "$T_DIR/out/all.bprof" 2>&1 |
	grep -E '^(access|unwinding|mappings|  (user stacks walked|reached|tables|frame-pointer|before their|processes without|notifications|frames of unknowable)|objects|  [0-9a-f]{40}|      symbols)' |
	grep -vE 'linux-vdso|ld-linux' | head -30 | sed 's/^/  user all.bprof: /'; } || true
"$BPROF_DUMP" "$T_DIR/out/all.bprof" 2>/dev/null | awk -v p="$WPID" '$1 == "process" && $2 == p { f = 1 } f && n++ < 12' |
	sed 's/^/  user all.bprof: /' || true

# --- refusals ---------------------------------------------------------------
# pid 1 holds capabilities the recorder lacks: its maps are closed to it
rc=0
as_user "$REC" -q -p 1 -o "$T_DIR/out/init.bprof" 1 2>"$T_DIR/init.err" || rc=$?
cat "$T_DIR/init.err"
if [ "$(stat -c %u /proc/1)" != "$USER_ID" ] && ! as_user test -r /proc/1/maps 2>/dev/null &&
	! as_user head -c1 /proc/1/maps >/dev/null 2>&1; then
	check "-p of an unreadable process: non-zero exit below 128" test "$rc" -ne 0 -a "$rc" -lt 128
	check "-p of an unreadable process: the message names CAP_SYS_PTRACE" \
		grep -q 'may not read the mappings of process 1.*CAP_SYS_PTRACE' "$T_DIR/init.err"
	check "-p of an unreadable process: no file" test ! -e "$T_DIR/out/init.bprof"
fi

# A deleted static binary: nothing else identifies it, map_files is closed
# (no CAP_CHECKPOINT_RESTORE), so the recording cannot be symbolized: an
# error, though the file is written.  With CAP_CHECKPOINT_RESTORE it is.
mkdir -p "$T_DIR/keep" && chmod 0777 "$T_DIR/keep"
cp "$W/uw-static" "$T_DIR/keep/uw-static"
chmod 0755 "$T_DIR/keep/uw-static"
for caps in cap_bpf,cap_perfmon cap_bpf,cap_perfmon,cap_checkpoint_restore; do
	cp "$T_DIR/keep/uw-static" "$T_DIR/out/gone"
	# runs until killed below: however long the recorder takes to start,
	# it samples the process
	"${AS_USER[@]}" "$T_DIR/out/gone" 60 recurse >/dev/null &
	GPID=$!
	BG_PIDS="$BG_PIDS $GPID"
	sleep 0.3
	rm "$T_DIR/out/gone"
	setcap "$caps+ep" "$REC"
	rc=0
	as_user "$REC" -q -F 499 -p "$GPID" -o "$T_DIR/out/gone-$caps.bprof" 1 2>"$T_DIR/gone.err" || rc=$?
	cat "$T_DIR/gone.err"
	kill "$GPID" 2>/dev/null || true
	wait "$GPID" || true
	report --debug-dir "$T_DIR/keep" "$T_DIR/out/gone-$caps.bprof" >"$T_DIR/gone.folded" || true
	if [ "$caps" = cap_bpf,cap_perfmon ]; then
		check "deleted binary, no map_files: exit 1" test "$rc" -eq 1
		check "deleted binary, no map_files: warning names CAP_CHECKPOINT_RESTORE" \
			grep -q 'could not be identified.*CAP_CHECKPOINT_RESTORE' "$T_DIR/gone.err"
		check "deleted binary, no map_files: error says it cannot be symbolized" \
			grep -q 'error: no sampled object could be identified' "$T_DIR/gone.err"
		check "deleted binary, no map_files: the file is still written" \
			test -s "$T_DIR/out/gone-$caps.bprof"
		"$BPROF_REPORT" --info "$T_DIR/out/gone-$caps.bprof" >"$T_DIR/gone.info"
		check "deleted binary, no map_files: --info counts it unverified, names CAP_CHECKPOINT_RESTORE" \
			grep -qE 'map_files: +closed: .*1 could not be verified.*CAP_CHECKPOINT_RESTORE' "$T_DIR/gone.info"
		check "deleted binary, no map_files: no name invented" \
			sh -c "! grep -q 'recurse_leaf' '$T_DIR/gone.folded'"
	else
		check "deleted binary with CAP_CHECKPOINT_RESTORE: exit 0" test "$rc" -eq 0
		check "deleted binary with CAP_CHECKPOINT_RESTORE: named by build-id" \
			grep -q ';recurse_leaf' "$T_DIR/gone.folded"
	fi
done
finish
