# SPDX-License-Identifier: Apache-2.0
"""Part 1 of tools/bench/run.

Recording cost at 49, 99 and 999 Hz: the recorder's CPU time (user+sys,
wait4 rusage) plus, for bprof, its BPF programs' own run time
(kernel.bpf_stats_enabled, run_time_ns/run_cnt from the program fds),
against `perf record -e cpu-clock -g -a -F HZ`; and the slowdown of a FIXED
amount of CPU work (bench_fixedwork, both CPUs) under each profiler vs none,
repeated, with min/median/max.

Alone: tools/bench/run --part 1 [--quick].
"""
import os
import random
import shutil
import signal
import subprocess
import time

from benchlib import (NCPU, STATE, fmt_kib, fmt_s, fsize, loadavg, log, med, perf_env, ratio,
                      record_bprof, record_perf, run, spawn, start_load, stop, wait4,
                      wait_ready_bprof, wait_ready_perf)


def fixedwork_under(B, tool, hz, iters, tmp, i):
    """Run the fixed work once under tool (None, 'bprof', 'perf') sampling
    every CPU at hz; returns (elapsed s of the work, profiler CPU s)."""
    prof, logf = None, os.path.join(tmp, f"fw-{tool}-{hz}-{i}.log")
    if tool == "bprof":
        lf = open(logf, "w")
        prof = spawn([B["prof-record"], "-F", str(hz), "-o",
                      os.path.join(tmp, f"fw-{hz}-{i}.bprof")], stdout=lf, stderr=subprocess.STDOUT)
        wait_ready_bprof(prof, logf)
    elif tool == "perf":
        lf = open(logf, "w")
        prof = spawn(["perf", "record", "-e", "cpu-clock", "-g", "-a", "-F", str(hz), "-o",
                      os.path.join(tmp, f"fw-{hz}-{i}.data")], stdout=lf, stderr=subprocess.STDOUT,
                     env=perf_env(os.path.join(tmp, f"home-fw-{hz}-{i}")))
        wait_ready_perf(prof)
    if prof:
        time.sleep(1.0)  # same settling time for both (perf synthesizes existing tasks)
    r = run([B["fixedwork"], str(iters), str(NCPU)])
    elapsed = float(r.stdout.strip())
    cpu = None
    if prof:
        prof.send_signal(signal.SIGINT)
        rc, cpu, _, _ = wait4(prof)
        lf.close()
        if rc not in (0, 130, -2):
            log(f"  ! {tool} exited {rc}: {open(logf).read()[-300:]}")
    for f in os.listdir(tmp):  # the recordings are not needed, only the timings
        if f.startswith(f"fw-{hz}-{i}."):
            os.unlink(os.path.join(tmp, f))
    shutil.rmtree(os.path.join(tmp, f"home-fw-{hz}-{i}"), ignore_errors=True)
    return elapsed, cpu


# ---------------------------------------------------------------- parts --

def part_record(args, B, T, R):
    tmp = STATE["tmp"]
    D = args.duration
    T.section(f"1a. Recording cost, all {NCPU} CPUs, {D} s, demo workload busy on every CPU "
              "(recorder CPU = user+sys from wait4)",
              ("", "bprof", "perf", "bprof/perf"))
    for hz in args.hz:
        log(f"recording {D} s at {hz} Hz: bprof (load {loadavg()})")
        load = start_load(B, D + 30)
        # a table cache of its own, empty, as perf's HOME (its build-id
        # cache) is: every unwind table is built, the cost of a first run
        b = record_bprof(B, hz, os.path.join(tmp, f"r{hz}.bprof"), D,
                         extra=("--table-cache", os.path.join(tmp, f"tc{hz}")))
        stop(load)
        log(f"recording {D} s at {hz} Hz: perf (load {loadavg()})")
        load = start_load(B, D + 60)
        p = record_perf(hz, os.path.join(tmp, f"r{hz}.data"), D, os.path.join(tmp, f"home{hz}"))
        stop(load)
        zpath = os.path.join(tmp, f"r{hz}.data.zst")
        run(["zstd", "-3", "-q", "-f", "-o", zpath, os.path.join(tmp, f"r{hz}.data")])
        p["zsize"] = fsize(zpath)
        os.unlink(zpath)
        R["rec"][hz] = (b, p)
        tot = b["cpu"] + b["bpf"]
        T.row(f"{hz} Hz  samples", b["samples"], p["samples"], ratio(b["samples"], p["samples"]))
        T.row(f"{hz} Hz  recorder process CPU", fmt_s(b["cpu"]), fmt_s(p["cpu"]),
              ratio(b["cpu"], p["cpu"]))
        per = (f"{b['runs_ns'] / b['runs'] / 1e3:.1f} us x {b['runs']} runs"
               if b["runs"] else "n/a")
        T.row(f"{hz} Hz  BPF program run time", fmt_s(b["bpf"]), "n/a (not measurable)", per)
        T.row(f"{hz} Hz  TOTAL recording cost", fmt_s(tot), fmt_s(p["cpu"]), ratio(tot, p["cpu"]))
        T.row(f"{hz} Hz  wall time (incl. finishing)", fmt_s(b["wall"]), fmt_s(p["wall"]),
              ratio(b["wall"], p["wall"]))
        T.row(f"{hz} Hz  recorder peak RSS", fmt_kib(b["rss"]), fmt_kib(p["rss"]),
              ratio(b["rss"], p["rss"]))
    R["load"].append(("recording", loadavg()))


def part_slowdown(args, B, T, R):
    tmp = STATE["tmp"]
    # calibrate: iterations for about args.work seconds without a profiler
    n0 = 2000
    t = min(float(run([B["fixedwork"], str(n0), str(NCPU)]).stdout) for _ in range(2))
    iters = max(1000, int(n0 * args.work / max(t, 1e-3)))
    log(f"slowdown: {iters} iterations x {NCPU} threads (~{args.work} s), {args.reps} reps "
        f"(load {loadavg()})")
    conds = [(None, 0)] + [(tool, hz) for hz in args.hz for tool in ("bprof", "perf")]
    res = {c: [] for c in conds}
    cpu = {c: [] for c in conds}
    for i in range(args.reps):
        order = conds[:]
        random.Random(i).shuffle(order)  # no profiler always first/last would bias
        for c in order:
            e, pc = fixedwork_under(B, c[0], c[1], iters, tmp, i)
            res[c].append(e)
            if pc is not None:
                cpu[c].append(pc)
        log(f"  rep {i + 1}/{args.reps} done (load {loadavg()})")
    base = med(res[(None, 0)])
    T.section(f"1b. Slowdown of a fixed amount of work ({iters} iterations on {NCPU} threads, "
              f"{args.reps} runs each, elapsed min/median/max)",
              ("", "bprof", "perf", "bprof/perf"))
    b0 = res[(None, 0)]
    T.row("no profiler", f"{min(b0):.3f}/{med(b0):.3f}/{max(b0):.3f} s", "", "")
    R["slow"] = {}
    for hz in args.hz:
        bs, ps = res[("bprof", hz)], res[("perf", hz)]
        T.row(f"{hz} Hz  elapsed", f"{min(bs):.3f}/{med(bs):.3f}/{max(bs):.3f} s",
              f"{min(ps):.3f}/{med(ps):.3f}/{max(ps):.3f} s", ratio(med(bs), med(ps)))
        sb, sp = med(bs) / base - 1, med(ps) / base - 1
        R["slow"][hz] = (sb, sp)
        T.row(f"{hz} Hz  slowdown (median vs none)", f"{sb * 100:+.1f} %", f"{sp * 100:+.1f} %",
              ratio(sb, sp) if sb > 0 and sp > 0 else "n/a")
        T.row(f"{hz} Hz  slowdown spread (min..max)",
              f"{(min(bs) / base - 1) * 100:+.1f}..{(max(bs) / base - 1) * 100:+.1f} %",
              f"{(min(ps) / base - 1) * 100:+.1f}..{(max(ps) / base - 1) * 100:+.1f} %", "")
    R["load"].append(("slowdown", loadavg()))


NUM = "1"
BPF_STATS = True  # runs while kernel.bpf_stats_enabled is on


def measure(args, B, T, R):
    part_record(args, B, T, R)
    part_slowdown(args, B, T, R)
