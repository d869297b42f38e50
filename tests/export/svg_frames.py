# The frames of a flame graph SVG, read the same way from flamegraph.pl's
# and prof-report's drawings so that tests/export/svg.sh can compare them
# (imported there from heredocs: sys.path gets $BPROF_SRC/tests/export).
import html
import re


def frames(path):
    """(name, samples, x, width, y) of each frame, sorted."""
    s = open(path).read()
    out = []
    for g in re.findall(r"<g[^>]*>(.*?)</g>", s, re.S):
        t = re.search(r"<title>(.*?)</title>", g, re.S)
        r = re.search(r'<rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)"', g)
        if not t or not r:
            continue
        m = re.match(r"(.*) \(([\d,]+) samples?, ", html.unescape(t.group(1)))
        # this flamegraph.pl turns <> into () (C++ templates); annotations dropped
        name = re.sub(r"_\[[kij]\]$", "", m.group(1)).replace("<", "(").replace(">", ")")
        out.append((name, int(m.group(2).replace(",", "")), float(r.group(1)),
                    float(r.group(3)), float(r.group(2))))
    return sorted(out)
