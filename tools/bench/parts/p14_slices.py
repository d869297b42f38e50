# SPDX-License-Identifier: Apache-2.0
"""Part 14 of tools/bench/run.

Time slices (issue 30): prof-record with --slice=20 (the default) and
--slice=0 recording the same 30 s at once (--quick: 8 s), all CPUs, at 99
and 999 Hz, on the demo load: recorder CPU, BPF run time, file size, count
rows and prof-report -f time of each; then a --rotate directory (10 minutes,
--rotate=60; --quick: 20 s, --rotate=5) through prof-report --heatmap: the
page's size, the time to write it, and its load time in headless Chromium
(tests/export/heatmap-load.js; skipped without node and chromium).

Alone: tools/bench/run --part 14 [--quick].
"""
import os
import re
import shutil
import subprocess

from benchlib import (BpfStats, REPO, STATE, fmt_b, fmt_kib, fmt_s, fsize, loadavg, log, run,
                      spawn, start_load, stop, timed, wait4)


# ---------------------------------------------------------------- part 14 --

def count_rows(B, path):
    r = run([B["dump"], path], check=False)
    return sum(1 for l in r.stdout.splitlines() if l.startswith("count ") or l.startswith("offcount "))


def report_time(B, path, extra=()):
    """prof-report -f, the second of two runs (the symbol cache warm)."""
    out = os.path.join(STATE["tmp"], "slices-report.txt")
    timed([B["prof-report"], "-q", "-f", *extra, path], stdout=out)
    wall, _, rss, rc = timed([B["prof-report"], "-q", "-f", *extra, path], stdout=out)
    return wall, rss


def heatmap_load(page):
    """The page's load time in headless Chromium (ms), or None."""
    script = os.path.join(REPO, "tests/export/heatmap-load.js")
    if not (shutil.which("node") and shutil.which("chromium") and os.path.exists(script)):
        return None
    r = run([os.path.join(REPO, "tests/export/npm-setup.sh"),
             os.path.join(STATE.get("build", REPO + "/build"), "tests/export/npm")], check=False)
    mods = r.stdout.strip().splitlines()[-1] if r.returncode == 0 and r.stdout.strip() else ""
    if not os.path.isdir(mods):
        log("  ! heatmap: no npm modules (tests/export/npm-setup.sh failed): load time not measured")
        return None
    env = dict(os.environ, NODE_PATH=mods)
    r = run(["node", script, page], check=False, env=env)
    log(f"  heatmap-load: {r.stdout.strip()}")
    m = re.search(r"load_ms=([\d.]+)", r.stdout)
    if not m:
        log(f"  ! heatmap-load: {r.stdout[-300:]} {r.stderr[-300:]}")
    return float(m.group(1)) if m else None


def part_slices(args, B, T, R):
    """Time slices: what --slice costs against --slice=0 on the same load,
    recorded at once; and the heatmap of a long --rotate directory."""
    tmp = STATE["tmp"]
    secs = 8 if args.quick else 30
    T.section(f"14. Time slices: --slice=20 vs --slice=0, {secs} s at once, all CPUs, demo load",
              ("", "CPU", "BPF", "size", "rows", "report", "x size", "x CPU"))
    R["slices"] = {}
    for hz in (99, 999):
        log(f"slices: {hz} Hz, {secs} s, with and without (load {loadavg()})")
        load = start_load(B, secs + 10)
        res = {}
        procs = {}
        for k, sl in (("on", "20"), ("off", "0")):
            out = os.path.join(tmp, f"slices-{k}-{hz}.bprof")
            lf = open(out + ".log", "w")
            procs[k] = (spawn([B["prof-record"], "-F", str(hz), f"--slice={sl}", "-o", out, str(secs)],
                              stdout=lf, stderr=subprocess.STDOUT), out, lf, BpfStats(None))
        for k, (p, out, lf, st) in procs.items():
            st.pid = p.pid
        polls = [v[3].poll for v in procs.values()]
        for k, (p, out, lf, st) in procs.items():
            rc, cpu, rss, wall = wait4(p, lambda: [f() for f in polls])
            lf.close()
            if rc != 0:
                log(f"  ! prof-record --slice ({k}): exit {rc}: {open(lf.name).read()[-300:]}")
            rep, rep_rss = report_time(B, out)
            res[k] = {"cpu": cpu, "bpf": st.total_ns() / 1e9, "size": fsize(out),
                      "rows": count_rows(B, out), "report": rep, "rss": rep_rss}
        stop(load)
        on, off = res["on"], res["off"]
        xs = on["size"] / off["size"] if off["size"] else None
        xc = (on["cpu"] + on["bpf"]) / (off["cpu"] + off["bpf"]) if off["cpu"] + off["bpf"] else None
        for k, lab in (("off", f"{hz} Hz --slice=0"), ("on", f"{hz} Hz --slice=20")):
            v = res[k]
            T.row(lab, fmt_s(v["cpu"]), fmt_s(v["bpf"]), fmt_b(v["size"]), str(v["rows"]),
                  fmt_s(v["report"]), f"{xs:.2f}" if k == "on" and xs else "",
                  f"{xc:.2f}" if k == "on" and xc else "")
        R["slices"][hz] = {"on": on, "off": off, "x_size": xs, "x_cpu": xc}

    # the heatmap of a long --rotate directory
    if not getattr(args, "slices_heatmap", True):
        return
    hsecs, every = (20, 5) if args.quick else (600, 60)
    d = os.path.join(tmp, "slices-rotate")
    log(f"slices: --rotate={every} over {hsecs} s at 99 Hz for the heatmap (load {loadavg()})")
    load = start_load(B, hsecs + 10)
    p = spawn([B["prof-record"], "-q", "-F", "99", f"--rotate={every}", "-o", d, str(hsecs)],
              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait4(p)
    stop(load)
    page = os.path.join(tmp, "heatmap.html")
    wall, _, rss, rc = timed([B["prof-report"], "-q", f"--heatmap={page}", d])
    files = len([f for f in os.listdir(d) if f.endswith(".bprof")]) if os.path.isdir(d) else 0
    load_ms = heatmap_load(page) if rc == 0 else None
    T.section(f"    heatmap of a --rotate={every} directory over {hsecs} s at 99 Hz ({files} files)",
              ("", "page", "write", "peak RSS", "Chromium load"))
    T.row("prof-report --heatmap", fmt_b(fsize(page)) if rc == 0 else "failed", fmt_s(wall),
          fmt_kib(rss), f"{load_ms:.0f} ms" if load_ms is not None else "not measured")
    R["slices"]["heatmap"] = {"files": files, "size": fsize(page) if rc == 0 else None,
                              "write": wall, "load_ms": load_ms}


NUM = "14"
BPF_STATS = True  # runs while kernel.bpf_stats_enabled is on


def measure(args, B, T, R):
    part_slices(args, B, T, R)
