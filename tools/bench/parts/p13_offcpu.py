# SPDX-License-Identifier: Apache-2.0
"""Part 13 of tools/bench/run.

Off-CPU and wall-clock time (issue 28): bench_offmix (threads that burn,
sleep, read a pipe, wait on a mutex, wait for a CPU; -O2
-fomit-frame-pointer) under prof-record --wall: each thread's on+off samples
against wall x F, the share of off-CPU samples whose stack reaches
start_thread through libc's wrappers and the thread's own function; beside
it libbpf-tools offcputime -p on the same program (time, and the share
reaching the function and start_thread); cost (13b): bench_pingpong (two
threads pinned to CPU 0) flat out and paced at ~100,000 switches/s (work
calibrated between round trips) with no recorder (twice: the method's own
spread), prof-record on-CPU only, --off-cpu, --wall and offcputime
(system-wide, kept on the other CPUs), bpf_stats off, in cycles of one 3 s
round each in rotating order (6 cycles flat out, 16 paced; --quick: 3 and 5
of 2 s): the median over the cycles of each ratio to the cycle's own
no-recorder round, with quartiles and min-max, of the throughput by the wall
clock, per CPU second, and (paced) of the work's share of the CPU time,
which the VM's moving CPU speed and the other processes move least
(tools/bench/pingpong.c); steal time and load during the rounds; then (13d)
with bpf_stats on, one round each: BPF ns per context switch of the system
and per program run, and prof-record's off-CPU stack walks per second; 13c:
what prof-record --per-thread costs (issue 30): rows, file size and recorder
CPU with and without it, of the ratio workload on 2 and 32 threads (-p), 99
and 999 Hz.

Alone: tools/bench/run --part 13 [--quick].
"""
import glob
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import time

from benchlib import (BpfStats, CHILDREN, START_FRAMES, STATE, fmt_b, fmt_s, loadavg, log, med,
                      pct, prog_name, ratio, record_bprof, run, spawn, stop, wait4,
                      wait_ready_bprof)


# --------------------------------------------------------------- part 13 --
# Off-CPU and wall-clock time (issue 28): truth and cost, beside
# libbpf-tools' offcputime.

OFFMIX_FN = {"burn": "burn_loop", "nap": "nap_wait", "piper": "pipe_wait",
             "lock": "mutex_wait", "runq1": "runq_loop", "runq2": "runq_loop"}


def offcputime_stacks(text):
    """libbpf-tools offcputime's output: [(comm, frames leaf first, us)]."""
    res, frames = [], []
    for line in text.splitlines():
        s = line.strip()
        if not s:
            frames = []
            continue
        m = re.match(r"^-\s+(.+) \((\d+)\)$", s)
        if m:
            res.append([m.group(1), frames, 0])
            frames = []
        elif re.fullmatch(r"\d+", s) and res and res[-1][2] == 0 and not frames:
            res[-1][2] = int(s)
        else:
            frames.append(s)
    return [tuple(r) for r in res]


def offcpu_truth_bprof(B, tmp, secs, hz):
    out = os.path.join(tmp, "offmix.bprof")
    r = run([B["prof-record"], "-q", "-F", str(hz), "--wall", "-o", out, "--",
             B["offmix"], str(secs)], check=False)
    if r.returncode != 0:
        log(f"  ! prof-record --wall: exit {r.returncode}: {r.stderr[-300:]}")
        return None
    folded = run([B["prof-report"], "-q", "--no-cache", "-f", out], check=False).stdout
    per = {c: {"on": 0, "off": 0, "offc": 0, "fn": 0} for c in OFFMIX_FN}
    for line in folded.splitlines():
        stack, _, n = line.rpartition(" ")
        frames = stack.split(";")
        c = frames[0]
        if c not in per or not n.isdigit():
            continue
        n = int(n)
        if "[off-cpu:" in frames[-1]:
            per[c]["off"] += n
            if any(f in START_FRAMES for f in frames):
                per[c]["offc"] += n
            if OFFMIX_FN[c] in frames:
                per[c]["fn"] += n
        else:
            per[c]["on"] += n
    os.unlink(out)
    return per


def offcpu_truth_offcputime(B, secs):
    w = spawn([B["offmix"], str(secs + 2)], stdout=subprocess.DEVNULL)
    time.sleep(0.5)
    r = run(["offcputime", "-p", str(w.pid), str(secs)], check=False)
    stop(w)
    if r.returncode != 0:
        log(f"  ! offcputime: exit {r.returncode}: {r.stderr[-300:]}")
        return None
    per = {c: {"us": 0, "fn": 0, "start": 0} for c in OFFMIX_FN}
    for comm, frames, us in offcputime_stacks(r.stdout):
        if comm not in per:
            continue
        per[comm]["us"] += us
        if OFFMIX_FN[comm] in frames:
            per[comm]["fn"] += us
        if any(f in START_FRAMES for f in frames):
            per[comm]["start"] += us
    return per


PP_RE = re.compile(r"([\d.]+) round trips/s, ([\d.]+) switches/s, ([\d.]+) round trips per CPU s, "
                   r"work share ([\d.]+), ([\d.]+) CPU s in ([\d.]+) s")
PP_CPU = 0  # the CPU bench_pingpong pins both its threads to


def set_bpf_stats(on):
    with open("/proc/sys/kernel/bpf_stats_enabled", "w") as f:
        f.write("1" if on else "0")


def cpu_stat(cpu):
    """(total jiffies, steal jiffies) of one CPU, and the system's context
    switches so far (/proc/stat ctxt)."""
    tot = steal = ctxt = 0
    with open("/proc/stat") as f:
        for line in f:
            w = line.split()
            if w[0] == f"cpu{cpu}":
                v = [int(x) for x in w[1:9]]
                tot, steal = sum(v), v[7]
            elif w[0] == "ctxt":
                ctxt = int(w[1])
    return tot, steal, ctxt


RECORDERS = ("prof-record", "offcputime", "perf", "bpftrace")


def foreign_recorders():
    """Profilers running that this script did not start: their programs
    would slow the no-recorder rounds too (another prof-record's syscall
    tracepoints slow every system call of the machine)."""
    ours = {p.pid for p in CHILDREN if p.poll() is None}
    res = []
    for d in os.listdir("/proc"):
        if d.isdigit() and int(d) not in ours:
            try:
                with open(f"/proc/{d}/comm") as f:
                    c = f.read().strip()
            except OSError:
                continue
            if c in RECORDERS:
                res.append(f"{d} {c}")
    return res


def pingpong_once(B, secs, spin):
    r = run([B["pingpong"], str(secs), str(PP_CPU), str(spin)], check=False)
    m = PP_RE.search(r.stdout)
    return m and {"rt": float(m.group(1)), "sw": float(m.group(2)), "cpu_rt": float(m.group(3)),
                  "share": float(m.group(4)), "cpu_frac": float(m.group(5)) / float(m.group(6))}


def pingpong_calibrate(B, switches):
    """The SPIN that paces bench_pingpong to about switches/s alone: its
    round trip takes a + b x SPIN seconds (two switches each), measured at
    SPIN 1 and 40000 by its rate per CPU second (the rate with the CPU to
    itself), the best of three 1 s runs each."""
    s0, s1 = 1, 40000
    r = []
    for sp in (s0, s1):
        rs = [pingpong_once(B, 1, sp) for _ in range(3)]
        r.append(max([x["cpu_rt"] for x in rs if x] or [0]))
    if not r[0] or not r[1] or r[1] >= r[0]:
        return None
    a, b = 1.0 / r[0], (1.0 / r[1] - 1.0 / r[0]) / (s1 - s0)
    spin = int((2.0 / switches - a) / b)
    return spin if spin > 0 else None


def wait_ready_links(p, timeout=20):
    """offcputime prints nothing when it is ready: wait for its BPF links
    (bpf_program__attach's fds), then a little more for the last one."""
    t_end = time.monotonic() + timeout
    while time.monotonic() < t_end and p.poll() is None:
        try:
            if any(os.readlink(f"/proc/{p.pid}/fd/{fd}") == "anon_inode:bpf_link"
                   for fd in os.listdir(f"/proc/{p.pid}/fd")):
                time.sleep(0.3)
                return
        except OSError:
            pass
        time.sleep(0.05)
    time.sleep(1.0)


def offcpu_walks(B, path):
    """(off-CPU user stacks walked, duration s) from prof-report --info."""
    r = run([B["prof-report"], "-q", "--info", path], check=False)
    m = re.search(r"^off-CPU:.*?^\s+user stacks walked:\s+(\d+)", r.stdout, re.M | re.S)
    d = re.search(r"^duration:\s+([\d.]+) s", r.stdout, re.M)
    return (int(m.group(1)), float(d.group(1))) if m and d else None


def pingpong_under(B, tool, tmp, secs, spin, stats=False):
    """One round: bench_pingpong (pinned to PP_CPU) under tool: none,
    on-cpu (prof-record without --off-cpu), off-cpu, wall, offcputime;
    the recorders system-wide.  The caller keeps the bench, and so the
    recorders, off PP_CPU.  With stats (kernel.bpf_stats_enabled on): the
    recorder's BPF run time per context switch of the system (/proc/stat
    ctxt) over the round, per program, and prof-record's off-CPU walks."""
    prof, st = None, None
    logf = os.path.join(tmp, f"pp-{tool}.log")
    out = os.path.join(tmp, "pp.bprof")
    lf = open(logf, "w")
    if tool in ("on-cpu", "off-cpu", "wall", "wall-sys"):
        # wall-sys: --wall with the mapping-generation hook of kernels
        # without the mmap_lock tracepoints (the system calls' exits),
        # which puts every system call of the machine on the slow path
        env = dict(os.environ, BPROF_GENS_HOOK="syscalls") if tool == "wall-sys" else None
        prof = spawn([B["prof-record"], "-v", "-F", "99", "-o", out, "--force"]
                     + (["--wall"] if tool == "wall-sys" else [f"--{tool}"] if tool != "on-cpu" else []),
                     stdout=lf, stderr=subprocess.STDOUT, env=env)
        wait_ready_bprof(prof, logf)
        time.sleep(0.3)
    elif tool == "offcputime":
        prof = spawn(["offcputime"], stdout=subprocess.DEVNULL, stderr=lf)
        wait_ready_links(prof)
    if prof and stats:
        st = BpfStats(prof.pid)
        st.poll()
    base = dict(st.last) if st else {}
    foreign = foreign_recorders()
    s0 = cpu_stat(PP_CPU)
    res = pingpong_once(B, secs, spin) or {}
    s1 = cpu_stat(PP_CPU)
    res["steal"] = (s1[1] - s0[1]) / (s1[0] - s0[0]) if s1[0] > s0[0] else 0.0
    res["ctxt"] = s1[2] - s0[2]
    res["foreign"] = sorted(set(foreign) | set(foreign_recorders()))
    if res["foreign"]:
        log(f"  ! other profilers running during the {tool} round: {', '.join(res['foreign'])}")
    if st:
        st.poll()
        ns, progs = 0, {}
        for k, v in st.last.items():
            if v[0] in (5, 17, 26):  # TRACEPOINT, RAW_TRACEPOINT, TRACING
                b = base.get(k, (v[0], 0, 0))
                ns += v[1] - b[1]
                if v[2] - b[2] > 0:
                    name = prog_name(k)
                    pn, pc = progs.get(name, (0, 0))
                    progs[name] = (pn + v[1] - b[1], pc + v[2] - b[2])
        res["bpf_ns"], res["progs"] = ns, progs
    if prof:
        prof.send_signal(signal.SIGINT)
        wait4(prof)
        if stats and tool in ("off-cpu", "wall", "wall-sys") and os.path.exists(out):
            res["walks"] = offcpu_walks(B, out)
    lf.close()
    for f in glob.glob(out + "*"):
        os.unlink(f)
    return res


def quart(xs):
    """(first quartile, median, third quartile) of xs."""
    if len(xs) < 4:
        return min(xs), med(xs), max(xs)
    q = statistics.quantiles(xs, n=4)
    return q[0], q[1], q[2]


def offcpu_cost(args, B, T, R, tmp):
    """13b/13d: bench_pingpong's throughput under each recorder against
    none, in cycles of one round each, in an order that rotates from cycle
    to cycle; each cycle's ratio is against its own no-recorder round.
    The figures are the median of the cycles' ratios and their spread."""
    secs = 2 if args.quick else 3
    ncyc = {"flat out": 3 if args.quick else 6, "paced": 5 if args.quick else 16}
    # "again": a second no-recorder round in each cycle, the method's own
    # spread (its ratio should be 1)
    tools = ["none", "again", "on-cpu", "off-cpu", "wall", "wall-sys"] + (["offcputime"] if shutil.which("offcputime") else [])
    # bpf_stats adds two clock reads to every program run (~80 ns here, two
    # runs per switch): off for the throughput rounds, on for 13d's
    set_bpf_stats(False)
    aff = os.sched_getaffinity(0)
    others = aff - {PP_CPU}
    if others:
        # the recorders' (and this script's) user-space work on the other
        # CPU(s): the scheduler puts it there anyway while bench_pingpong
        # keeps its CPU busy, pinning only makes every round alike
        os.sched_setaffinity(0, others)
    load = [loadavg()]
    log(f"offcpu: pacing bench_pingpong to ~100,000 switches/s (load {load[0]})")
    spin = pingpong_calibrate(B, 100000)
    if spin is None:
        log("  ! cannot pace bench_pingpong (its rate did not fall with work): paced rows left out")
    paces = [("flat out", 0)] + ([("paced", spin)] if spin else [])
    rounds = {}
    t0 = time.monotonic()
    for pace, sp in paces:
        n = ncyc[pace]
        log(f"offcpu: cost, bench_pingpong {pace} (SPIN {sp}), {n} cycles of {len(tools)} rounds "
            f"of {secs} s (load {loadavg()})")
        rounds[pace] = []
        for c in range(n):
            k = c % len(tools)
            cyc = {}
            for t in tools[k:] + tools[:k]:
                cyc[t] = pingpong_under(B, t, tmp, secs, sp)
            rounds[pace].append(cyc)
        load.append(loadavg())
    cost_secs = time.monotonic() - t0
    set_bpf_stats(True)
    stats = {}
    for pace, sp in paces:
        log(f"offcpu: BPF run time, bench_pingpong {pace} (load {loadavg()})")
        stats[pace] = {t: pingpong_under(B, t, tmp, secs, sp, stats=True) for t in tools
                       if t not in ("none", "again")}
    load.append(loadavg())
    os.sched_setaffinity(0, aff)

    steal = [r["steal"] for p in rounds.values() for cyc in p for r in cyc.values() if "steal" in r]
    frac = [r["cpu_frac"] for p in rounds.values() for cyc in p for r in cyc.values() if "cpu_frac" in r]
    nround = sum(len(cyc) for p in rounds.values() for cyc in p)
    nforeign = sum(1 for p in rounds.values() for cyc in p for r in cyc.values() if r.get("foreign"))
    T.section(f"13b. Off-CPU cost: bench_pingpong (two threads pinned to CPU {PP_CPU}, a byte over "
              f"pipes; two switches per round trip), flat out and paced (SPIN {spin} loop "
              f"iterations of work per round trip, calibrated for ~100,000 switches/s alone); "
              f"cycles of one {secs} s round per recorder in rotating order, recorders "
              f"system-wide and kept off CPU {PP_CPU}, bpf_stats off; each figure is the median "
              f"of the cycles' ratios to their own no-recorder round [quartiles] (min-max). "
              f"Load average {' -> '.join(load)}; steal on CPU {PP_CPU} during the rounds: "
              f"median {100 * med(steal):.1f} %, max {100 * max(steal):.1f} %; bench_pingpong's "
              f"CPU time per wall second: median {med(frac):.3f}, min {min(frac):.3f} (the rest: "
              f"other tasks on its CPU); other profilers (not ours) running during {nforeign} "
              f"of {nround} rounds; {cost_secs:.0f} s",
              ("", "cycles", "switches/s", "throughput vs none (wall clock)",
               "per CPU second vs none", "work share vs none (paced: at equal CPU speed)",
               "added ns per switch (by work share; flat out: by wall clock)",
               "paced: work share vs none, flat out: throughput vs none; median of the cycles with no other profiler (how many)"))
    R_pp = {}
    for pace, _ in paces:
        cycs = [c for c in rounds[pace] if all(c[t].get("rt") for t in tools)]
        for t, label in (("none", "no recorder"), ("again", "no recorder again (the method's spread)"),
                         ("on-cpu", "prof-record (on-CPU only)"),
                         ("off-cpu", "prof-record --off-cpu"), ("wall", "prof-record --wall"),
                         ("wall-sys", "prof-record --wall, BPROF_GENS_HOOK=syscalls"),
                         ("offcputime", "offcputime")):
            if t not in tools or not cycs:
                continue
            sw = med([c[t]["sw"] for c in cycs])
            if t == "none":
                T.row(f"{pace}: {label}", len(cycs), f"{sw:.0f}", "1.00", "1.00", "1.00", "")
                continue
            cells, fig = [], {}
            for key in ("rt", "cpu_rt", "share"):
                if key == "share" and pace != "paced":
                    cells.append("n/a")
                    continue
                rs = [c[t][key] / c["none"][key] for c in cycs if c["none"][key]]
                q1, m, q3 = quart(rs)
                fig[key] = (m, q1, q3, min(rs), max(rs))
                cells.append(f"{m:.3f} [{q1:.3f}-{q3:.3f}] ({min(rs):.2f}-{max(rs):.2f})")
            if pace == "paced":
                # w: seconds of work per round trip; at equal speed the round
                # trip is w / share
                add = [c["none"]["share"] / c["none"]["rt"] * (1 / c[t]["share"] - 1 / c["none"]["share"]) / 2
                       for c in cycs if c[t]["share"] and c["none"]["share"]]
            else:
                add = [(1 / c[t]["rt"] - 1 / c["none"]["rt"]) / 2 for c in cycs]
            q1, m, q3 = quart([a * 1e9 for a in add])
            fig["added_ns"] = (m, q1, q3)
            # the cycles no other profiler touched (their programs slow
            # the no-recorder round as well)
            clean = [c for c in cycs if not any(r.get("foreign") for r in c.values())]
            key = "share" if pace == "paced" else "rt"
            if clean:
                rs = [c[t][key] / c["none"][key] for c in clean if c["none"][key]]
                fig["clean"] = (med(rs), len(clean))
                cl = f"{med(rs):.3f} ({len(clean)})"
            else:
                cl = "none (0)"
            R_pp[f"{pace}/{t}"] = fig
            T.row(f"{pace}: {label}", len(cycs), f"{sw:.0f}", *cells, f"{m:.0f} [{q1:.0f}-{q3:.0f}]", cl)
    T.section(f"13d. BPF run time (bpf_stats on: its own two clock reads, ~80 ns, are in every "
              f"run) over one {secs} s round each: per context switch of the system (/proc/stat "
              f"ctxt), per program run and runs per second; prof-record's off-CPU stack walks "
              f"per second (prof-report --info)",
              ("", "flat out", "paced"))
    names = set()
    for pace, _ in paces:
        for t, r in stats[pace].items():
            names |= set(r.get("progs", {}))
    for t in tools[2:]:
        cells = []
        for pace, _ in paces:
            r = stats[pace].get(t, {})
            cells.append(f"{r['bpf_ns'] / r['ctxt']:.0f} ns per switch ({r['ctxt'] / secs:.0f} switches/s)"
                         if r.get("ctxt") and "bpf_ns" in r else "n/a")
        T.row(t, *cells)
        for n in sorted(names):
            cells = []
            for pace, _ in paces:
                pr = stats[pace].get(t, {}).get("progs", {}).get(n)
                cells.append(f"{pr[0] / pr[1]:.0f} ns, {pr[1] / secs:.0f}/s" if pr else "")
            if any(cells):
                T.row(f"  {n}", *cells)
        if t in ("off-cpu", "wall", "wall-sys"):
            cells = []
            for pace, _ in paces:
                w = stats[pace].get(t, {}).get("walks")
                cells.append(f"{w[0] / w[1]:.0f} walks/s" if w and w[1] else "n/a")
            T.row("  off-CPU stacks walked", *cells)
    if args.out:
        with open(args.out + ".offcpu.json", "w") as f:
            json.dump({"spin": spin, "secs": secs, "rounds": rounds, "stats": stats, "load": load}, f)
    R["offcpu_cost"] = {"spin": spin, "rounds": rounds, "stats": stats, "figures": R_pp,
                        "load": load, "steal": steal, "cpu_frac": frac}


def part_offcpu(args, B, T, R):
    tmp = STATE["tmp"]
    secs, hz = (4, 99) if args.quick else (10, 99)
    if not shutil.which("offcputime"):
        log("  offcputime (libbpf-tools) missing: tools/install-deps.sh installs it")
    log(f"offcpu: truth, bench_offmix {secs} s (load {loadavg()})")
    bp = offcpu_truth_bprof(B, tmp, secs, hz)
    oc = offcpu_truth_offcputime(B, secs) if shutil.which("offcputime") else None
    T.section(f"13. Off-CPU truth: bench_offmix (-O2 -fomit-frame-pointer) {secs} s; "
              f"prof-record --wall -F {hz} against libbpf-tools offcputime -p",
              ("thread", "on", "off", "(on+off)/(wall x F)", "off reaching start",
               "off in its function", "offcputime off-CPU s", "offcputime in its function",
               "offcputime reaching start"))
    for c in OFFMIX_FN:
        row = [c]
        if bp:
            p = bp[c]
            tot = p["on"] + p["off"]
            row += [str(p["on"]), str(p["off"]), f"{tot / (secs * hz):.2f}",
                    pct((p["offc"], p["off"])), pct((p["fn"], p["off"]))]
        else:
            row += ["failed"] + [""] * 4
        if oc:
            o = oc[c]
            row += [f"{o['us'] / 1e6:.2f}", pct((o["fn"], o["us"])).replace(f" of {o['us']}", ""),
                    pct((o["start"], o["us"])).replace(f" of {o['us']}", "")]
        else:
            row += ["n/a", "", ""]
        T.row(*row)
    offcpu_cost(args, B, T, R, tmp)
    R["offcpu"] = {"truth": bp, "offcputime": oc}
    part_per_thread(args, B, T, R, secs)


def per_thread_run(B, tmp, hz, secs, nthreads, per_thread):
    """prof-record -p (with or without --per-thread) of the ratio workload
    on nthreads threads: recorder CPU, file size, rows.  -p, not -a: on a
    shared machine the other processes' rows would drown the difference."""
    w = spawn([B["ratio"], str(secs + 3), str(nthreads)], stdout=subprocess.DEVNULL)
    time.sleep(0.5)
    out = os.path.join(tmp, f"pt-{hz}-{nthreads}-{int(per_thread)}.bprof")
    b = record_bprof(B, hz, out, secs, extra=("-p", str(w.pid)) + (("--per-thread",) if per_thread else ()))
    stop(w)
    dump = run([B["dump"], out], check=False).stdout
    b["rows"] = sum(1 for line in dump.splitlines() if line.startswith("count "))
    os.unlink(out)
    return b


def part_per_thread(args, B, T, R, secs):
    """13c. What prof-record --per-thread costs (issue 30): a count per
    thread multiplies the rows of a thread pool running one code by its
    threads; the question is what that does to the file and the recorder."""
    tmp = STATE["tmp"]
    T.section(f"13c. --per-thread cost: the ratio workload (N threads, one code) {secs} s, "
              "recorded with -p; rows = count rows in the file",
              ("", "rows", "rows --per-thread", "file", "file --per-thread", "size x",
               "recorder CPU", "CPU --per-thread"))
    R["per_thread"] = {}
    for hz in (99, 999):
        for n in (2, 32):
            log(f"per-thread: {n} threads at {hz} Hz (load {loadavg()})")
            a = per_thread_run(B, tmp, hz, secs, n, False)
            b = per_thread_run(B, tmp, hz, secs, n, True)
            R["per_thread"][f"{hz}-{n}"] = {k: (a[k], b[k]) for k in ("rows", "size", "cpu")}
            T.row(f"{hz} Hz, {n} threads", a["rows"], b["rows"], fmt_b(a["size"]),
                  fmt_b(b["size"]), ratio(b["size"], a["size"]), fmt_s(a["cpu"]), fmt_s(b["cpu"]))


NUM = "13"
BPF_STATS = True  # runs while kernel.bpf_stats_enabled is on


def measure(args, B, T, R):
    part_offcpu(args, B, T, R)
