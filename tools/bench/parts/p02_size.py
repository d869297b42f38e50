# SPDX-License-Identifier: Apache-2.0
"""Part 2 of tools/bench/run.

Output size: .bprof vs perf.data (raw and zstd -3), perf's build-id cache.

Alone: tools/bench/run --part 1,2 [--quick] (it measures part 1's recordings).
"""
import os

from benchlib import (STATE, fmt_b, ratio, run)


def part_size(args, B, T, R):
    T.section(f"2. Output size, {args.duration} s recordings of 1a",
              ("", "bprof", "perf", "perf/bprof"))
    for hz in args.hz:
        b, p = R["rec"][hz]
        T.row(f"{hz} Hz  .bprof vs perf.data", fmt_b(b["size"]), fmt_b(p["size"]),
              ratio(p["size"], b["size"]))
        T.row(f"{hz} Hz  .bprof vs perf.data | zstd -3", fmt_b(b["size"]), fmt_b(p["zsize"]),
              ratio(p["zsize"], b["size"]))
        T.row(f"{hz} Hz  perf build-id cache (~/.debug)", "0 B (none)", fmt_b(p["cache"]), "")
        sz = run([B["synth"], "--sizes", os.path.join(STATE["tmp"], f"r{hz}.bprof")],
                 check=False).stdout.split()
        if len(sz) == 3:
            b["noksyms"] = int(sz[2])
            T.row(f"{hz} Hz  .bprof without its kallsyms snapshot ({int(sz[1])} symbols)",
                  fmt_b(int(sz[2])), fmt_b(p["size"]), ratio(p["size"], int(sz[2])))


NUM = "2"
BPF_STATS = False  # runs while kernel.bpf_stats_enabled is on


def measure(args, B, T, R):
    part_size(args, B, T, R)
