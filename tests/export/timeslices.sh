#!/usr/bin/env bash
# Time slices (issue 30): a workload whose phases are known in time
# (phase_one for 2 s, then phase_two for 2 s; it prints the wall-clock time
# of the switch) recorded with the default --slice; --from/--to must
# separate the phases in folded output and in pprof, over one file and over
# a --rotate directory; the heatmap page, in headless Chromium with a real
# mouse selection, must show the first phase's flame graph for the first
# cells and the second's for the last; --follow rewrites the page.
source "$BPROF_SRC/tests/e2e/lib.sh"
source "$BPROF_SRC/tests/export/lib-export.sh"
require_bpf
need_browser
OUT=${BPROF_HEATMAP_OUT:-$T_DIR}
PHASES=$BPROF_WORKLOADS/phases

"$BPROF_RECORD" -q -F 199 -o "$T_DIR/p.bprof" -- "$PHASES" 2 2 2> "$T_DIR/phases.err"
switch=$(sed -n 's/^switch_ns=//p' "$T_DIR/phases.err")
check "the workload said when it switched" test -n "$switch"
# 200 ms either side of the switch: slices are 20 ms
before=$(python3 -c "print('@%.3f' % (($switch - 200000000) / 1e9))")
after=$(python3 -c "print('@%.3f' % (($switch + 200000000) / 1e9))")
"$BPROF_DUMP" "$T_DIR/p.bprof" > "$T_DIR/p.dump"
check "the recording has 20 ms slices on every row (format 1.6)" python3 - "$T_DIR/p.dump" <<'PY'
import sys
lines = open(sys.argv[1]).read().splitlines()
assert "slices slice_ns=20000000" in " ".join(l for l in lines if l.startswith("slices ")), lines[:3]
rows = sum(1 for l in lines if l.startswith("count "))
sl = [int(l.split()[2]) for l in lines if l.startswith("countslice ")]
assert rows and len(sl) == rows, (rows, len(sl))
assert max(sl) >= 150, max(sl)  # 4 s of 20 ms slices
PY

sum_phases() { # FILE -> "one two"
	echo "$(folded_sum "$1" 'phase_one') $(folded_sum "$1" 'phase_two')"
}
"$BPROF_REPORT" -q -f "$T_DIR/p.bprof" > "$T_DIR/all.folded"
"$BPROF_REPORT" -q -f --to "$before" "$T_DIR/p.bprof" > "$T_DIR/first.folded"
"$BPROF_REPORT" -q -f --from "$after" "$T_DIR/p.bprof" > "$T_DIR/second.folded"
read -r a1 a2 <<< "$(sum_phases "$T_DIR/all.folded")"
read -r f1 f2 <<< "$(sum_phases "$T_DIR/first.folded")"
read -r s1 s2 <<< "$(sum_phases "$T_DIR/second.folded")"
echo "whole: $a1 / $a2; --to: $f1 / $f2; --from: $s1 / $s2"
check "whole recording has both phases" test "$a1" -gt 100 -a "$a2" -gt 100
check "folded --to (wall clock) keeps phase_one only" test "$f1" -gt 100 -a "$f2" -eq 0
check "folded --from (wall clock) keeps phase_two only" test "$s2" -gt 100 -a "$s1" -eq 0
# seconds from the start: the command began within a few ms of it
"$BPROF_REPORT" -q -f --from 0.3 --to 1.7 "$T_DIR/p.bprof" > "$T_DIR/rel1.folded"
"$BPROF_REPORT" -q -f --from 2.3 --to 3.7 "$T_DIR/p.bprof" > "$T_DIR/rel2.folded"
read -r r1 r2 <<< "$(sum_phases "$T_DIR/rel1.folded")"
read -r q1 q2 <<< "$(sum_phases "$T_DIR/rel2.folded")"
# (the machine may be shared: shares of the whole, not sample counts)
share() { python3 -c "import sys; print(int(100 * $1 / max(1, $2)))"; }
check "seconds 0.3-1.7 are phase_one only, about 1.4 s of 4 ($r1 of $((a1 + a2)))" \
	test "$r2" -eq 0 -a "$(share "$r1" "$((a1 + a2))")" -ge 22 -a "$(share "$r1" "$((a1 + a2))")" -le 48
check "seconds 2.3-3.7 are phase_two only ($q2 of $((a1 + a2)))" \
	test "$q1" -eq 0 -a "$(share "$q2" "$((a1 + a2))")" -ge 22 -a "$(share "$q2" "$((a1 + a2))")" -le 48

# pprof: the same split
"$BPROF_REPORT" -q --pprof "$T_DIR/first.pb.gz" --to "$before" "$T_DIR/p.bprof"
"$BPROF_REPORT" -q --pprof "$T_DIR/second.pb.gz" --from "$after" "$T_DIR/p.bprof"
python3 "$BPROF_SRC/tests/export/pprof-functions.py" --samples "$T_DIR/first.pb.gz" > "$T_DIR/first.pp"
python3 "$BPROF_SRC/tests/export/pprof-functions.py" --samples "$T_DIR/second.pb.gz" > "$T_DIR/second.pp"
check "pprof --to: phase_one's samples, no phase_two" python3 - "$T_DIR/first.pp" "$f1" <<'PY'
import sys
d = dict((l.split("\t")[0], int(l.split("\t")[1])) for l in open(sys.argv[1]))
assert d.get("phase_one") == int(sys.argv[2]) and "phase_two" not in d, d
PY
check "pprof --from: phase_two's samples, no phase_one" python3 - "$T_DIR/second.pp" "$s2" <<'PY'
import sys
d = dict((l.split("\t")[0], int(l.split("\t")[1])) for l in open(sys.argv[1]))
assert d.get("phase_two") == int(sys.argv[2]) and "phase_one" not in d, d
PY
# speedscope and the SVG take the range too
"$BPROF_REPORT" -q --svg "$T_DIR/first.svg" --to "$before" "$T_DIR/p.bprof"
check "SVG --to has no phase_two" bash -c "grep -q 'phase_one' '$T_DIR/first.svg' && ! grep -q 'phase_two' '$T_DIR/first.svg'"
"$BPROF_REPORT" -q --speedscope "$T_DIR/second.json" --from "$after" "$T_DIR/p.bprof"
check "speedscope --from has no phase_one" bash -c "grep -q 'phase_two' '$T_DIR/second.json' && ! grep -q 'phase_one' '$T_DIR/second.json'"
# --diff: each side counts seconds from its own start
"$BPROF_REPORT" -q --diff --from 0.3 --to 1.7 "$T_DIR/p.bprof" "$T_DIR/p.bprof" > "$T_DIR/diff.txt"
check "--diff --from/--to: the same phase on both sides" bash -c "grep phase_one '$T_DIR/diff.txt' | awk '{ if (\$(NF-1) != \$NF || \$NF == 0) exit 1 }' && ! grep -q phase_two '$T_DIR/diff.txt'"
check "a bad --from is a usage error" bash -c "! '$BPROF_REPORT' -q -f --from yesterday '$T_DIR/p.bprof' 2>/dev/null; test \$? -eq 0"

# the heatmap page, in Chromium: drag across the first phase's cells, then
# the second's
"$BPROF_REPORT" -q --heatmap "$OUT/heatmap.html" "$T_DIR/p.bprof"
check "the page names no network resource" bash -c "! grep -Eq '(src|href)=\"(https?:)?//' '$OUT/heatmap.html'"
node "$BPROF_SRC/tests/export/heatmap-click.js" "$OUT/heatmap.html" 0.3 1.7 '^phase_one$' "$OUT/heatmap-first.png" \
	> "$T_DIR/h1.json" || fail "heatmap-click.js (first phase): $(head -c 2000 "$T_DIR/h1.json")"
node "$BPROF_SRC/tests/export/heatmap-click.js" "$OUT/heatmap.html" 2.3 3.7 '^phase_one$' "$OUT/heatmap-second.png" \
	> "$T_DIR/h2.json" || fail "heatmap-click.js (second phase): $(head -c 2000 "$T_DIR/h2.json")"
check "heatmap: selecting the first seconds shows phase_one only, the last ones phase_two only; search; differential" \
	python3 - "$T_DIR/h1.json" "$T_DIR/h2.json" <<'PY'
import json, sys
h1, h2 = (json.load(open(p)) for p in sys.argv[1:3])
for h in (h1, h2):
    assert not h["errors"], h["errors"]
    assert not h["requests"], h["requests"]  # self-contained
    assert h["selection"].startswith("Selected "), h["selection"]
    assert h["hash"].startswith("#sel="), h["hash"]
def names(h, key="frames"):
    return {f["name"]: f for f in h[key]}
n1, n2 = names(h1), names(h2)
assert "phase_one" in n1 and "phase_two" not in n1, sorted(n1)
assert "phase_two" in n2 and "phase_one" not in n2, sorted(n2)
# about 1.4 s of the 4 s each (at most 199 Hz: fewer on a loaded machine)
assert 60 < n1["all"]["samples"] < 320, n1["all"]
assert 60 < n2["all"]["samples"] < 320, n2["all"]
assert h1["matched"] == "Matched: 100.0%", h1["matched"]
assert h2["matched"] == "Matched: 0.0%", h2["matched"]
# differential: the first phase against the rest: phase_one is more of the
# selection than of the rest (red); the rest's samples are counted
d1 = names(h1, "diffFrames")
assert d1["all"]["rest"] > d1["all"]["samples"], d1["all"]
assert d1["phase_one"]["rest"] > 0 and d1["phase_one"]["rest"] < d1["all"]["rest"] / 2, d1["phase_one"]
assert d1["spin_units"]["fill"].startswith("rgb(255,"), d1["spin_units"]
PY

# --inverted reaches the page's flame graph: the root at the top
"$BPROF_REPORT" -q --heatmap "$T_DIR/inv.html" --inverted "$T_DIR/p.bprof"
node "$BPROF_SRC/tests/export/heatmap-click.js" "$T_DIR/inv.html" 0.3 1.7 'x' "$T_DIR/inv.png" \
	> "$T_DIR/inv.json" || fail "heatmap-click.js (--inverted)"
check "heatmap --inverted: an icicle (root drawn at the top)" python3 -c "
import json, sys
r = json.load(open('$T_DIR/inv.json'))
f = {x['name']: x for x in r['frames']}
assert f['all']['y'] == 0 and f['phase_one']['y'] > f['main']['y'], f"

# a --rotate directory joins into one timeline: files of 1 s
"$BPROF_RECORD" -q -F 199 --rotate=1 -o "$T_DIR/rot" -- "$PHASES" 2 2 2> "$T_DIR/rot.err"
rswitch=$(sed -n 's/^switch_ns=//p' "$T_DIR/rot.err")
rbefore=$(python3 -c "print('@%.3f' % (($rswitch - 200000000) / 1e9))")
rafter=$(python3 -c "print('@%.3f' % (($rswitch + 200000000) / 1e9))")
nfiles=$(ls "$T_DIR/rot" | grep -c '\.bprof$')
check "--rotate=1 over 4 s wrote several files ($nfiles)" test "$nfiles" -ge 3
"$BPROF_REPORT" -q -f --to "$rbefore" "$T_DIR/rot" > "$T_DIR/rfirst.folded"
"$BPROF_REPORT" -q -f --from "$rafter" "$T_DIR/rot" > "$T_DIR/rsecond.folded"
read -r g1 g2 <<< "$(sum_phases "$T_DIR/rfirst.folded")"
read -r h1 h2 <<< "$(sum_phases "$T_DIR/rsecond.folded")"
check "directory --to: phase_one only ($g1 / $g2)" test "$g1" -gt 100 -a "$g2" -eq 0
check "directory --from: phase_two only ($h1 / $h2)" test "$h2" -gt 100 -a "$h1" -eq 0
"$BPROF_REPORT" -q --heatmap "$T_DIR/rot.html" "$T_DIR/rot"
check "the directory's heatmap is one timeline of about 4 s" python3 - "$T_DIR/rot.html" "$nfiles" <<'PY'
import json, re, sys
s = open(sys.argv[1]).read()
d = json.loads(re.search(r'<script id="data" type="application/json">(.*?)</script>', s, re.S).group(1))
assert d["files"] == int(sys.argv[2]), d["files"]
assert 180 <= d["nslots"] <= 260, d["nslots"]
PY

# --follow: the page is rewritten as files arrive, and reloads itself
rm -rf "$T_DIR/live"
"$BPROF_RECORD" -q -F 99 --rotate=1 -o "$T_DIR/live" 4 &
rec=$!
sleep 1.5
BPROF_FOLLOW_MS=300 "$BPROF_REPORT" -q --follow --heatmap "$T_DIR/live.html" "$T_DIR/live" &
fol=$!
sleep 1.5
n_early=$(python3 -c "import re,json,sys; s=open(sys.argv[1]).read(); print(json.loads(re.search(r'id=\"data\" type=\"application/json\">(.*?)</script>', s, re.S).group(1))['files'])" "$T_DIR/live.html" 2>/dev/null || echo 0)
wait "$rec"
sleep 1.5
kill -INT "$fol"
wait "$fol"; frc=$?
n_late=$(python3 -c "import re,json,sys; s=open(sys.argv[1]).read(); print(json.loads(re.search(r'id=\"data\" type=\"application/json\">(.*?)</script>', s, re.S).group(1))['files'])" "$T_DIR/live.html")
echo "--follow: $n_early files early, $n_late at the end"
check "--follow wrote the page early and rewrote it as files came ($n_early -> $n_late)" \
	test "$n_early" -ge 1 -a "$n_late" -gt "$n_early"
check "--follow ends with status 0 on SIGINT" test "$frc" -eq 0
check "the followed page reloads itself" grep -q '"follow_ms":300' "$T_DIR/live.html"
check "no temporary file left" bash -c "! ls '$T_DIR'/*.follow-tmp 2>/dev/null"

# a file without slices is taken whole, with a warning
"$BPROF_RECORD" -q -F 99 --slice=0 -o "$T_DIR/n.bprof" -- "$PHASES" 1 1 2>/dev/null
check "--slice=0 writes no SLICES section (a 1.5 or 1.4 file)" bash -c "! '$BPROF_DUMP' '$T_DIR/n.bprof' | grep -q '^slices '"
"$BPROF_REPORT" -f --from 0.5 "$T_DIR/n.bprof" > /dev/null 2> "$T_DIR/n.err"
check "a file without slices is taken whole, with a warning" grep -q "no time slices" "$T_DIR/n.err"
finish
