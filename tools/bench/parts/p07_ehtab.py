# SPDX-License-Identifier: Apache-2.0
"""Part 7 of tools/bench/run.

Unwind tables: every ELF object under /usr/lib/x86_64-linux-gnu and /usr/bin
through the .eh_frame table builder (rows, bytes, time, distinct rules,
failures, libc, the slowest three).

Alone: tools/bench/run --part 7 [--quick].
"""
import os

from benchlib import (fmt_b, loadavg, log, run)


# ---------------------------------------------------------------- part 7 --

def part_ehtab(args, B, T, R):
    """Unwind tables of every object on this machine, as prof-record would
    build them on the target (bench_ehtab over /usr/lib and /usr/bin)."""
    dirs = ["/usr/lib/x86_64-linux-gnu", "/usr/bin"]
    log(f"unwind tables of every object under {' '.join(dirs)} (load {loadavg()})")
    r = run([B["ehtab"]] + dirs)
    kv, libc, slow, fails = {}, None, [], []
    for line in r.stdout.splitlines():
        w = line.split()
        if w[0] == "libc":
            libc = w[1:]
        elif w[0] == "slowest":
            slow.append(w[1:])
        elif w[0] == "failure":
            fails.append(" ".join(w[1:]))
        elif len(w) == 2:
            kv[w[0]] = float(w[1])
    T.section(f"7. Unwind tables from .eh_frame: every ELF object under {' and '.join(dirs)}, "
              "built as prof-record builds them on the target", ("", "figure"))
    T.row("ELF files / with a table / no .eh_frame / failed",
          f"{kv['elf_files']:.0f} / {kv['objects']:.0f} / {kv['no_eh_frame']:.0f} / {kv['failed']:.0f}")
    T.row(".eh_frame bytes read", fmt_b(int(kv["eh_frame_bytes"])))
    T.row("rows; packed (4-byte rows + pages)",
          f"{kv['rows']:.0f}; {fmt_b(int(kv['packed_bytes']))} "
          f"({kv['packed_bytes'] / kv['eh_frame_bytes']:.2f} of .eh_frame)")
    T.row("build time, all objects (one thread)",
          f"{kv['build_ms']:.0f} ms ({kv['build_ms'] * 1e6 / max(kv['rows'], 1):.0f} ns/row)")
    T.row("distinct rules over all objects", f"{kv['distinct_rules']:.0f} (of 65536 the maps hold)")
    T.row("unexpressible rows; signal-frame FDEs", f"{kv['invalid_rows']:.0f}; {kv['signal_fdes']:.0f}")
    if libc:
        T.row(f"libc ({os.path.basename(libc[0])})",
              f"{fmt_b(int(libc[1]))} .eh_frame -> {libc[2]} rows, {fmt_b(int(libc[3]))}, "
              f"{float(libc[4]):.1f} ms")
    for w in slow:
        T.row(f"slowest: {os.path.basename(w[0])}",
              f"{fmt_b(int(w[1]))} -> {w[2]} rows, {fmt_b(int(w[3]))}, {float(w[4]):.1f} ms")
    for f in fails:
        T.row("failures", f)
    R["ehtab"] = kv


NUM = "7"
BPF_STATS = False  # runs while kernel.bpf_stats_enabled is on


def measure(args, B, T, R):
    part_ehtab(args, B, T, R)
