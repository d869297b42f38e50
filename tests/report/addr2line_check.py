#!/usr/bin/env python3
"""addr2line_check.py RAW...: no frame name in a pprof export may be
contradicted by binutils' addr2line on the object it came from.

RAW is `go tool pprof -symbolize=none -raw` output of prof-report --pprof.
For every location in a user mapping whose file is present with the
recorded build-id, the innermost and the outermost function names are
compared with `addr2line -f -i -C` at the same address (the location's
address is already the looked-up one: return addresses minus one).  A
name addr2line cannot give ("??") contradicts nothing.  Names that differ
only as aliases of one symbol (glibc's __GI_/__ prefixes, .isra/.constprop
clone suffixes, Go's .abi0) are the same function.  Where addr2line
disagrees, llvm-symbolizer is asked too: binutils misreads some inline
chains (Go's runtime.preemptM inlined into preemptone comes out as
preemptone twice); a name both tools contradict is a contradiction, one
only addr2line disputes is counted and printed.  Exits 1 listing each
contradiction.
"""
import re
import subprocess
import sys
from collections import defaultdict


def build_id(path):
    out = subprocess.run(["readelf", "-n", path], capture_output=True, text=True).stdout
    m = re.search(r"Build ID: ([0-9a-f]+)", out)
    return m.group(1) if m else None


def loads(path):
    out = subprocess.run(["readelf", "-lW", path], capture_output=True, text=True).stdout
    res = []
    for line in out.splitlines():
        w = line.split()
        if w and w[0] == "LOAD":
            res.append((int(w[1], 16), int(w[2], 16), int(w[4], 16)))  # offset, vaddr, filesz
    return res


def strip_params(n):
    """'f(int) const' -> 'f'; 'operator()(int)' -> 'operator()' -> 'operator'."""
    for _ in range(2):
        n = re.sub(r"\s+const$", "", n)
        if not n.endswith(")"):
            break
        depth = 0
        for i in range(len(n) - 1, -1, -1):
            depth += n[i] == ")"
            depth -= n[i] == "("
            if depth == 0:
                n = n[:i]
                break
    return n


def last_component(n):
    """The unqualified name: after the last '::' outside <>, (), {}."""
    depth, cut = 0, 0
    for i, ch in enumerate(n):
        depth += ch in "<({"
        depth -= ch in ">)}"
        if depth == 0 and n.startswith("::", i):
            cut = i + 2
    return n[cut:]


def norm(name):
    n = re.sub(r" \[clone [^\]]*\]", "", name)           # binutils' clone notes
    n = re.sub(r" \(\.[a-z_]+\.\d+\)$", "", n)            # llvm's (.constprop.0)
    n = re.sub(r"\.(isra|constprop|part|cold|lto_priv)\.\d+.*$", "", n)
    n = re.sub(r"\.abi0$", "", n)                          # Go's assembly ABI wrappers
    # C++: qualified (symbol table) or not (DWARF's DW_AT_name, as
    # eu-addr2line prints it) name the same function
    n = last_component(strip_params(n))
    n = re.sub(r"^(__GI_|__libc_|__)+", "", n)              # glibc's internal aliases
    return n.lstrip("_")


def disagree(names, theirs):
    """Why our frames (innermost first) contradict a tool's, or None."""
    ours_in, ours_out = norm(names[0]), norm(names[-1])
    if ours_in != norm(theirs[0]) and ours_in not in map(norm, theirs):
        return f"innermost {names[0]!r}, tool says {theirs}"
    if ours_out != norm(theirs[-1]) and theirs[-1] != "??":
        return f"function {names[-1]!r}, tool says {theirs}"
    return None


def llvm_names(path, va):
    out = subprocess.run(["llvm-symbolizer-14", "--inlining", "--demangle", f"--obj={path}",
                          hex(va)], capture_output=True, text=True).stdout.splitlines()
    return [l for l in out[0::2] if l.strip()] if out else []


def parse(raw):
    maps, locs, sect, cur = {}, [], None, None
    for line in raw.splitlines():
        if line in ("Locations", "Mappings", "Samples:") or line.startswith("Samples"):
            sect = line.split()[0].rstrip(":")
            continue
        if sect == "Mappings":
            m = re.match(r"^(\d+): 0x([0-9a-f]+)/0x([0-9a-f]+)/0x([0-9a-f]+) (\S+) ?([0-9a-f]*)", line)
            if m:
                maps[m.group(1)] = (int(m.group(2), 16), int(m.group(4), 16), m.group(5), m.group(6))
        elif sect == "Locations":
            m = re.match(r"^ +\d+: 0x([0-9a-f]+) M=(\d+) ?(.*)$", line)
            if m:
                cur = [int(m.group(1), 16), m.group(2), []]
                locs.append(cur)
                fn = m.group(3).rsplit(" s=", 1)[0]
                if fn.strip():
                    cur[2].append(fn.rsplit(" ", 1)[0] if " " in fn else fn)
            elif cur is not None and line.startswith("      ") and line.strip():
                fn = line.strip().rsplit(" s=", 1)[0]
                cur[2].append(fn.rsplit(" ", 1)[0] if " " in fn else fn)
    return maps, locs


def main():
    per_obj = defaultdict(list)  # path -> [(vaddr, names)]
    skipped = defaultdict(int)
    for rawf in sys.argv[1:]:
        maps, locs = parse(open(rawf).read())
        for addr, mid, names in locs:
            if not names or mid not in maps:
                continue
            start, off, path, bid = maps[mid]
            if not path.startswith("/"):
                skipped[path] += 1
                continue
            per_obj[(path, bid)].append((addr - start + off, names))
    bad, disputed, compared = [], [], 0
    for (path, bid), items in sorted(per_obj.items()):
        try:
            if (build_id(path) or "") != bid:
                skipped[path + " (another build-id now)"] += len(items)
                continue
        except OSError:
            continue
        segs = loads(path)
        q = []
        for fo, names in items:
            va = next((fo - o + v for o, v, sz in segs if o <= fo < o + sz), None)
            if va is not None:
                q.append((va, names))
        if not q:
            continue
        out = subprocess.run(["addr2line", "-f", "-i", "-C", "-a", "-e", path],
                             input="\n".join(hex(v) for v, _ in q) + "\n",
                             capture_output=True, text=True).stdout.splitlines()
        # -a: each answer starts with the address line, then (function, file:line) pairs
        answers, cur = [], None
        for line in out:
            if re.match(r"^0x[0-9a-f]+$", line):
                cur = []
                answers.append(cur)
            elif cur is not None:
                cur.append(line)
        for (va, names), ans in zip(q, answers):
            theirs = ans[0::2]
            if not theirs or theirs[0] == "??":
                continue
            compared += 1
            why = disagree(names, theirs)
            if not why:
                continue
            second = llvm_names(path, va)
            if second and not disagree(names, second):
                disputed.append(f"{path}+{va:#x}: {why}; llvm-symbolizer agrees with us {second}")
            else:
                bad.append(f"{path}+{va:#x}: {why}; llvm-symbolizer {second}")
    print(f"addr2line check: {compared} named locations compared over {len(per_obj)} objects, "
          f"{len(bad)} contradictions, {len(disputed)} disputed by addr2line alone; "
          f"not compared: {dict(skipped)}")
    for d in disputed[:20]:
        print("addr2line alone disagrees: " + d)
    for b in bad[:40]:
        print("CONTRADICTION: " + b)
    sys.exit(1 if bad or compared == 0 else 0)


if __name__ == "__main__":
    main()
