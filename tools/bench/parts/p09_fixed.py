# SPDX-License-Identifier: Apache-2.0
"""Part 9 of tools/bench/run.

The recorder's fixed cost: start-up + final dump of a recording of `true`,
the recorder's CPU time (user+sys, wait4 rusage), median of 5 runs (7 in a
full run) with their range: prof-record -- true (the default: --unwind=auto,
its unwind tables read from the table cache, warmed by one run first),
--off-cpu, --wall, --unwind=fp and --no-table-cache (the tables built), and a
whole-system recording of 1 s (the typical day's: every runtime may be
met; against perf record -g -a -- sleep 1), each
for the current build and the --baseline recorder (default a0d852c, main
before the fixed cost went from ~40 ms to ~240 ms; built once in
BUILD-base/COMMIT), run back to back in alternating order, against perf
record -g -a -- true; the ratios current/baseline and to perf. Each build
has its own table cache (--table-cache in the temporary directory): the two
builds' cache files need not agree.

Alone: tools/bench/run --part 9 [--quick] [--baseline REV|BINARY].
"""
import os
import shutil
import subprocess

from benchlib import (BASELINE_REV, STATE, baseline_recorder, fmt_s, loadavg, log, med, perf_env, ratio,
                      recorder_has, spawn, spread, wait4)


# ---------------------------------------------------------------- part 9 --

# (key, label, options): R["fixed"] keeps the keys auto, auto-cold, fp
VARIANTS = (
    ("auto", "prof-record -- true (default)", []),
    ("off-cpu", "prof-record --off-cpu", ["--off-cpu"]),
    ("wall", "prof-record --wall", ["--wall"]),
    ("fp", "prof-record --unwind=fp", ["--unwind=fp"]),
    ("auto-cold", "prof-record, tables built (--no-table-cache)", ["--no-table-cache"]),
    # the typical day's recording: the whole system (every runtime may be
    # met), here for 1 s of a quiet machine; perf's row below is -a sleep 1
    ("system", "prof-record 1 (whole system, 1 s)", ["@system"]),
)


def fixed_cost(cmd, env=None):
    """user+sys CPU seconds of one run of cmd (wait4 rusage)."""
    p = spawn(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    code, cpu, _, _ = wait4(p)
    if code != 0:
        log(f"  ! {' '.join(cmd)}: exit {code}: {p.stderr.read().decode(errors='replace')[-300:]}")
        return None
    return cpu


def part_fixed(args, B, T, R):
    """The recorder's fixed cost: start-up and final dump of a recording of
    `true`, the current recorder and the baseline one in alternating order,
    beside perf record -g -a."""
    tmp = STATE["tmp"]
    reps = 5 if args.quick else 7
    base, blabel = baseline_recorder(args, BASELINE_REV)
    recs = {"cur": B["prof-record"]}
    if base:
        recs["base"] = base
    cache = {w: os.path.join(tmp, f"tc-fixed-{w}") for w in recs}
    out = os.path.join(tmp, "true.bprof")

    def one(w, extra):
        tc = [] if "--no-table-cache" in extra else ["--table-cache", cache[w]]
        if extra == ["@system"]:
            cpu = fixed_cost([recs[w], "-q", *tc, "-o", out, "1"])
        else:
            cpu = fixed_cost([recs[w], "-q", *extra, *tc, "-o", out, "--", "true"])
        if os.path.exists(out):
            os.unlink(out)
        return cpu

    for w in recs:  # the table caches warm, as after a user's first run
        one(w, [])
    log(f"fixed cost: -- true x {reps} each, current and baseline {blabel} in turn "
        f"(load {loadavg()})")
    res = {(w, k): [] for w in recs for k, _, _ in VARIANTS}
    res["perf"] = []
    res["perf-system"] = []
    home = os.path.join(tmp, "home-fixed")
    for i in range(reps):
        order = list(recs) if i % 2 == 0 else list(recs)[::-1]
        for k, _, extra in VARIANTS:
            for w in order:
                if all(o.startswith("@") or recorder_has(recs[w], o.split("=")[0]) for o in extra):
                    cpu = one(w, extra)
                    if cpu is not None:
                        res[(w, k)].append(cpu)
        pout = os.path.join(tmp, f"true-{i}.data")
        cpu = fixed_cost(["perf", "record", "-q", "-e", "cpu-clock", "-g", "-a", "-o", pout,
                          "--", "true"], env=perf_env(home))
        if cpu is not None:
            res["perf"].append(cpu)
        if os.path.exists(pout):
            os.unlink(pout)
        cpu = fixed_cost(["perf", "record", "-q", "-e", "cpu-clock", "-g", "-a", "-o", pout,
                          "--", "sleep", "1"], env=perf_env(home))
        if cpu is not None:
            res["perf-system"].append(cpu)
        if os.path.exists(pout):
            os.unlink(pout)
    shutil.rmtree(home, ignore_errors=True)
    for d in cache.values():
        shutil.rmtree(d, ignore_errors=True)
    T.section(f"9. Fixed cost: start-up + final dump of a recording of `true` (user+sys, "
              f"median (min-max) of {reps}; current and baseline {blabel} alternating)",
              ("", "current", f"baseline {blabel}", "current/baseline", "current/perf",
               "baseline/perf"))
    m = {k: (med(v) if v else None) for k, v in res.items()}
    pm = m["perf"]
    for k, label, extra in VARIANTS:
        c, b = m[("cur", k)], m.get(("base", k))
        pk = m["perf-system"] if k == "system" else pm  # its perf row
        if base is None:
            bcell = "n/a (does not build)"
        elif not res[("base", k)]:
            bcell = (f"n/a (no {extra[0].split('=')[0]})"
                     if not all(recorder_has(base, o.split("=")[0]) for o in extra) else "failed")
        else:
            bcell = spread(res[("base", k)], fmt_s)
        T.row(label, spread(res[("cur", k)], fmt_s), bcell, ratio(c, b), ratio(c, pk),
              ratio(b, pk))
    T.row("perf record -g -a -- true", spread(res["perf"], fmt_s), "", "", "1.00x", "")
    T.row("perf record -g -a -- sleep 1 (for the whole-system row)", spread(res["perf-system"], fmt_s),
          "", "", "1.00x", "")
    R["fixed"] = {k: m[("cur", k)] for k, _, _ in VARIANTS}
    R["fixed"]["perf"] = pm
    R["fixed"]["perf-system"] = m["perf-system"]
    R["fixed"]["base"] = {k: m.get(("base", k)) for k, _, _ in VARIANTS}
    R["fixed"]["base_label"] = blabel


NUM = "9"
BPF_STATS = False  # runs while kernel.bpf_stats_enabled is on


def measure(args, B, T, R):
    part_fixed(args, B, T, R)
