#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Generate a large C++ program with full DWARF for the symbolization part of
tools/bench/run: FILES translation units, each with FUNCS namespaced
functions, class templates with inline members, function templates
instantiated for several types, always_inline helper chains (deep inlined
frames), libstdc++ containers and algorithms and calls across files.

Usage: gen_big.py OUTDIR [FILES] [FUNCS]
Then:  c++ -O2 -g -Wl,--build-id=sha1 OUTDIR/*.cc -o big
Deterministic (fixed seed): the same arguments give the same sources."""
import os
import random
import sys

out = sys.argv[1]
nfiles = int(sys.argv[2]) if len(sys.argv) > 2 else 300
nfn = int(sys.argv[3]) if len(sys.argv) > 3 else 40
rnd = random.Random(20261121)
os.makedirs(out, exist_ok=True)


def write(path, text):
    # keep mtimes (and so make/ninja rebuilds) stable when nothing changed
    p = os.path.join(out, path)
    try:
        with open(p) as f:
            if f.read() == text:
                return
    except OSError:
        pass
    with open(p, "w") as f:
        f.write(text)


h = ["#pragma once", "#include <cstdint>", "#include <vector>",
     "extern volatile int g_sink;"]
for f in range(nfiles):
    h.append(f"namespace bench::u{f} {{")
    for i in range(nfn):
        h.append(f"long f{i}(long x, long y);")
    h.append("}")
write("big.h", "\n".join(h) + "\n")

for f in range(nfiles):
    c = ['#include "big.h"', "#include <algorithm>", "#include <map>", "#include <vector>", "",
         f"namespace bench::u{f} {{", ""]
    # always_inline chain: h3 inlines h2 ... h0 (deep inlined frames)
    for k in range(4):
        c.append(f"static inline __attribute__((always_inline)) long h{k}(long a, long b)")
        c.append("{")
        c.append(f"\tlong r = {'h%d(a ^ b, b + %d)' % (k - 1, k) if k else 'a'};")
        c.append(f"\tif (b & {1 << k})")
        c.append(f"\t\tr = r * {rnd.randint(3, 99)} + g_sink;")
        c.append("\treturn r;")
        c.append("}")
    # a class template with inline members
    c += ["template <typename T, int K>", "struct Acc {", "\tT v{};",
          "\tinline T step(T x)", "\t{",
          f"\t\tfor (int i = 0; i < K; i++)",
          f"\t\t\tv = v * T({rnd.randint(2, 9)}) + x + T(i);",
          "\t\treturn v;", "\t}",
          "\ttemplate <typename U> inline T fold(const std::vector<U> &xs)", "\t{",
          "\t\tfor (const U &u : xs)", "\t\t\tv += T(u) * T(K);", "\t\treturn v;", "\t}",
          "};", ""]
    # a noinline function template, instantiated for several types
    c += ["template <typename T>", "__attribute__((noinline)) T tmix(T a, T b)", "{",
          "\tstd::vector<T> v;", "\tfor (int i = 0; i < 8; i++)",
          "\t\tv.push_back(a * T(i) + b);",
          "\tstd::reverse(v.begin(), v.end());",
          "\tv[0] = *std::max_element(v.begin(), v.end());",
          "\treturn v[3] + v[5];", "}", ""]
    for i in range(nfn):
        kind = rnd.randrange(4) if i else 2  # one std::map user per file
        c.append(f"long f{i}(long x, long y)")
        c.append("{")
        c.append("\tlong acc = x;")
        c.append(f"\tacc += h{rnd.randint(1, 3)}(x, y);")
        if kind == 0:
            c.append(f"\tAcc<long, {rnd.randint(1, 6)}> a;")
            c.append("\tacc += a.step(acc);")
        elif kind == 1:
            c.append(f"\tacc += (long)tmix<double>((double)x, (double)y);")
        elif kind == 2 and i == 0:
            c.append("\tstd::map<long, long> m;")
            c.append("\tfor (long j = 0; j < (y & 3); j++)")
            c.append("\t\tm[j ^ acc] = j;")
            c.append("\tacc += (long)m.size();")
        elif kind == 2:
            c.append(f"\tacc += tmix<int>((int)x, (int)acc);")
        else:
            c.append(f"\tAcc<int, {rnd.randint(1, 6)}> a;")
            c.append("\tstd::vector<short> xs(4, (short)y);")
            c.append("\tacc += a.fold(xs) + tmix<long>(x, y);")
        for _ in range(rnd.randint(1, 3)):
            tf, ti = rnd.randrange(nfiles), rnd.randrange(nfn)
            c.append(f"\tif (acc & {1 << rnd.randint(0, 12)}) acc ^= bench::u{tf}::f{ti}(y, acc);")
        c.append(f"\tfor (long j = 0; j < (y & 15); j++)")
        c.append(f"\t\tacc = h{rnd.randint(0, 3)}(acc, j) + g_sink;")
        c.append("\treturn acc;")
        c.append("}")
        c.append("")
    c.append("}")
    write(f"u{f}.cc", "\n".join(c) + "\n")

write("main.cc", '#include "big.h"\nvolatile int g_sink;\n'
      "int main(int argc, char **argv)\n{\n"
      "\t(void)argv;\n\treturn (int)(bench::u0::f0(argc, argc) & 1);\n}\n")
print(f"{out}: {nfiles} files x {nfn} functions")
