# SPDX-License-Identifier: Apache-2.0
"""Part 10 of tools/bench/run.

Continuous recording: prof-record --rotate=10 over 60 s at 99 Hz (--quick:
--rotate=2 over 8 s) beside one prof-record file and perf record -g -a of
the same 60 s, all three at once on the demo load: CPU, files, and the
samples of the rotating run against the kernel's own count and the single
file's.

Alone: tools/bench/run --part 10 [--quick].
"""
import os
import re
import shutil
import subprocess

from benchlib import (STATE, fmt_s, loadavg, log, perf_env, ratio, spawn, start_load, stop, wait4)


# ---------------------------------------------------------------- part 10 --

def part_rotate(args, B, T, R):
    """--rotate against one file and perf, recording the same seconds at
    once: what continuous recording costs and whether its boundaries lose
    samples (the kernel counts every sample it counted; the files must hold
    them all)."""
    tmp = STATE["tmp"]
    secs, every = (8, 2) if args.quick else (60, 10)
    d = os.path.join(tmp, "rotate")
    single = os.path.join(tmp, "rot-single.bprof")
    pdata = os.path.join(tmp, "rot-perf.data")
    home = os.path.join(tmp, "home-rot")
    log(f"rotate: --rotate={every} over {secs} s beside one file and perf (load {loadavg()})")
    load = start_load(B, secs + 15)
    logs = {k: open(os.path.join(tmp, f"rot-{k}.log"), "w") for k in ("rot", "one", "perf")}
    procs = {
        "rot": spawn([B["prof-record"], "-v", "-F", "99", f"--rotate={every}", "-o", d, str(secs)],
                     stdout=subprocess.DEVNULL, stderr=logs["rot"]),
        "one": spawn([B["prof-record"], "-F", "99", "-o", single, str(secs)],
                     stdout=subprocess.DEVNULL, stderr=logs["one"]),
        "perf": spawn(["perf", "record", "-q", "-e", "cpu-clock", "-g", "-a", "-F", "99", "-o",
                       pdata, "--", "sleep", str(secs)], stdout=subprocess.DEVNULL,
                      stderr=logs["perf"], env=perf_env(home)),
    }
    res = {}
    for k, p in procs.items():
        code, cpu, _, _ = wait4(p)
        logs[k].close()
        text = open(logs[k].name).read()
        if code != 0:
            log(f"  ! {k}: exit {code}: {text[-300:]}")
        res[k] = (cpu, text)
    stop(load)
    shutil.rmtree(home, ignore_errors=True)
    files = sorted(f for f in os.listdir(d) if f.endswith(".bprof")) if os.path.isdir(d) else []
    m = re.search(r"(\d+) samples counted in the kernel, (\d+) in the files", res["rot"][1])
    kernel, infiles = (int(m.group(1)), int(m.group(2))) if m else (None, None)
    m1 = re.search(r"(\d+) samples, ", res["one"][1])
    one = int(m1.group(1)) if m1 else None
    pc = res["perf"][0]
    T.section(f"10. Continuous recording: --rotate={every} over {secs} s at 99 Hz, all CPUs, "
              f"beside one file and perf, all at once", ("", "CPU", "vs perf", "files", "samples"))
    T.row(f"prof-record --rotate={every}", fmt_s(res["rot"][0]), ratio(res["rot"][0], pc),
          str(len(files)), str(infiles))
    T.row("prof-record (one file)", fmt_s(res["one"][0]), ratio(res["one"][0], pc), "1", str(one))
    T.row("perf record -g -a", fmt_s(pc), "1.00", "1", "")
    if kernel is not None:
        T.row("  samples lost at boundaries (kernel's count - files)", "", "", "",
              str(kernel - infiles))
    R["rotate"] = {"files": len(files), "kernel": kernel, "files_samples": infiles, "one": one,
                   "cpu": res["rot"][0], "perf": pc}


NUM = "10"
BPF_STATS = False  # runs while kernel.bpf_stats_enabled is on


def measure(args, B, T, R):
    part_rotate(args, B, T, R)
