# SPDX-License-Identifier: Apache-2.0
"""Part 11 of tools/bench/run.

Mapping churn (issue 27): a program loading and unloading 1,000 libraries a
second (bench_churn, 20 copies of one library in turn), recorded system-wide
at 99 Hz by prof-record, by the recorder before mapping generations
(--baseline REV|BINARY, default: the last tree without them, BASELINE_REV,
built once in BUILD-base/COMMIT) and by perf record -g -a: recorder CPU, BPF time per sample and
per mapping event, mapping events per second and how many were lost (perf:
MMAP2 records and LOST), samples walked without a current mapping table; and
what every system call pays while the recorder's syscall tracepoints are on
(a getppid loop, ns per call, median of 5, with no recorder, each recorder,
perf).

Alone: tools/bench/run --part 11 [--quick].
"""
import os
import re
import shutil
import signal
import subprocess
import time

from benchlib import (BpfStats, STATE, baseline_recorder, fmt_s, fmt_us, loadavg, log, med,
                      perf_env, ratio, run, spawn, wait4, wait_ready_bprof, wait_ready_perf)


# ---------------------------------------------------------------- part 11 --

# The last tree before mapping generations (the commit before "format 1.3:
# GENERATIONS section"), part 11's default baseline (not `main`: once
# generations merged, main measured itself; the full run of 2026-11-26 15:13
# compared the recorder with itself).  --baseline overrides it.
BASELINE_REV = "29b562e"


def churn_under(B, tool, rec, tmp, secs, rate, libdir, i):
    """bench_churn at rate libraries/s for secs under tool (None, 'new',
    'base', 'perf'), system-wide at 99 Hz; the figures of part 11."""
    res = {"tool": tool}
    prof, logf, st = None, os.path.join(tmp, f"churn-{tool}-{i}.log"), None
    out = os.path.join(tmp, f"churn-{tool}-{i}." + ("data" if tool == "perf" else "bprof"))
    home = os.path.join(tmp, f"home-churn-{i}")
    if tool in ("new", "base"):
        lf = open(logf, "w")
        prof = spawn([rec, "-v", "-F", "99", "-o", out], stdout=lf, stderr=subprocess.STDOUT)
        wait_ready_bprof(prof, logf)
        st = BpfStats(prof.pid)
    elif tool == "perf":
        lf = open(logf, "w")
        prof = spawn(["perf", "record", "-e", "cpu-clock", "-g", "-a", "-F", "99", "-o", out],
                     stdout=lf, stderr=subprocess.STDOUT, env=perf_env(home))
        wait_ready_perf(prof)
    if prof:
        time.sleep(1.0)
    w = spawn([B["churn"], "churn", libdir, "20", str(rate), str(secs)], stdout=subprocess.PIPE,
              stderr=subprocess.DEVNULL)
    while w.poll() is None:
        if st:
            st.poll()
        time.sleep(0.2)
    res["loads"] = int(w.stdout.read().decode().strip() or 0)
    if st:
        st.poll()
    if prof:
        prof.send_signal(signal.SIGINT)
        rc, res["cpu"], _, _ = wait4(prof, st.poll if st else None)
        lf.close()
        text = open(logf).read()
        if rc not in (0, 130, -2):
            log(f"  ! {tool} exited {rc}: {text[-300:]}")
        if st:
            res["samples"], res["sample_ns"] = st.sample_runs()
            res["events"], res["event_ns"] = st.gens_runs()
            m = re.search(r"unwinder: (\d+) (\d+) (\d+) (\d+)", text)
            res["stale"] = (int(m.group(4)), int(m.group(1))) if m else None
            d = run([B["dump"], out], check=False).stdout
            m = re.search(r"^loss events_lost (\d+)", d, re.M)
            res["lost"] = int(m.group(1)) if m else None
            res["gaps"] = sum(len(l.split()) - 3 for l in d.splitlines() if l.startswith("gaps "))
            res["mapped"] = sum(1 for l in d.splitlines() if l.startswith("history "))
        else:
            r = run(["perf", "report", "--stats", "-i", out], check=False, env=perf_env(home))
            m = re.search(r"MMAP2 events:\s+(\d+)", r.stdout)
            res["mmap2"] = int(m.group(1)) if m else None
            m = re.search(r"LOST events:\s+(\d+)", r.stdout)
            res["lost"] = int(m.group(1)) if m else 0
            m = re.search(r"SAMPLE events:\s+(\d+)", r.stdout)
            res["samples"] = int(m.group(1)) if m else None
    for f in (out, out + ".old"):
        if os.path.exists(f):
            os.unlink(f)
    shutil.rmtree(home, ignore_errors=True)
    return res


def syscall_cost(B, tool, rec, tmp, reps):
    """ns per getppid() with tool recording system-wide (median of reps)."""
    prof, logf = None, os.path.join(tmp, f"sys-{tool}.log")
    out = os.path.join(tmp, f"sys-{tool}." + ("data" if tool == "perf" else "bprof"))
    home = os.path.join(tmp, "home-sys")
    if tool in ("new", "base"):
        lf = open(logf, "w")
        prof = spawn([rec, "-F", "99", "-o", out], stdout=lf, stderr=subprocess.STDOUT)
        wait_ready_bprof(prof, logf)
    elif tool == "perf":
        lf = open(logf, "w")
        prof = spawn(["perf", "record", "-e", "cpu-clock", "-g", "-a", "-F", "99", "-o", out],
                     stdout=lf, stderr=subprocess.STDOUT, env=perf_env(home))
        wait_ready_perf(prof)
    if prof:
        time.sleep(1.0)
    ns = [float(run([B["churn"], "syscalls", "2000000"]).stdout) for _ in range(reps)]
    if prof:
        prof.send_signal(signal.SIGINT)
        wait4(prof)
        lf.close()
    for f in (out, out + ".old"):
        if os.path.exists(f):
            os.unlink(f)
    shutil.rmtree(home, ignore_errors=True)
    return med(ns)


def part_churn(args, B, T, R):
    tmp = STATE["tmp"]
    secs, rate, reps = (4, 1000, 3) if args.quick else (10, 1000, 5)
    base, blabel = baseline_recorder(args, BASELINE_REV)
    libdir = os.path.join(tmp, "churnlibs")
    os.makedirs(libdir, exist_ok=True)
    for k in range(20):
        shutil.copy(B["churnlib"], os.path.join(libdir, f"libchurn{k}.so"))
    log(f"churn: {rate} libraries/s for {secs} s under each recorder (load {loadavg()})")
    res = {t: churn_under(B, t, rec, tmp, secs, rate, libdir, 0)
           for t, rec in (("none", None), ("new", B["prof-record"]), ("base", base),
                          ("perf", None)) if rec or t != "base"}
    log(f"churn: getppid cost, median of {reps} rounds (load {loadavg()})")
    # rounds of all four in turn: the machine's load drifts between them
    tools = tuple((t, rec) for t, rec in (("none", None), ("new", B["prof-record"]),
                                          ("base", base), ("perf", None)) if rec or t != "base")
    rounds = {t: [] for t, _ in tools}
    for _ in range(reps):
        for t, rec in tools:
            rounds[t].append(syscall_cost(B, t, rec, tmp, 1))
    sc = {t: med(v) for t, v in rounds.items()}
    pc = res["perf"].get("cpu")
    T.section(f"11. Mapping churn: {rate} libraries loaded and unloaded a second for {secs} s, "
              "recorded system-wide at 99 Hz",
              ("", "CPU", "vs perf", "BPF/sample", "mappings/s", "hook runs/s", "BPF/run",
               "lost", "loads/s", "no current table"))
    for t, label in (("new", "prof-record (mapping generations)"),
                     ("base", f"prof-record baseline ({blabel})"), ("perf", "perf record -g -a"),
                     ("none", "no recorder")):
        if t not in res:
            T.row(label, "n/a (does not build)")
            continue
        r = res[t]
        if t == "perf":
            ev = f"{r['mmap2'] / secs:.0f} (MMAP2)" if r.get("mmap2") is not None else "n/a"
            T.row(label, fmt_s(r.get("cpu")), "1.00", "", ev, "", "", str(r.get("lost")),
                  f"{r['loads'] / secs:.0f}", "")
        elif t == "none":
            T.row(label, "", "", "", "", "", "", "", f"{r['loads'] / secs:.0f}", "")
        else:
            ps = r["sample_ns"] / r["samples"] / 1e3 if r.get("samples") else None
            pe = r["event_ns"] / r["events"] / 1e3 if r.get("events") else None
            stale = (f"{r['stale'][0]}/{r['stale'][1]}" if r.get("stale") else "n/a")
            T.row(label, fmt_s(r.get("cpu")), ratio(r.get("cpu"), pc), fmt_us(ps),
                  f"{r.get('mapped', 0) / secs:.0f}",
                  f"{r['events'] / secs:.0f}" if r.get("events") else "0", fmt_us(pe),
                  f"{r.get('lost')} ({r.get('gaps', 0)} gaps)", f"{r['loads'] / secs:.0f}",
                  stale)
    T.section("11b. Every system call while recording (getppid loop, ns per call, "
              f"median of {reps} rounds)", ("", "ns/call", "vs none"))
    for t, label in (("none", "no recorder"), ("new", "prof-record (mapping generations on)"),
                     ("base", f"prof-record baseline ({blabel})"), ("perf", "perf record -g -a")):
        if t in sc:
            T.row(label, f"{sc[t]:.1f}", ratio(sc[t], sc["none"]))
        else:
            T.row(label, "n/a (does not build)")
    R["churn"] = {"res": res, "syscalls": sc}


NUM = "11"
BPF_STATS = True  # runs while kernel.bpf_stats_enabled is on


def measure(args, B, T, R):
    part_churn(args, B, T, R)
