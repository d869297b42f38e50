#!/usr/bin/env python3
"""Check the JavaScript frames of a folded recording of v8work.js (or v8osr.js).

Every frame named after the script must be one of its functions, on a
line of that function (SPEC.md 6.17: the line optimized code runs, else
the function's first), called by a function the script calls it from
(the call graph below).  Prints the shares; exits 1 when a check fails.

  v8check.py SCRIPT FOLDED [--min-func PCT] [--min-line PCT]
             [--min-root PCT] [--expect A;B;C ...] [--exact]

--exact: a caller's line must be the line of its call, never its
function's first (interpreted frames carry the line they run).
"""
import argparse
import re
import sys

EDGES = {
    ("(anonymous)", "main"), ("main", "outer"), ("outer", "middle"), ("middle", "leaf"),
    ("main", "fib"), ("fib", "fib"), ("main", "alloc"), ("main", "phaseNumbers"),
    ("main", "phaseStrings"), ("phaseNumbers", "poly"), ("phaseStrings", "poly"),
    ("main", "driver"), ("driver", "chainA"), ("chainA", "chainB"), ("chainB", "chainC"),
    # v8osr.js
    ("(anonymous)", "topOsr"), ("topOsr", "midOsr"), ("midOsr", "leafOsr"),
}
FRAME = re.compile(r"^(.*) \((.*?)(?::(\d+))?\)$")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("script")
    ap.add_argument("folded")
    ap.add_argument("--min-func", type=float, default=0)
    ap.add_argument("--min-line", type=float, default=0)
    ap.add_argument("--min-root", type=float, default=0)
    ap.add_argument("--expect", action="append", default=[])
    ap.add_argument("--exact", action="store_true")
    a = ap.parse_args()
    # each function's lines: from its "function NAME(" to its closing
    # brace at column 0 (the module's function: the whole file)
    lines = {}
    with open(a.script) as f:
        text = f.read().split("\n")
    lines["(anonymous)"] = (1, len(text))
    for no, t in enumerate(text, 1):
        m = re.match(r"function (\w+)\(", t)
        if m:
            end = no
            while end <= len(text) and not text[end - 1].startswith("}"):
                end += 1
            lines[m.group(1)] = (no, end)
    base = a.script.rsplit("/", 1)[-1]
    total = func_ok = line_ok = rooted = wrong = top_gap = prologue = 0
    seen = {e: 0 for e in a.expect}
    bad = []
    with open(a.folded) as f:
        for row in f:
            row = row.rstrip("\n")
            stack, _, n = row.rpartition(" ")
            n = int(n)
            frames = stack.split(";")
            # the script's frames, and the unnamed frames among them (an
            # unnamed JavaScript frame "[js]", or an "[unknown]" pc): a
            # gap in the chain, not a wrong name
            js = []
            # an unnamed frame right above the script's last one: the
            # function it called (JIT code) left unnamed, not right
            top_unnamed = after_script = False
            for fr in frames:
                m = FRAME.match(fr)
                script = bool(m and m.group(2).endswith("/" + base))
                if after_script:
                    top_unnamed = fr in ("[js]", "[unknown]")
                after_script = script
                if script:
                    js.append((m.group(1), int(m.group(3) or 0)))
                elif fr in ("[js]", "[unknown]") and js:
                    js.append(("[js]", 0))
            while js and js[-1][0] == "[js]":
                js.pop()  # after the script's last frame: not between two
            unnamed = any(j[0] == "[js]" for j in js)
            if not js and not any(fr == "[js]" for fr in frames):
                continue
            if not any(fr.startswith("Builtins_JSEntry") for fr in frames):
                continue  # not the main thread's JavaScript
            total += n
            top_gap += n if top_unnamed else 0
            names = [j[0] for j in js]
            fok = bool(js) and not unnamed and not top_unnamed and names[0] == "(anonymous)" and \
                all((x, y) in EDGES for x, y in zip(names, names[1:]))
            # a name the graph does not allow at its place is wrong,
            # whatever else the stack lacks
            for i, (x, y) in enumerate(zip(names, names[1:])):
                if "[js]" in (x, y):
                    continue
                # the leaf named as its caller on that function's first
                # line: a sample in a callee's prologue, before it pushed
                # its frame (record/DESIGN.md "V8 frames", a known limit):
                # counted apart, not as another function's name
                if (x, y) not in EDGES and x == y and i == len(names) - 2 and \
                        y in lines and js[-1][1] in (0, lines[y][0]):
                    prologue += n
                    break
                if (x, y) not in EDGES and y != "(anonymous)":
                    wrong += n
                    at = row.find("Builtins_JSEntry")
                    bad.append(row[at:at + 1500] if at >= 0 else row[:1500])
                    break
            # a frame's line: the line it runs (optimized code, SPEC.md
            # 6.17) or its function's first; inside its function either way
            lok = fok and all(nm in lines and lines[nm][0] <= ln <= lines[nm][1] for nm, ln in js)
            # a caller's line other than its first is the call's
            for (x, lx), (y, _) in zip(js, js[1:]):
                if not lok:
                    break  # a gap ("[js]") has no lines
                first = lx == lines[x][0] or (x == "(anonymous)" and not a.exact)
                if (a.exact or not first) and y + "(" not in text[lx - 1]:
                    lok = False
            func_ok += n if fok else 0
            line_ok += n if lok else 0
            if "__libc_start_call_main" in frames:
                rooted += n
            chain = ";".join(names)
            for e in seen:
                if e in chain:
                    seen[e] += n
    if not total:
        print("no JavaScript samples")
        return 1
    pf, pl, pr = 100.0 * func_ok / total, 100.0 * line_ok / total, 100.0 * rooted / total
    print(f"js_samples {total}")
    print(f"right_by_function_pct {pf:.1f}")
    print(f"right_by_line_pct {pl:.1f}")
    print(f"reach_start_pct {pr:.1f}")
    print(f"wrong_name_samples {wrong}")
    print(f"prologue_samples {prologue}")
    print(f"unnamed_above_script_samples {top_gap}")
    for e, c in seen.items():
        print(f"expect {e!r}: {c} samples")
    for b in bad[:5]:
        print("wrong:", b)
    ok = pf >= a.min_func and pl >= a.min_line and pr >= a.min_root and wrong == 0 and \
        all(seen.values())
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
