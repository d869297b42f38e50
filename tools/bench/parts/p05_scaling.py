# SPDX-License-Identifier: Apache-2.0
"""Part 5 of tools/bench/run.

Report-time scaling: 1, 10, 100 merged recordings and synthetic recordings
of 10,000 and 100,000 unique stacks.

Alone: tools/bench/run --part 1,5 [--quick] (part 1's recordings, part 4's binary: part 4 runs too).
"""
import os
import shutil

from benchlib import (STATE, fmt_kib, fmt_s, loadavg, log, med, run, timed)


def part_scaling(args, B, T, R):
    tmp = STATE["tmp"]
    T.section("5. prof-report -f scaling: merged recordings and synthetic unique stacks "
              "(wall, peak RSS)",
              ("", "files", "stacks", "unique addresses", "samples", "prof-report -f", "peak RSS"))
    base = os.path.join(tmp, f"r{args.scale_hz}.bprof")
    cases = []
    for k in args.copies:
        files = []
        for i in range(k):
            dst = os.path.join(tmp, f"copy{i}.bprof")
            if not os.path.exists(dst):
                shutil.copyfile(base, dst)
            files.append(dst)
        cases.append((f"{k} x the {args.scale_hz} Hz recording", files))
    distinct = [os.path.join(tmp, f"r{hz}.bprof") for hz in args.hz]
    cases.append((f"{len(distinct)} distinct recordings ({'/'.join(map(str, args.hz))} Hz)",
                  distinct))
    binp, bid, addrs = R["big"]
    pool = os.path.join(tmp, "pool.txt")
    with open(pool, "w") as f:
        f.writelines(f"{o:#x}\n" for _, o in addrs)
    for ns in args.synth:
        sp = os.path.join(tmp, f"synth{ns}.bprof")
        run([B["synth"], sp, binp, bid, pool, str(ns), "12"])
        cases.append((f"synthetic, {ns} unique stacks x 12 frames", [sp]))
    R["scale"] = []
    for label, files in cases:
        st = run([B["synth"], "--stats"] + files).stdout.split()
        log(f"scaling: {label} (load {loadavg()})")
        runs = [timed([B["prof-report"], "-f", "-q", "--no-cache"] + files,
                      stdout=os.path.join(tmp, "out.scale"))
                for _ in range(1 if "synthetic" in label else 3)]
        w, m = med([r[0] for r in runs]), max(r[2] for r in runs)
        R["scale"].append((label, int(st[1]), int(st[2]), w))
        T.row(label, st[0], st[1], st[2], st[3], fmt_s(w), fmt_kib(m))
    R["load"].append(("scaling", loadavg()))


NUM = "5"
BPF_STATS = False  # runs while kernel.bpf_stats_enabled is on


def measure(args, B, T, R):
    part_scaling(args, B, T, R)
