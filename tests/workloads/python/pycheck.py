#!/usr/bin/env python3
"""Check the Python frames of folded stacks against a script's source.

Usage: pycheck.py SCRIPT FOLDED [--names-only] [--min-valid PCT] [--expect CHAIN]...

The truth comes from SCRIPT's syntax tree, not from a list kept by hand:
- a frame "qualname (file:line)" of SCRIPT is right when qualname is a
  function of SCRIPT (or <module>) and line lies within its definition;
- a caller frame is right when its line refers to the callee by name (a
  call, or a callable passed on, as sorted(key=...)); consecutive frames
  of SCRIPT are checked so, native frames between them aside.
A sample is "valid" when all its frames of SCRIPT are right.  With
--names-only (perf -X perf's frames, "py::qualname:file"), lines are not
checked, only names and the caller/callee relation by name.
With --roots a,b: a valid sample is also "complete" when its outermost
frame of SCRIPT is one of those (the chain reaches the thread's entry).
Prints: samples, python_samples, valid, valid_pct (complete,
complete_pct), then one line per
--expect CHAIN ("a;b;c": those functions consecutive, leafward, in some
sample) with its count.  Exit 1 when valid_pct < --min-valid or an
expected chain is missing.
"""
import ast
import re
import sys


def functions(path):
    tree = ast.parse(open(path).read())
    spans = {"<module>": (1, 10**9)}
    refs = {}  # qualname -> {line: set(names)}

    def names_by_line(node):
        out = {}
        for n in ast.walk(node):
            ident = n.id if isinstance(n, ast.Name) else n.attr if isinstance(n, ast.Attribute) else None
            if ident:
                for ln in range(n.lineno, getattr(n, "end_lineno", n.lineno) + 1):
                    out.setdefault(ln, set()).add(ident)
        return out

    def visit(node, prefix):
        for ch in ast.iter_child_nodes(node):
            if isinstance(ch, (ast.FunctionDef, ast.AsyncFunctionDef)):
                q = prefix + ch.name
                first = min([ch.lineno] + [d.lineno for d in ch.decorator_list])
                spans[q] = (first, ch.end_lineno)
                refs[q] = names_by_line(ch)
                visit(ch, q + ".<locals>.")
            elif isinstance(ch, ast.ClassDef):
                visit(ch, prefix + ch.name + ".")
    visit(tree, "")
    refs["<module>"] = names_by_line(tree)
    return spans, refs


FRAME = re.compile(r"^(?P<q>.+) \((?P<f>.+?)(?::(?P<l>\d+))?\)(?:_\[py\])?$")
PERF = re.compile(r"^py::(?P<q>[^:]+):(?P<f>.+)$")


def main():
    args = sys.argv[1:]
    script, folded = args[0], args[1]
    names_only = "--names-only" in args
    min_valid = float(args[args.index("--min-valid") + 1]) if "--min-valid" in args else 0.0
    expects = [args[i + 1] for i, a in enumerate(args) if a == "--expect"]
    roots = set(args[args.index("--roots") + 1].split(",")) if "--roots" in args else set()
    base = script.rsplit("/", 1)[-1]
    spans, refs = functions(script)
    total = pys = valid = complete = 0
    seen = {e: 0 for e in expects}
    bad = {}
    for line in open(folded, errors="replace"):
        line = line.rstrip("\n")
        if not line:
            continue
        stack, _, count = line.rpartition(" ")
        n = int(float(count))
        total += n
        frames = []  # (qualname, line or None) of SCRIPT, root first
        for fr in stack.split(";"):
            m = (PERF if names_only else FRAME).match(fr)
            if not m or m.group("f").rsplit("/", 1)[-1] != base:
                continue
            ln = None if names_only or not m.group("l") else int(m.group("l"))
            frames.append((m.group("q"), ln))
        if not frames:
            continue
        pys += n
        ok = True
        for i, (q, ln) in enumerate(frames):
            if q not in spans or (not names_only and (ln is None or not spans[q][0] <= ln <= spans[q][1])):
                ok = False
                break
            if i + 1 < len(frames):
                callee = frames[i + 1][0].rsplit(".", 1)[-1]
                if names_only:
                    if not any(callee in s for s in refs.get(q, {}).values()):
                        ok = False
                        break
                elif callee not in refs.get(q, {}).get(ln, set()):
                    ok = False
                    break
        if ok:
            valid += n
            if frames[0][0] in roots:
                complete += n
        else:
            bad[stack] = bad.get(stack, 0) + n
        names = [q for q, _ in frames]
        for e in expects:
            want = e.split(";")
            if any(names[i:i + len(want)] == want for i in range(len(names))):
                seen[e] += n
    pct = 100.0 * valid / pys if pys else 0.0
    print(f"samples {total}\npython_samples {pys}\nvalid {valid}\nvalid_pct {pct:.1f}")
    if roots:
        print(f"complete {complete}\ncomplete_pct {100.0 * complete / pys if pys else 0.0:.1f}")
    for e in expects:
        print(f"chain {seen[e]} {e}")
    for st, n in sorted(bad.items(), key=lambda x: -x[1])[:5]:
        print(f"invalid {n} {st}", file=sys.stderr)
    if pct < min_valid or any(v == 0 for v in seen.values()) or not pys:
        sys.exit(1)


if __name__ == "__main__":
    main()
