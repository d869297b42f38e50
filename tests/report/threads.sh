#!/usr/bin/env bash
# prof-record --per-thread and prof-report --threads (issue 30): the
# threads workload runs two named threads of one process, "alpha" in
# burn_alpha and "beta" in burn_beta (beta renames itself "gamma" halfway).
# - --threads puts "NAME (tid TID)" under the process frame in folded,
#   multi-line, pprof (read back by go tool pprof), speedscope and SVG
#   output; the process frame is the process's name ("threads"), not a
#   thread's; alpha's and beta's samples are apart, each in its function.
# - A renamed thread: its rows keep the name it had when sampled, one tid.
# - Totals are those of the report without --threads.
# - A recording without per-thread counts: --threads fails with a message
#   naming the file and the option to record with.
source "$BPROF_SRC/tests/e2e/lib.sh"
source "$BPROF_SRC/tests/export/lib-export.sh"
require_bpf

sum() { awk -v re="$2" '$0 ~ re { s += $NF } END { print s + 0 }' "$1"; }

"$BPROF_RECORD" -q -F 199 --per-thread -o "$T_DIR/t.bprof" -- "$BPROF_WORKLOADS/threads" 3 rename
"$BPROF_REPORT" -q -f --threads "$T_DIR/t.bprof" > "$T_DIR/t.folded"
"$BPROF_REPORT" -q -f "$T_DIR/t.bprof" > "$T_DIR/plain.folded"
cut -d';' -f1-2 "$T_DIR/t.folded" | sort | uniq -c

atid=$(sed -n 's/^threads;alpha (tid \([0-9]*\));.*/\1/p' "$T_DIR/t.folded" | sort -u)
btid=$(sed -n 's/^threads;beta (tid \([0-9]*\));.*/\1/p' "$T_DIR/t.folded" | sort -u)
gtid=$(sed -n 's/^threads;gamma (tid \([0-9]*\));.*/\1/p' "$T_DIR/t.folded" | sort -u)
echo "alpha tid '$atid', beta tid '$btid', gamma tid '$gtid'"
check "one tid for alpha, one for beta, and they differ" \
	test -n "$atid" -a -n "$btid" -a "$(echo "$atid" | wc -l)" = 1 -a "$(echo "$btid" | wc -l)" = 1 -a "$atid" != "$btid"
check "beta renamed itself gamma: gamma's rows have beta's tid" test "$gtid" = "$btid"
check "every line of the process has a thread frame under the process frame" \
	awk '$0 ~ /^threads;/ && $0 !~ /^threads;[^;]+ \(tid [0-9]+\);/ { exit 1 }' "$T_DIR/t.folded"
alpha=$(sum "$T_DIR/t.folded" "^threads;alpha \\(tid $atid\\);")
alpha_fn=$(sum "$T_DIR/t.folded" "^threads;alpha \\(tid $atid\\);.*;burn_alpha(;| )")
beta=$(sum "$T_DIR/t.folded" "^threads;(beta|gamma) \\(tid $btid\\);")
beta_fn=$(sum "$T_DIR/t.folded" "^threads;(beta|gamma) \\(tid $btid\\);.*;burn_beta(;| )")
echo "alpha $alpha ($alpha_fn in burn_alpha), beta/gamma $beta ($beta_fn in burn_beta)"
check "alpha's samples: burn_alpha, never burn_beta" \
	test "$alpha" -gt 50 -a "$alpha_fn" -ge $((alpha * 95 / 100)) -a \
	"$(sum "$T_DIR/t.folded" "^threads;alpha .*burn_beta")" -eq 0
check "beta's samples: burn_beta, never burn_alpha" \
	test "$beta" -gt 50 -a "$beta_fn" -ge $((beta * 95 / 100)) -a \
	"$(sum "$T_DIR/t.folded" "^threads;(beta|gamma) .*burn_alpha")" -eq 0
check "both names of the renamed thread sampled" \
	test "$(sum "$T_DIR/t.folded" '^threads;beta ')" -gt 0 -a "$(sum "$T_DIR/t.folded" '^threads;gamma ')" -gt 0
check "--threads keeps the total" test "$(sum "$T_DIR/t.folded" .)" -eq "$(sum "$T_DIR/plain.folded" .)"
check "without --threads: the thread's name is the first frame, as before" \
	grep -q '^alpha;.*burn_alpha' "$T_DIR/plain.folded"

# multi-line: the thread's line just above the process's
"$BPROF_REPORT" -q --threads "$T_DIR/t.bprof" > "$T_DIR/t.txt"
above() { grep -A1 -E "^    alpha \\(tid $atid\\)$" "$T_DIR/t.txt" > "$T_DIR/above"; grep -qE '^    -  +threads \([0-9]+\)$' "$T_DIR/above"; }
check "multi-line: 'alpha (tid $atid)' above '- threads (PID)'" above

# diff of a recording against itself: the same lines, thread frames in them
"$BPROF_REPORT" -q --threads --diff "$T_DIR/t.bprof" "$T_DIR/t.bprof" > "$T_DIR/t.diff"
check "--diff: lines carry the thread frame" grep -qE "^threads;alpha \\(tid $atid\\);.* ([0-9]+) \\1$" "$T_DIR/t.diff"

# pprof, read back by go tool pprof: the thread and the process are the
# two root frames of each sample
if command -v go >/dev/null 2>&1; then
	export HOME=${HOME:-/root} GOFLAGS=-mod=mod GOTOOLCHAIN=local PPROF_TMPDIR=$T_DIR/pprof-tmp
	"$BPROF_REPORT" -q --threads --pprof "$T_DIR/t.pb.gz" "$T_DIR/t.bprof"
	go tool pprof -symbolize=none -sample_index=samples -top -nodecount=1000 -nodefraction=0 \
		-edgefraction=0 "$T_DIR/t.pb.gz" > "$T_DIR/top" 2>&1 || fail "go tool pprof -top: $(cat "$T_DIR/top")"
	cum() { awk -v f="$1" '{ n = $6; for (i = 7; i <= NF; i++) n = n " " $i } n == f && NF >= 6 { print $4 }' "$T_DIR/top"; }
	check "pprof: alpha (tid $atid) = folded ($(cum "alpha (tid $atid)") = $alpha)" test "$(cum "alpha (tid $atid)")" = "$alpha"
	check "pprof: the process frame 'threads' holds every sample" test "$(cum threads)" = "$(sum "$T_DIR/t.folded" '^threads;')"
	go tool pprof -symbolize=none -traces "$T_DIR/t.pb.gz" > "$T_DIR/traces" 2>&1
	check "pprof: each trace ends in a thread frame then the process frame; burn_alpha only under alpha" python3 - "$T_DIR/traces" "$atid" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
traces = [t for t in text.split("-----------+") if re.search(r"^\s+[0-9.]+m?s ", t, re.M)]
assert traces, "no traces"
seen = 0
for t in traces:
    frames = [l.strip() for l in t.splitlines() if l.startswith("             ") or re.match(r"^\s+[0-9.]+m?s ", l)]
    frames = [re.sub(r"^[0-9.]+m?s\s+", "", f) for f in frames]
    assert frames[-1] == "threads", frames
    assert re.fullmatch(r".+ \(tid \d+\)", frames[-2]), frames
    if "burn_alpha" in frames:
        assert frames[-2] == "alpha (tid %s)" % sys.argv[2], frames
        seen += 1
assert seen, "no burn_alpha trace"
PY
else
	fail "go not installed (golang-go): pprof not checked"
fi

# speedscope: one profile named after the process, threads at the root
"$BPROF_REPORT" -q --threads --speedscope "$T_DIR/t.json" "$T_DIR/t.bprof"
check "speedscope: profile 'threads (PID)', every sample rooted in a thread frame, alpha's in burn_alpha" \
	python3 - "$T_DIR/t.json" "$atid" <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))
fr = d["shared"]["frames"]
p = [p for p in d["profiles"] if p["name"].startswith("threads (")]
assert len(p) == 1, [q["name"] for q in d["profiles"]]
for s in p[0]["samples"]:
    root = fr[s[0]]["name"]
    assert re.fullmatch(r".+ \(tid \d+\)", root), root
    names = [fr[i]["name"] for i in s]
    if "burn_alpha" in names:
        assert root == "alpha (tid %s)" % sys.argv[2], names
PY

# SVG: the thread frames are drawn
"$BPROF_REPORT" -q --threads --svg "$T_DIR/t.svg" "$T_DIR/t.bprof"
check "svg: a frame 'alpha (tid $atid)', drawn as a thread (grey)" \
	grep -q "data-kind=\"t\" data-name=\"alpha (tid $atid)\"" "$T_DIR/t.svg"

# off-CPU rows are per thread too: the main thread blocks in pthread_join
# all along, under its own thread frame
"$BPROF_RECORD" -q -F 99 --per-thread --off-cpu -o "$T_DIR/off.bprof" -- "$BPROF_WORKLOADS/threads" 2
"$BPROF_REPORT" -q -f --threads --off-cpu "$T_DIR/off.bprof" > "$T_DIR/off.folded"
mainoff=$(sum "$T_DIR/off.folded" '^threads;threads \(tid [0-9]+\);.*pthread.*join.*\[off-cpu:S\] [0-9]+$')
echo "main thread's off-CPU samples in pthread_join: $mainoff"
check "--off-cpu: the main thread's blocked samples under its own thread frame" test "$mainoff" -gt 100
check "--off-cpu: the main thread's rows have one tid" python3 - "$T_DIR/off.folded" <<'PY'
import re, sys
tids = {m.group(1) for m in re.finditer(r"^threads;threads \(tid (\d+)\);", open(sys.argv[1]).read(), re.M)}
assert len(tids) == 1, tids
PY

# a recording made without --per-thread
"$BPROF_RECORD" -q -F 99 -o "$T_DIR/plain.bprof" -- "$BPROF_WORKLOADS/threads" 1
check "a recording without per-thread counts: --threads fails" \
	bash -c "! '$BPROF_REPORT' -q -f --threads '$T_DIR/plain.bprof' > /dev/null 2> '$T_DIR/err'"
cat "$T_DIR/err"
check "... saying which file and what to record with" \
	grep -q "plain.bprof: recorded without per-thread counts: --threads needs a recording made with prof-record --per-thread" "$T_DIR/err"
check "... also among several files (merged)" \
	bash -c "! '$BPROF_REPORT' -q -f --threads '$T_DIR/t.bprof' '$T_DIR/plain.bprof' > /dev/null 2>&1"
check "... and for the exports" \
	bash -c "! '$BPROF_REPORT' -q --threads --pprof '$T_DIR/x.pb.gz' '$T_DIR/plain.bprof' 2> /dev/null"
finish
