#!/usr/bin/env bash
# --svg and --diff --svg: flame graphs drawn by prof-report itself, checked
# in a real browser (Debian's Chromium, headless: screenshot; playwright-core
# for hover, click-to-zoom and search) and against what flamegraph.pl draws
# for the same folded stacks (same frames, samples and widths), also as an
# icicle (--inverted) and with frames left out (--min-width).
source "$BPROF_SRC/tests/e2e/lib.sh"
source "$BPROF_SRC/tests/export/lib-export.sh"
require_bpf
FLAMEGRAPH=/usr/share/perl5/Devel/NYTProf/flamegraph.pl
[ -r "$FLAMEGRAPH" ] || skip "flamegraph.pl missing (libdevel-nytprof-perl)"
need_browser
OUT=${BPROF_SVG_OUT:-$T_DIR}

"$BPROF_RECORD" -q -F 499 -o "$T_DIR/r.bprof" -- "$BPROF_WORKLOADS/ratio" 3
"$BPROF_RECORD" -q -F 499 -o "$T_DIR/d.bprof" -- "$BPROF_WORKLOADS/demo" 3
"$BPROF_REPORT" -q --svg "$T_DIR/r.svg" "$T_DIR/r.bprof"
"$BPROF_REPORT" -q --svg "$OUT/demo.svg" "$T_DIR/d.bprof"

check "well-formed XML" python3 -c "import xml.dom.minidom,sys; [xml.dom.minidom.parse(f) for f in sys.argv[1:]]" \
	"$T_DIR/r.svg" "$OUT/demo.svg"

# headless Chromium renders it
chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
	--disable-background-networking --disable-component-update --disable-sync \
	--user-data-dir="$(mktemp -d "$T_DIR/chr.XXXX")" --screenshot="$OUT/demo-headless.png" \
	--window-size=1200,800 "$OUT/demo.svg" > "$T_DIR/chr.log" 2>&1 || true
check "headless chromium screenshot of the demo flame graph" test -s "$OUT/demo-headless.png"

# hover, click to zoom, search, reset
node "$BPROF_SRC/tests/export/svg-click.js" "$T_DIR/r.svg" func_a "$OUT/ratio-before.png" \
	"$OUT/ratio-zoomed.png" > "$T_DIR/click.json" || fail "svg-click.js: $(cat "$T_DIR/click.json")"
cat "$T_DIR/click.json"
check "no script errors, hover shows count and share; zoom makes func_a full width, hides others; search; reset" \
	python3 - "$T_DIR/click.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert not r["errors"], r["errors"]
assert r["details"].startswith("func_a (") and "samples" in r["details"] and "%" in r["details"], r["details"]
assert r["before"]["w"] < 0.5 * r["fullWidth"], r["before"]
assert abs(r["after"]["w"] - r["fullWidth"]) < 0.2, (r["after"], r["fullWidth"])
assert r["after"]["text"] == "func_a", r["after"]
assert r["shown1"] < r["shown0"], (r["shown0"], r["shown1"])
assert r["shown2"] == r["shown0"], (r["shown0"], r["shown2"])
m = float(r["matched"].split(":")[1].strip().rstrip("%"))
assert 65 <= m <= 85, r["matched"]
PY
check "zoomed screenshot taken" test -s "$OUT/ratio-zoomed.png"

# the same frames, samples and geometry as flamegraph.pl for the same folded input
"$BPROF_REPORT" -q -f -a "$T_DIR/d.bprof" > "$T_DIR/d.folded"
perl "$FLAMEGRAPH" "$T_DIR/d.folded" > "$T_DIR/fg.svg"
check "same frame set, samples and widths as flamegraph.pl (within rounding)" \
	python3 - "$T_DIR/fg.svg" "$OUT/demo.svg" <<'PY'
import os, sys
sys.path.insert(0, os.environ["BPROF_SRC"] + "/tests/export")
from svg_frames import frames
a, b = frames(sys.argv[1]), frames(sys.argv[2])
print(len(a), "frames from flamegraph.pl,", len(b), "from prof-report")
assert [(n, c) for n, c, *_ in a] == [(n, c) for n, c, *_ in b], set(a) ^ set(b)
for (n, c, x1, w1, _), (_, _, x2, w2, _) in zip(a, b):
    assert abs(x1 - x2) <= 0.11 and abs(w1 - w2) <= 0.11, (n, c, x1, w1, x2, w2)
PY

check "frame kinds: kernel, user (and inlined) frames classified" python3 - "$OUT/demo.svg" <<'PY'
import re, sys
s = open(sys.argv[1]).read()
kinds = set(re.findall(r'data-kind="(.)"', s))
assert {"u", "k"} <= kinds, kinds
fills = {}
for k, f in re.findall(r'data-kind="(.)".*?fill="(rgb\([^)]*\))"', s):
    fills.setdefault(k, set()).add(f)
# kernel hues (lavender blue: b high) never collide with user (hot: b low)
assert all(int(f[4:-1].split(",")[2]) >= 230 for f in fills["k"]), fills["k"]
assert all(int(f[4:-1].split(",")[2]) <= 55 for f in fills["u"]), fills["u"]
PY

# views (issue 30): --inverted draws what flamegraph.pl --inverted draws (an
# icicle: the same frames and widths, each frame below its parent, "Icicle
# Graph"); --min-width=PX leaves out what flamegraph.pl --minwidth PX leaves
# out, and the title counts the frames left out
# the fractional width: a half pixel step above the narrowest frame's, so
# that some frame is left out (2.5 px did on an idle machine; a busy one
# gives the demo fewer samples, hence wider frames, and left none out)
half=$(python3 -c "
import os, sys
sys.path.insert(0, os.environ['BPROF_SRC'] + '/tests/export')
from svg_frames import frames
w = min(w for _, _, _, w, _ in frames(sys.argv[1]))
print('%g' % (int(w * 2) / 2 + 0.5))" "$OUT/demo.svg")
echo "narrowest frame of the demo's graph under $half px"
for view in "--inverted:--inverted" "--min-width=4:--minwidth 4" "--inverted --min-width=$half:--inverted --minwidth $half"; do
	ours=${view%%:*} theirs=${view#*:}
	# shellcheck disable=SC2086 # options are words
	"$BPROF_REPORT" -q --svg "$T_DIR/view.svg" $ours "$T_DIR/d.bprof"
	# shellcheck disable=SC2086
	perl "$FLAMEGRAPH" $theirs "$T_DIR/d.folded" > "$T_DIR/fgview.svg"
	check "$ours: same frames and widths as flamegraph.pl $theirs; orientation; omitted frames counted in the title" \
		python3 - "$T_DIR/fgview.svg" "$T_DIR/view.svg" "$OUT/demo.svg" "$ours" <<'PY'
import os, re, sys
sys.path.insert(0, os.environ["BPROF_SRC"] + "/tests/export")
from svg_frames import frames
theirs, ours, full, opts = frames(sys.argv[1]), frames(sys.argv[2]), frames(sys.argv[3]), sys.argv[4]
print(len(theirs), "frames from flamegraph.pl,", len(ours), "from prof-report,", len(full), "in the whole graph")
assert [(n, c) for n, c, *_ in theirs] == [(n, c) for n, c, *_ in ours], set(theirs) ^ set(ours)
for (n, c, x1, w1, _), (_, _, x2, w2, _) in zip(theirs, ours):
    assert abs(x1 - x2) <= 0.11 and abs(w1 - w2) <= 0.11, (n, c, x1, w1, x2, w2)
svg = open(sys.argv[2]).read()
title = re.search(r'<text id="title"[^>]*>([^<]*)<', svg).group(1)
print("title:", title)
y = {n: yy for n, _, _, _, yy in ours}
if "--inverted" in opts:
    assert title.startswith("Icicle Graph"), title
    assert y["all"] < min(v for n, v in y.items() if n != "all"), "the root is not at the top"
else:
    assert title.startswith("Flame Graph"), title
    assert y["all"] > max(v for n, v in y.items() if n != "all"), "the root is not at the bottom"
m = re.search(r"--min-width=([\d.]+)", opts)
if m:
    dropped = len(full) - len(ours)
    assert dropped > 0, "the demo should have frames narrower than %s px" % m.group(1)
    assert all(w >= float(m.group(1)) - 0.05 for _, _, _, w, _ in ours)
    assert title.endswith("(%d frames under %s px not drawn)" % (dropped, m.group(1))), (title, dropped)
    assert 'data-omitted="%d"' % dropped in svg
PY
done
"$BPROF_REPORT" -q --svg "$OUT/ratio-icicle.svg" --inverted "$T_DIR/r.bprof"
node "$BPROF_SRC/tests/export/svg-click.js" "$OUT/ratio-icicle.svg" func_a "$OUT/icicle-before.png" \
	"$OUT/icicle-zoomed.png" > "$T_DIR/click3.json" || fail "svg-click.js --inverted: $(cat "$T_DIR/click3.json")"
check "--inverted: the icicle zooms, hovers and searches in the browser" python3 - "$T_DIR/click3.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert not r["errors"], r["errors"]
assert r["details"].startswith("func_a ("), r["details"]
assert abs(r["after"]["w"] - r["fullWidth"]) < 0.2, r
assert r["shown1"] < r["shown0"] and r["shown2"] == r["shown0"], r
assert r["matched"].startswith("Matched: "), r["matched"]
PY
check "--inverted/--min-width without --svg: a usage error" \
	bash -c "'$BPROF_REPORT' -q -f --inverted '$T_DIR/r.bprof' > /dev/null 2>&1; test \$? = 2"
check "--min-width=garbage: a usage error" \
	bash -c "'$BPROF_REPORT' -q --svg /dev/null --min-width=nan '$T_DIR/r.bprof' 2> /dev/null; test \$? = 2"

# differential: two recordings whose shares are exact (made with the format
# library: main->func_a 100 then 300 samples, main->func_b 300 then 100), so
# that func_a must be red (its share grew) and func_b blue (it shrank).
MKREC=$BPROF_BUILD/tests/hardening/bprof-mkrec
"$MKREC" jit-split "$T_DIR/d1.bprof" 100 300
"$MKREC" jit-split "$T_DIR/d2.bprof" 300 100
"$BPROF_REPORT" -q --diff -n --svg "$OUT/diff.svg" "$T_DIR/d1.bprof" "$T_DIR/d2.bprof"
check "differential flame graph: well-formed, func_a red, func_b blue" python3 - "$OUT/diff.svg" <<'PY'
import re, sys, xml.dom.minidom
xml.dom.minidom.parse(sys.argv[1])
s = open(sys.argv[1]).read()
def fill(name):
    # the <g> of a frame: its title names it, its rect carries the fill
    m = re.search(r'<title>' + name + r'[ <(].*?fill="rgb\((\d+),(\d+),(\d+)\)"', s, re.S)
    assert m, name
    return tuple(int(x) for x in m.groups())
a, b = fill("func_a"), fill("func_b")
assert a[0] == 255 and a[1] == a[2] and a[1] < 255, ("func_a not red", a)
assert b[2] == 255 and b[0] == b[1] and b[0] < 255, ("func_b not blue", b)
assert "before" in s
PY
node "$BPROF_SRC/tests/export/svg-click.js" "$OUT/diff.svg" func_b "$OUT/diff-before.png" \
	"$OUT/diff-zoomed.png" > "$T_DIR/click2.json" || fail "svg-click.js diff: $(cat "$T_DIR/click2.json")"
check "differential graph zooms in the browser" python3 -c "
import json,sys; r=json.load(open('$T_DIR/click2.json')); assert not r['errors']; assert abs(r['after']['w']-r['fullWidth'])<0.2, r"
finish
