# SPDX-License-Identifier: Apache-2.0
"""Part 3 of tools/bench/run.

Report time and peak RSS: prof-report -f vs perf report -g folded --stdio
--inline (and perf script | stackcollapse-perf.pl if present).

Alone: tools/bench/run --part 1,3 [--quick] (it reports part 1's recordings).
"""
import os
import shutil

from benchlib import (STATE, fmt_kib, fmt_s, loadavg, log, med, perf_env, ratio, timed)


def stackcollapse():
    for c in ("stackcollapse-perf.pl", "stackcollapse-perf"):
        if shutil.which(c):
            return shutil.which(c)
    for p in ("/usr/share/FlameGraph/stackcollapse-perf.pl",
              "/usr/share/perl5/Devel/NYTProf/stackcollapse-perf.pl"):
        if os.path.exists(p):
            return p
    return None


def part_report(args, B, T, R):
    tmp = STATE["tmp"]
    sc = stackcollapse()
    T.section("3. Report time (wall, median of runs) and peak RSS, on the 1a recordings "
              "(demo workload: libc, libm, kernel)",
              ("", "bprof", "perf", "perf/bprof"))
    R["report"] = {}
    for hz in args.report_hz:
        bf, pf = os.path.join(tmp, f"r{hz}.bprof"), os.path.join(tmp, f"r{hz}.data")
        env = perf_env(os.path.join(tmp, f"home{hz}"))

        def rep(cmd, out, env=None, n=3):
            runs = []
            for _ in range(n):
                runs.append(timed(cmd, stdout=out, env=env))
                if runs[0][0] > args.slow_cap:
                    break  # one run of a slow command is enough
            return med([r[0] for r in runs]), max(r[2] for r in runs), len(runs)

        log(f"report {hz} Hz: prof-report -f (load {loadavg()})")
        bw, bm, bn = rep([B["prof-report"], "-f", "-q", "--no-cache", bf],
                         os.path.join(tmp, "out.bprof.folded"))
        log(f"report {hz} Hz: perf report -g folded --stdio --inline")
        pw, pm, pn = rep(["perf", "report", "-i", pf, "-g", "folded", "--stdio", "--inline"],
                         os.path.join(tmp, "out.perf.report"), env)
        log(f"report {hz} Hz: perf script")
        sw, sm, sn = rep(["perf", "script", "-i", pf], os.path.join(tmp, "out.perf.script"), env)
        R["report"][hz] = (bw, pw)
        T.row(f"{hz} Hz  prof-report -f  vs  perf report -g folded --inline",
              fmt_s(bw), fmt_s(pw), ratio(pw, bw))
        T.row(f"{hz} Hz    peak RSS", fmt_kib(bm), fmt_kib(pm), ratio(pm, bm))
        T.row(f"{hz} Hz    runs", bn, pn, "")
        if sc:
            sh = f"perf script -i '{pf}' | '{sc}'"
            cw = med([timed(["sh", "-c", sh], stdout=os.path.join(tmp, "out.sc"), env=env)[0]
                      for _ in range(1)])
            T.row(f"{hz} Hz  prof-report -f  vs  perf script | stackcollapse-perf.pl",
                  fmt_s(bw), fmt_s(cw), ratio(cw, bw))
        else:
            T.row(f"{hz} Hz  prof-report -f  vs  perf script | stackcollapse-perf.pl",
                  fmt_s(bw), "n/a (not installed)", "n/a")
        T.row(f"{hz} Hz  prof-report -f  vs  perf script alone (lower bound of the above)",
              fmt_s(bw), fmt_s(sw), ratio(sw, bw))
        T.row(f"{hz} Hz    peak RSS", fmt_kib(bm), fmt_kib(sm), ratio(sm, bm))
    R["load"].append(("report", loadavg()))


NUM = "3"
BPF_STATS = False  # runs while kernel.bpf_stats_enabled is on


def measure(args, B, T, R):
    part_report(args, B, T, R)
