# SPDX-License-Identifier: Apache-2.0
"""Part 8 of tools/bench/run.

The symbol cache (libsym/CACHE.md): prof-report -f with no cache, a cold
cache and a warm one against `perf report -g folded --stdio`, on recordings
of the same 999 Hz all-CPU 10 s run (both recorders at once, demo workload);
1, 10, 100 copies merged, cold and warm; 1, 10, 100 separate runs of one
program (other pids, other load addresses) merged.

Alone: tools/bench/run --part 8 [--quick].
"""
import os
import shutil
import subprocess

from benchlib import (STATE, die, du, fmt_b, fmt_s, loadavg, log, med, perf_env, ratio, run, spawn,
                      start_load, stop, timed)


# ---------------------------------------------------------------- part 8 --
# The symbol cache: what a second report of the same build costs.

def part_cache(args, B, T, R):
    tmp = STATE["tmp"]
    D, hz = args.cache_secs, 999
    bf, pf = os.path.join(tmp, "c999.bprof"), os.path.join(tmp, "c999.data")
    home = os.path.join(tmp, "home-cache")
    log(f"cache: recording {D} s at {hz} Hz with both recorders at once (load {loadavg()})")
    load = start_load(B, D + 30)
    lb, lp = open(bf + ".log", "w"), open(pf + ".log", "w")
    pb = spawn([B["prof-record"], "-F", str(hz), "-o", bf, str(D)], stdout=lb,
               stderr=subprocess.STDOUT)
    pp = spawn(["perf", "record", "-e", "cpu-clock", "-g", "-a", "-F", str(hz), "-o", pf,
                "--", "sleep", str(D)], stdout=lp, stderr=subprocess.STDOUT, env=perf_env(home))
    for p, f in ((pb, bf), (pp, pf)):
        if p.wait() != 0 or not os.path.exists(f):
            die(f"cache: recording {f} failed: {open(f + '.log').read()[-400:]}")
    stop(load)
    lb.close()
    lp.close()
    env = perf_env(home)
    out = os.path.join(tmp, "out.cache")
    n = args.cache_reps

    def median_of(make_cmd, env=None, before=None):
        ws = []
        for i in range(n):
            if before:
                before(i)
            w, _, rss, rc = timed(make_cmd(i), stdout=out, env=env)
            ws.append(w)
        return med(ws), min(ws), max(ws)

    def fresh(i):
        shutil.rmtree(os.path.join(tmp, f"cold{i}"), ignore_errors=True)

    rep = B["prof-report"]
    log(f"cache: perf report -g folded --stdio (load {loadavg()})")
    perf = median_of(lambda i: ["perf", "report", "-i", pf, "-g", "folded", "--stdio"], env)
    log("cache: prof-report -f --no-cache")
    nocache = median_of(lambda i: [rep, "-f", "-q", "--no-cache", bf])
    log("cache: prof-report -f, cold cache (a fresh directory each run)")
    cold = median_of(lambda i: [rep, "-f", "-q", "--cache-dir", os.path.join(tmp, f"cold{i}"), bf],
                     before=fresh)
    warmdir = os.path.join(tmp, "warm")
    run([rep, "-f", "-q", "--cache-dir", warmdir, bf], stdout=subprocess.DEVNULL)
    log("cache: prof-report -f, warm cache")
    warm = median_of(lambda i: [rep, "-f", "-q", "--cache-dir", warmdir, bf])
    # the same output every way
    outs = []
    for extra in (["--no-cache"], ["--cache-dir", warmdir]):
        outs.append(run([rep, "-f", "-q", *extra, bf]).stdout)
    same = "identical" if outs[0] == outs[1] else "DIFFERENT"

    T.section(f"8. The symbol cache: report time (wall, median of {n}; min..max), "
              f"{D} s at {hz} Hz on all CPUs, demo workload; both recorders ran at once",
              ("", "prof-report -f", "perf report -g folded --stdio", "perf/bprof"))

    def row(label, b):
        T.row(label, f"{fmt_s(b[0])} ({fmt_s(b[1])}..{fmt_s(b[2])})",
              f"{fmt_s(perf[0])} ({fmt_s(perf[1])}..{fmt_s(perf[2])})", ratio(perf[0], b[0]))
    row("no cache (--no-cache)", nocache)
    row("cold cache (empty directory, answers written)", cold)
    row("warm cache (second report of the same build)", warm)
    T.row("cache directory after one report", fmt_b(du(warmdir)),
          f"perf's ~/.debug: {fmt_b(du(os.path.join(home, '.debug')))}", "")
    T.row("folded output, --no-cache vs warm cache", same, "", "")
    R["cache"] = {"perf": perf[0], "nocache": nocache[0], "cold": cold[0], "warm": warm[0]}

    T.section("8b. Many recordings of the same build merged (prof-report -f FILE...): each unique "
              "(build-id, address) is symbolized once, each unique row rendered once (report/fold.c)",
              ("", "cold cache", "warm cache", "vs 1 recording (warm)"))
    one = None
    for k in args.copies:
        files = []
        for i in range(k):
            dst = os.path.join(tmp, f"ccopy{i}.bprof")
            if not os.path.exists(dst):
                shutil.copyfile(bf, dst)
            files.append(dst)
        log(f"cache: {k} recordings merged (load {loadavg()})")
        c = median_of(lambda i: [rep, "-f", "-q", "--cache-dir", os.path.join(tmp, f"cold{i}")]
                      + files, before=fresh)
        w = median_of(lambda i: [rep, "-f", "-q", "--cache-dir", warmdir] + files)
        one = one or w[0]
        T.row(f"{k} x the recording", fmt_s(c[0]), fmt_s(w[0]), ratio(w[0], one))
        R["cache"][f"merge{k}"] = w[0]
    T.row(f"(for scale: {max(args.copies)} perf reports, one each)",
          f"{fmt_s(perf[0] * max(args.copies))} (computed: {max(args.copies)} x the median)", "", "")
    part_runs(args, B, T, R, rep, warmdir, median_of)
    R["load"].append(("cache", loadavg()))


def part_runs(args, B, T, R, rep, warmdir, median_of):
    """8c: separate runs of one program, as a fleet's hosts would record it:
    other pids, other load addresses (ASLR), so no two files are alike."""
    tmp, S = STATE["tmp"], args.run_secs
    n = max(args.runs)
    log(f"cache: recording {n} runs of demo {S} (load {loadavg()})")
    files = []
    for i in range(n):
        f = os.path.join(tmp, f"run{i}.bprof")
        run([B["prof-record"], "-q", "-F", "999", "-o", f, "--", B["demo"], str(S)],
            stdout=subprocess.DEVNULL)
        files.append(f)
    info = run([rep, "--info", files[0]]).stdout
    rows = next((l.split(":", 1)[1].strip() for l in info.splitlines() if l.startswith("samples:")), "?")
    run([rep, "-f", "-q", "--cache-dir", warmdir] + files, stdout=subprocess.DEVNULL)
    T.section(f"8c. Separate runs of one program merged: prof-record -F 999 -- demo {S}, {n} times "
              f"(one run: {rows}); warm cache", ("", "prof-report -f", "vs 1 run", ""))
    one = None
    for k in args.runs:
        log(f"cache: {k} runs merged (load {loadavg()})")
        w = median_of(lambda i: [rep, "-f", "-q", "--cache-dir", warmdir] + files[:k])
        one = one or w[0]
        T.row(f"{k} run{'s' if k > 1 else ''}", f"{fmt_s(w[0])} ({fmt_s(w[1])}..{fmt_s(w[2])})",
              ratio(w[0], one), "")
        R["cache"][f"runs{k}"] = w[0]


NUM = "8"
BPF_STATS = False  # runs while kernel.bpf_stats_enabled is on


def measure(args, B, T, R):
    part_cache(args, B, T, R)
