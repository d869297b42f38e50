#!/usr/bin/env python3
"""Generate a mid-size C program for bench_sym: many translation units,
static inline chains, loops and switches, calls across files.
Usage: gen.py OUTDIR [FILES] [FUNCS_PER_FILE]; then build with
  cc -O2 -g -Wl,--build-id OUTDIR/*.c -o big"""
import os, random, sys

out = sys.argv[1]
nfiles = int(sys.argv[2]) if len(sys.argv) > 2 else 200
nfn = int(sys.argv[3]) if len(sys.argv) > 3 else 40
rnd = random.Random(42)
os.makedirs(out, exist_ok=True)
with open(os.path.join(out, "big.h"), "w") as h:
    h.write("extern volatile int g_sink;\n")
    for f in range(nfiles):
        for i in range(nfn):
            h.write(f"int f{f}_{i}(int x, int y);\n")
for f in range(nfiles):
    with open(os.path.join(out, f"u{f}.c"), "w") as c:
        c.write('#include "big.h"\n')
        for k in range(6):
            c.write(f"static inline __attribute__((always_inline)) int h{k}(int a, int b)\n{{\n")
            if k > 0:
                c.write(f"\tint r = h{k-1}(a ^ b, b + {k});\n")
            else:
                c.write("\tint r = a;\n")
            c.write(f"\tfor (int i = 0; i < (b & 7); i++)\n\t\tr = r * {rnd.randint(3, 99)} + i + g_sink;\n\treturn r;\n}}\n")
        for i in range(nfn):
            c.write(f"int f{f}_{i}(int x, int y)\n{{\n\tint acc = x;\n")
            c.write("\tswitch ((x ^ y) & 7) {\n")
            for case in range(8):
                c.write(f"\tcase {case}: acc += h{rnd.randint(0, 5)}(x + {case}, y); break;\n")
            c.write("\t}\n")
            for _ in range(rnd.randint(1, 4)):
                tf, ti = rnd.randrange(nfiles), rnd.randrange(nfn)
                c.write(f"\tif (acc & {1 << rnd.randint(0, 12)}) acc ^= f{tf}_{ti}(y, acc);\n")
            c.write(f"\tfor (int j = 0; j < (y & 15); j++)\n\t\tacc = h{rnd.randint(0, 5)}(acc, j) + g_sink;\n")
            c.write("\treturn acc;\n}\n")
with open(os.path.join(out, "main.c"), "w") as c:
    c.write('#include "big.h"\nvolatile int g_sink;\nint main(int argc, char **argv)\n{\n\treturn f0_0(argc, argc) & 1;\n}\n')
