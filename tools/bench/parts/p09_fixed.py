# SPDX-License-Identifier: Apache-2.0
"""Part 9 of tools/bench/run.

The recorder's fixed cost: start-up + final dump of a recording of `true`,
prof-record --unwind=auto and =fp against perf record -g -a.

Alone: tools/bench/run --part 9 [--quick].
"""
import os
import shutil
import subprocess

from benchlib import (STATE, fmt_s, loadavg, log, med, perf_env, ratio, spawn, wait4)


# ---------------------------------------------------------------- part 9 --

def fixed_cost(cmd, env=None):
    """user+sys CPU seconds of one run of cmd (wait4 rusage)."""
    p = spawn(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    code, cpu, _, _ = wait4(p)
    if code != 0:
        log(f"  ! {' '.join(cmd)}: exit {code}: {p.stderr.read().decode(errors='replace')[-300:]}")
    return cpu


def part_fixed(args, B, T, R):
    """The recorder's fixed cost: start-up and final dump of a recording of
    `true`, bprof in both unwinding modes beside perf record -g -a."""
    tmp = STATE["tmp"]
    reps = max(args.reps, 5)
    log(f"fixed cost: -- true x {reps} each (load {loadavg()})")
    res = {"auto": [], "auto-cold": [], "fp": [], "perf": []}
    home = os.path.join(tmp, "home-fixed")
    for i in range(reps):
        for mode in ("auto", "auto-cold", "fp"):
            out = os.path.join(tmp, f"true-{mode}-{i}.bprof")
            # auto: as users run it, the unwind tables of true, libc and
            # ld.so in the table cache after the first run (as perf's
            # build-id cache is warm after its first); auto-cold: built
            extra = ["--no-table-cache"] if mode == "auto-cold" else []
            res[mode].append(fixed_cost([B["prof-record"], "-q",
                                         f"--unwind={mode.split('-')[0]}", *extra, "-o", out,
                                         "--", "true"]))
            os.unlink(out) if os.path.exists(out) else None
        out = os.path.join(tmp, f"true-{i}.data")
        res["perf"].append(fixed_cost(["perf", "record", "-q", "-e", "cpu-clock", "-g", "-a",
                                       "-o", out, "--", "true"], env=perf_env(home)))
        os.unlink(out) if os.path.exists(out) else None
    shutil.rmtree(home, ignore_errors=True)
    T.section(f"9. Fixed cost: start-up + final dump of a recording of `true` "
              f"(user+sys, median of {reps})", ("", "CPU", "vs perf"))
    pm = med(res["perf"])
    for k, label in (("auto", "prof-record (--unwind=auto)"),
                     ("auto-cold", "prof-record, tables built (--no-table-cache)"),
                     ("fp", "prof-record --unwind=fp"), ("perf", "perf record -g -a")):
        T.row(label, fmt_s(med(res[k])), ratio(med(res[k]), pm))
    R["fixed"] = {k: med(v) for k, v in res.items()}


NUM = "9"
BPF_STATS = False  # runs while kernel.bpf_stats_enabled is on


def measure(args, B, T, R):
    part_fixed(args, B, T, R)
