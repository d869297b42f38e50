#!/usr/bin/env python3
"""house-circles.py BUILD_DIR [KNOWN_FILE]: the file-level call circles of
bprof's programs and libraries (issue 49: no two source files call each
other in a loop).  File A calls file B when A's object file leaves a
symbol undefined (nm) that B's defines; a circle is a strongly connected
set of two or more files.  The tests' and fuzzers' objects are left out.

Prints each circle as "CIRCLE: a.c b.c ..." (paths from the source root).
With KNOWN_FILE (one circle a line, the same form; # comments): exit 1 when
a circle is not listed there, or a listed one is gone (the list must shrink
as circles are untied), else 0.  Without it: exit 1 when there is any."""
import collections
import os
import subprocess
import sys


def objects(build):
    for root, _dirs, files in os.walk(build):
        rel = os.path.relpath(root, build)
        if rel.split(os.sep)[0] in ('tests', 'bpf') or 'CMakeFiles' not in rel:
            continue
        for f in files:
            if f.endswith('.o'):
                # record/CMakeFiles/prof-record.dir/offcpu/offcpu_rec.c.o
                top = rel.split(os.sep + 'CMakeFiles')[0]
                sub = rel.split('.dir', 1)[1].lstrip(os.sep) if '.dir' in rel else ''
                yield os.path.join(root, f), os.path.normpath(os.path.join(top, sub, f[:-2]))


def circles(build):
    defs, uses = collections.defaultdict(set), collections.defaultdict(set)
    for path, name in objects(build):
        out = subprocess.run(['nm', path], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            p = line.split()
            if len(p) == 3 and p[1] in 'TDBRW':
                defs[p[2]].add(name)
            elif len(p) == 2 and p[0] == 'U':
                uses[name].add(p[1])
    graph = {n: {d for s in us for d in defs.get(s, ()) if d != n} for n, us in uses.items()}
    # Tarjan's strongly connected components, iteratively
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = counter[0]; counter[0] += 1
        stack.append(root); on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter[0]; counter[0] += 1
                    stack.append(w); on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop(); on.discard(w); comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(' '.join(sorted(comp)))
    return sorted(out)


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    found = circles(sys.argv[1])
    for c in found:
        print('CIRCLE: ' + c)
    known = []
    if len(sys.argv) == 3:
        with open(sys.argv[2]) as f:
            known = [l.split('#')[0].strip() for l in f]
        known = sorted(l[len('CIRCLE: '):] if l.startswith('CIRCLE: ') else l for l in known if l)
    bad = False
    for c in found:
        if c not in known:
            print('house-circles: a new call circle: ' + c, file=sys.stderr)
            bad = True
    for c in known:
        if c not in found:
            print('house-circles: untied, take it off the list: ' + c, file=sys.stderr)
            bad = True
    if not found and not known:
        print('house-circles: no call circle')
    sys.exit(1 if bad else 0)


main()
