# SPDX-License-Identifier: Apache-2.0
"""Part 6 of tools/bench/run.

Unwinding: the share of samples whose user stack reaches the start frames
(__libc_start_call_main, start_thread) on Debian's python3, xz, sha256sum,
sort, cc1 and the -fomit-frame-pointer unwind workload, for prof-record
--unwind=auto and =fp against perf --call-graph dwarf and perf -g on the
same command; the unwind tables built; the BPF run time per sample with
frame pointers vs the .eh_frame walker vs a minimal stack-counting program
(bpftrace's profile probe); and (6c, second table) the current recorder
against the --baseline one (default a0d852c, built once in
BUILD-base/COMMIT): BPF ns per sample and per frame walked (the recording's
own count, prof-report --info) of --unwind=auto at 999 Hz on uw-gcc's
recurse (40 frames without frame pointers), one copy per CPU, recorded
system-wide, 5 recordings of each (--quick: 3) alternating, median and
range.

Alone: tools/bench/run --part 6 [--quick]; --part 6c for 6c alone
(6a and 6b run together).
"""
import base64
import os
import re
import shutil
import subprocess
import time

from benchlib import (BASELINE_REV, NCPU, START_FRAMES, STATE, baseline_recorder, fmt_b, fmt_ns, fmt_us, fsize,
                      loadavg, log, med, pct, perf_env, ratio, record_bprof, record_minimal, run,
                      spawn, spread, start_load, stop, wants)


# ---------------------------------------------------------------- part 6 --
# Unwinding: how many samples reach the start frames, per program, for
# bprof's two modes and perf's two call-graph modes, on the same command;
# and what the .eh_frame unwinder costs per sample in BPF.

def unwind_programs(B, tmp):
    """(label, comm, argv): Debian's own programs (no frame pointers) and
    the unwind workload built -O2 -fomit-frame-pointer."""
    data = os.path.join(tmp, "uw-data.txt")
    with open(data, "wb") as f:
        f.write(base64.encodebytes(os.urandom(6_000_000)))
    small = os.path.join(tmp, "uw-small.txt")
    with open(data, "rb") as f, open(small, "wb") as g:
        g.write(f.read(2_000_000))
    big_c = os.path.join(tmp, "uw-big.c")
    with open(big_c, "w") as f:
        for i in range(600):
            f.write(f"int f{i}(int *a, int n) {{ int s = 0; for (int i = 0; i < n; i++) {{ "
                    f"s += a[i] * {i} + (a[i] >> 3); if (s > {i * 7}) s ^= a[(i + {i}) % n]; }} "
                    "return s; }\n")
    py = ("import json\nd = [{'k': i, 'v': str(i) * 3} for i in range(150000)]\n"
          "for _ in range(5):\n    d = json.loads(json.dumps(d)); d.sort(key=lambda x: x['v'])\n")
    return [
        ("python3 (json)", "python3", ["/usr/bin/python3", "-c", py]),
        ("xz -6 -T1", "xz", ["/usr/bin/xz", "-6", "-T1", "-c", small]),
        ("sha256sum", "sha256sum", ["/usr/bin/sha256sum"] + [data] * 30),
        ("sort", "sort", ["/usr/bin/sort", "-o", "/dev/null", data, data]),
        ("gcc -O2 (cc1)", "cc1", ["/usr/bin/gcc", "-O2", "-c", "-o", os.devnull, big_c]),
        ("uw-gcc (-fomit-frame-pointer)", "uw-gcc",
         [B["uw-gcc"], "0.4", "qsort", "recurse", "threads", "signal", "plt", "leaf", "dlopen"]),
    ]


def share_bprof(B, rec, comm):
    r = run([B["prof-report"], "-q", "-f", "-U", rec], check=False)
    tot = comp = 0
    for line in r.stdout.splitlines():
        stack, _, n = line.rpartition(" ")
        frames = stack.split(";")
        if frames[0] != comm or not n.isdigit():
            continue
        tot += int(n)
        if any(f in START_FRAMES for f in frames):
            comp += int(n)
    return comp, tot


def share_perf(data, comm, home):
    r = run(["perf", "script", "-i", data, "-F", "comm,ip,sym"], check=False, env=perf_env(home))
    tot = comp = 0
    cur = None
    for line in r.stdout.splitlines() + [""]:
        if not line.strip():
            if cur is not None and cur[0] == comm:
                tot += 1
                comp += cur[1]
            cur = None
        elif not line.startswith("\t"):
            cur = [line.split()[0], 0]  # a sample: "COMM", right-aligned
        elif cur is not None:
            w = line.split()  # a frame: "ADDR SYMBOL [(inlined)]"
            if len(w) > 1 and w[1] in START_FRAMES:
                cur[1] = 1
    return comp, tot


def part_unwind(args, B, T, R):
    tmp = STATE["tmp"]
    hz = 499
    T.section(f"6a. Complete user stacks: share of a program's samples reaching "
              f"__libc_start_call_main/start_thread ({hz} Hz, `-- COMMAND`)",
              ("program", "bprof auto", "bprof fp", "perf dwarf", "perf -g", "perf.data dwarf"))
    R["unwind"] = {}
    for label, comm, argv in unwind_programs(B, tmp):
        log(f"unwinding: {label} (load {loadavg()})")
        res = {}
        for mode in ("auto", "fp"):
            out = os.path.join(tmp, f"uw-{comm}-{mode}.bprof")
            # the tables built, not read from the cache: 6b reports their cost
            run([B["prof-record"], "-q", "-F", str(hz), f"--unwind={mode}", "--no-table-cache",
                 "-o", out, "--"] + argv, stdout=subprocess.DEVNULL)
            res[mode] = share_bprof(B, out, comm)
            if mode == "auto":
                info = run([B["prof-report"], "--info", out], check=False)
                m = re.search(r"table rows, rules, pages: +(\d+) .*built in ([0-9.]+) ms", info.stdout)
                k = re.search(r"kernel memory for the tables: +([0-9.]+) MiB", info.stdout)
                res["tables"] = (m.group(1), m.group(2)) if m else None
                res["kmem"] = k.group(1) if k else None
                res["bsize"] = fsize(out)
            os.unlink(out)
        home = os.path.join(tmp, "home-uw")
        for mode, cg in (("dwarf", ["--call-graph", "dwarf"]), ("perf-fp", ["-g"])):
            data = os.path.join(tmp, f"uw-{comm}-{mode}.data")
            run(["perf", "record", "-q", "-e", "cpu-clock", "-F", str(hz)] + cg
                + ["-o", data, "--"] + argv, check=False, stdout=subprocess.DEVNULL,
                env=perf_env(home))
            res[mode] = share_perf(data, comm, home)
            if mode == "dwarf":
                res["psize"] = fsize(data)
            os.unlink(data)
        R["unwind"][label] = res
        T.row(label, pct(res["auto"]), pct(res["fp"]), pct(res["dwarf"]), pct(res["perf-fp"]),
              f"{fmt_b(res['psize'])} (.bprof {fmt_b(res['bsize'])})")
    T.section("6b. The unwind tables bprof built while recording (prof-report --info; "
              "--no-table-cache)",
              ("program", "rows", "build time", "kernel memory"))
    for label, res in R["unwind"].items():
        t = res.get("tables")
        T.row(label, t[0] if t else "n/a", f"{t[1]} ms" if t else "n/a",
              f"{res['kmem']} MiB" if res.get("kmem") else "n/a")


def unwind_cost(args, B, T, R):
    """6c: BPF cost per sample, fp vs the .eh_frame walker vs minimal."""
    tmp = STATE["tmp"]
    # BPF cost per sample, frame pointers vs the .eh_frame walker, on a
    # frame-pointer workload (demo) and one without (uw-gcc), both CPUs busy
    D = min(args.duration, 10)
    have_bt = shutil.which("bpftrace") is not None
    T.section(f"6c. BPF program run time per sample, all CPUs busy, {D} s "
              "(bpf_stats run_time_ns / run_cnt); minimal: bpftrace counting "
              "@[kstack, ustack, comm, pid]",
              ("workload, rate", "minimal", "--unwind=fp", "--unwind=auto", "fp/min", "auto/min",
               "auto/fp"))
    modes = ["qsort", "recurse", "signal", "plt", "leaf", "dlopen"]
    for wl in ("demo", "uw-gcc"):
        for rate in (99, 999):
            per = {}
            for mode in ("min", "fp", "auto") if have_bt else ("fp", "auto"):
                if wl == "demo":
                    load = start_load(B, D + 30)
                    loads = [load]
                else:
                    n = int((D + 30) / (0.5 * len(modes))) + 1
                    loads = [spawn([B["uw-gcc"], "0.5"] + modes * n, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL) for _ in range(NCPU)]
                    time.sleep(0.5)
                if mode == "min":
                    b = record_minimal(rate, D)
                else:
                    b = record_bprof(B, rate, os.path.join(tmp, f"c-{wl}-{rate}-{mode}.bprof"), D,
                                     [f"--unwind={mode}"])
                for p in loads:
                    stop(p)
                per[mode] = b["runs_ns"] / b["runs"] / 1e3 if b["runs"] else None
            R.setdefault("unwind_cost", {})[(wl, rate)] = per
            mn = per.get("min")
            T.row(f"{wl}, {rate} Hz", fmt_us(mn) if have_bt else "n/a (no bpftrace)",
                  fmt_us(per["fp"]), fmt_us(per["auto"]), ratio(per["fp"], mn) if mn else "",
                  ratio(per["auto"], mn) if mn else "", ratio(per["auto"], per["fp"]))


def walk_counts(B, path):
    """(user stacks walked, frames walked: from tables + by frame pointer)
    of a recording, from prof-report --info (None where it does not say)."""
    info = run([B["prof-report"], "--info", path], check=False).stdout
    m = re.search(r"user stacks walked: +(\d+)", info)
    f = re.search(r"frames from tables, by fp: +(\d+), (\d+)", info)
    return (int(m.group(1)) if m else None,
            int(f.group(1)) + int(f.group(2)) if f else None)


def unwind_cost_baseline(args, B, T, R):
    """6c, the current recorder against the baseline one: BPF time per
    sample and per frame walked of --unwind=auto at 999 Hz on uw-gcc's
    recurse (40 frames without frame pointers below mode_recurse), one copy
    per CPU, system-wide recordings of D s, the two recorders alternating
    (ABBA...), each with its own warm table cache."""
    tmp = STATE["tmp"]
    D = min(args.duration, 10)
    rate, reps = 999, (3 if args.quick else 5)
    base, blabel = baseline_recorder(args, BASELINE_REV)
    recs = {"cur": B["prof-record"]}
    if base:
        recs["base"] = base
    log(f"unwinding cost: current and baseline {blabel}, recurse at {rate} Hz, {reps} x {D} s "
        f"each (load {loadavg()})")
    res = {w: [] for w in recs}
    for i in range(reps):
        for w in (list(recs) if i % 2 == 0 else list(recs)[::-1]):
            loads = [spawn([B["uw-gcc"], str(D + 30), "recurse"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL) for _ in range(NCPU)]
            time.sleep(0.5)
            out = os.path.join(tmp, f"c-base-{w}-{i}.bprof")
            b = record_bprof({"prof-record": recs[w]}, rate, out, D,
                             ["--table-cache", os.path.join(tmp, f"tc-6c-{w}")])
            for p in loads:
                stop(p)
            stacks, frames = walk_counts(B, out)
            os.unlink(out)
            res[w].append({"ns": b["runs_ns"], "runs": b["runs"], "stacks": stacks,
                           "frames": frames})
    for w in recs:
        shutil.rmtree(os.path.join(tmp, f"tc-6c-{w}"), ignore_errors=True)

    def per(w, what):
        return [r["ns"] / r[what] / 1e3 for r in res.get(w, []) if r.get(what)]

    T.section(f"6c. BPF time per sample and per frame walked, current vs baseline {blabel}: "
              f"uw-gcc recurse (40 frames, no frame pointers) on all CPUs, {rate} Hz, "
              f"--unwind=auto, median (min-max) of {reps} x {D} s alternating",
              ("recorder", "samples", "frames/stack", "BPF/sample", "BPF/frame",
               "vs baseline (sample)", "vs baseline (frame)"))
    R["unwind_base"] = {"label": blabel}
    for w, label in (("cur", "current"), ("base", f"baseline {blabel}")):
        if w not in res:
            T.row(label, "n/a (does not build)")
            continue
        rs = res[w]
        fs = [r["frames"] / r["stacks"] for r in rs if r.get("frames") and r.get("stacks")]
        ps, pf = per(w, "runs"), per(w, "frames")
        R["unwind_base"][w] = {"sample": med(ps) if ps else None, "frame": med(pf) if pf else None}
        bs, bf = per("base", "runs"), per("base", "frames")
        T.row(label, f"{med([r['runs'] for r in rs]):.0f}", f"{med(fs):.1f}" if fs else "n/a",
              spread(ps, fmt_us), spread([x * 1e3 for x in pf], fmt_ns) if pf else "n/a",
              ratio(med(ps), med(bs)) if ps and bs else "n/a",
              ratio(med(pf), med(bf)) if pf and bf else "n/a")


NUM = "6"
SUBPARTS = "abc"  # --part 6c: 6c alone (6b reports 6a's recordings: either runs both)
BPF_STATS = True  # runs while kernel.bpf_stats_enabled is on


def measure(args, B, T, R):
    if wants(args, NUM, "a") or wants(args, NUM, "b"):
        part_unwind(args, B, T, R)
    if wants(args, NUM, "c"):
        unwind_cost(args, B, T, R)
        unwind_cost_baseline(args, B, T, R)
