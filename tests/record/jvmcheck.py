#!/usr/bin/env python3
"""Check prof-report's folded Java stacks against a workload's known shape
(tests/record/jvm.sh).

A Java frame prints as pkg.Class.method(File.java[:line]).  For the rows
that have a frame of CLASS, the frames of CLASS (leaf last) must be a path
of the workload's call graph (--edges "a>b,b>c") from --root, with no
unnamed Java frame ([java], [unknown]) among or above them, and the native
frames must reach the thread's start (start_thread or
__libc_start_call_main).  Lines are checked against the source (--source): a
frame's line must be within its method, and a caller's must call its
callee.

Prints "key value" lines: samples, valid_pct, line_pct (frames of CLASS
with a line that is right, of all frames of CLASS), line_valid_pct (valid
samples whose every frame of CLASS has a right line), line_wrong, and the
samples of each --expect chain (a ";"-joined method path, matched as a
suffix of the row's CLASS frames).
"""
import argparse
import re
import sys

JAVA = re.compile(r'^([\w$]+(?:\.[\w$]+)*)\.([\w$<>]+)\(([\w$]+\.java)?(?::(\d+))?\)$')
# a Java frame of a class without a source file (lambdas, hidden classes)
ANYJAVA = re.compile(r'^[\w$]+(?:\.[\w$+]+)*\.[\w$<>]+(\(.*\))?$')


def extents(path, cls):
    """method -> (first line, last line) from a simple source (methods at 4
    spaces of indentation, closing brace at 4)."""
    ext, cur, start = {}, None, 0
    for n, line in enumerate(open(path), 1):
        m = re.match(r'^    (?:public |private )?static [\w\[\]<>]+ (\w+)\(', line)
        if m:
            cur, start = m.group(1), n
        elif cur and line.startswith('    }'):
            ext[cur] = (start, n)
            cur = None
    return ext


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('folded')
    ap.add_argument('--class', dest='cls', required=True)
    ap.add_argument('--root', required=True)
    ap.add_argument('--edges', required=True)
    ap.add_argument('--source', required=True)
    ap.add_argument('--expect', action='append', default=[])
    ap.add_argument('-v', action='store_true')
    a = ap.parse_args()
    edges = set(tuple(e.split('>')) for e in a.edges.split(','))
    ext = extents(a.source, a.cls)
    src = open(a.source).read().split('\n')
    total = valid = frames = line_ok = line_wrong = line_valid = 0
    expect = {e: 0 for e in a.expect}
    for row in open(a.folded):
        row = row.rstrip('\n')
        stack, _, count = row.rpartition(' ')
        if not count.isdigit():
            continue
        count = int(count)
        parts = stack.split(';')
        idx = [i for i, p in enumerate(parts)
               if (m := JAVA.match(p)) and m.group(1) == a.cls]
        if not idx:
            continue
        total += count
        path = [JAVA.match(parts[i]).group(2) for i in idx]
        ok = path[0] == a.root
        ok = ok and all((x, y) in edges for x, y in zip(path, path[1:]))
        # no unnamed or foreign frame between the first and last CLASS frame
        between = parts[idx[0]:idx[-1] + 1]
        ok = ok and all(JAVA.match(p) and JAVA.match(p).group(1) == a.cls for p in between)
        above = parts[:idx[0]]
        ok = ok and not any(p in ('[java]', '[unknown]') for p in above)
        ok = ok and any(p in ('start_thread', '__libc_start_call_main') for p in above)
        # a Java frame's caller is Java code or the JVM's own (the call
        # stub, other stubs), never a native function: one would be a
        # stale return address taken for a caller
        for x, y in zip(parts, parts[1:]):
            if JAVA.match(y) and not (ANYJAVA.match(x) or x.startswith('[jvm]')):
                ok = False
        if ok:
            valid += count
        elif a.v:
            print('invalid:', count, ';'.join(parts[-12:]), file=sys.stderr)
        all_lines = True  # every frame of CLASS in this row with a right line
        for n, i in enumerate(idx):
            m = JAVA.match(parts[i])
            frames += count
            if m.group(4) and m.group(2) in ext:
                lo, hi = ext[m.group(2)]
                ln = int(m.group(4))
                # a caller's line calls its callee; any frame's line is
                # within its method
                callee = path[n + 1] if n + 1 < len(path) else None
                if lo <= ln <= hi and (not callee or callee + '(' in src[ln - 1]):
                    line_ok += count
                else:
                    line_wrong += count
                    all_lines = False
                    if a.v:
                        print('wrong line:', count, parts[i], '->', callee, file=sys.stderr)
            else:
                all_lines = False
        if ok and all_lines:
            line_valid += count
        for e in expect:
            want = e.split(';')
            if ok and path[-len(want):] == want:
                expect[e] += count
    print('samples', total)
    print('valid_pct', f'{100.0 * valid / total:.1f}' if total else '0')
    print('line_pct', f'{100.0 * line_ok / frames:.1f}' if frames else '0')
    print('line_valid_pct', f'{100.0 * line_valid / total:.1f}' if total else '0')
    print('line_wrong', line_wrong)
    for e, n in expect.items():
        print('expect', e, n)


if __name__ == '__main__':
    main()
