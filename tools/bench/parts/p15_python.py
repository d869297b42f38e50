# SPDX-License-Identifier: Apache-2.0
"""Part 15 of tools/bench/run.

Python frames (issue 29): tests/workloads/python/pywork.py (recursion, a
generator, a callback from C, a thread) under Debian's python3.11 and the
pyenv 3.11/3.12/3.13 builds present, recorded by prof-record: the share of
Python samples whose chain is right by function and by line (pycheck.py,
against the script's syntax tree) and that reach the thread's entry; beside
perf record --call-graph dwarf of python3.12 -X perf (names only); BPF ns
per sample and file size with and without --no-python; the slowdown of a
fixed number of rounds under each against none.

Alone: tools/bench/run --part 15 [--quick].
"""
import os
import re
import shutil
import subprocess
import time

from benchlib import (BpfStats, REPO, STATE, fmt_b, fsize, loadavg, log, med, pct, perf_env, ratio,
                      run, spawn, wait4)


# --------------------------------------------------------------- part 15 --
# Python frames: right chains per interpreter, beside perf + -X perf.

PYW = os.path.join(REPO, "tests/workloads/python")


def python_interpreters():
    root = run(["pyenv", "root"], check=False).stdout.strip() if shutil.which("pyenv") else ""
    root = root or os.path.expanduser("~/.pyenv")
    out = []
    if os.access("/usr/bin/python3.11", os.X_OK):
        out.append(("debian 3.11", "/usr/bin/python3.11"))
    for v in ("3.11.7", "3.12.1", "3.13.0"):
        path = os.path.join(root, "versions", v, "bin", "python" + v.rsplit(".", 1)[0])
        if os.access(path, os.X_OK):
            out.append((v, path))
    return out


def pycheck(folded, names_only=False):
    cmd = ["python3", os.path.join(PYW, "pycheck.py"), os.path.join(PYW, "pywork.py"), folded,
           "--roots", "<module>,Worker.spin"] + (["--names-only"] if names_only else [])
    r = run(cmd, check=False)
    d = {}
    for line in r.stdout.splitlines():
        k, _, v = line.partition(" ")
        if k in ("samples", "python_samples", "valid", "complete"):
            d[k] = int(v)
    d["native_complete"] = native_complete(folded)
    return d


def native_complete(folded):
    """Samples with a Python frame (bprof: "name (file.py:N)"; perf -X perf:
    "py::name:file.py") whose native stack reaches the thread's start."""
    start = re.compile(r";(__libc_start_call_main|start_thread);")
    py = re.compile(r"(\.py:[0-9]+\)|py::)")
    n = 0
    with open(folded) as f:
        for line in f:
            stack, _, count = line.rstrip("\n").rpartition(" ")
            if py.search(stack) and start.search(";" + stack + ";"):
                n += int(count)
    return n


def python_bprof(B, py, tmp, hz, secs, extra=()):
    """prof-record -p of the running script (not -- COMMAND: the recorder's
    rusage would then include the script's CPU, which it waits for)."""
    out = os.path.join(tmp, "py.bprof")
    if os.path.exists(out):
        os.unlink(out)
    w = spawn([py, os.path.join(PYW, "pywork.py"), str(secs + 2)],
              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    p = spawn([B["prof-record"], "-q", "-F", str(hz), *extra, "-p", str(w.pid), "-o", out,
               str(secs)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    st = BpfStats(p.pid)
    rc, cpu, _, _ = wait4(p, st.poll)
    w.wait()
    runs, runs_ns = st.sample_runs()
    folded = out + ".folded"
    with open(folded, "w") as f:
        subprocess.run([B["prof-report"], "-q", "-f", out], stdout=f, check=False)
    d = pycheck(folded)
    d.update({"rc": rc, "cpu": cpu, "ns": runs_ns / runs if runs else None, "size": fsize(out)})
    return d


def python_perf(py, tmp, hz, secs):
    """perf record --call-graph dwarf of python3.12 -X perf (this build keeps no
    frame pointers: -g stops after a frame or two): the trampolines name Python
    functions (py::qualname:file), no lines."""
    data, home = os.path.join(tmp, "py.data"), os.path.join(tmp, "home-py")
    run(["perf", "record", "-q", "-e", "cpu-clock", "-F", str(hz), "--call-graph", "dwarf", "-o", data, "--", py,
         "-X", "perf", os.path.join(PYW, "pywork.py"), str(secs)], check=False,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=perf_env(home))
    r = run(["perf", "script", "-i", data, "-F", "ip,sym"], check=False, env=perf_env(home))
    stacks, cur = {}, []

    def flush():
        if cur:
            key = ";".join(reversed(cur))
            stacks[key] = stacks.get(key, 0) + 1
    for line in r.stdout.splitlines():
        if not line.strip():
            flush()
            cur = []
            continue
        parts = line.split(None, 1)
        cur.append(parts[1].strip() if len(parts) > 1 else "[unknown]")
    flush()
    folded = data + ".folded"
    with open(folded, "w") as f:
        for k, v in stacks.items():
            f.write(f"{k} {v}\n")
    d = pycheck(folded, names_only=True)
    d["size"] = fsize(data)
    return d


def python_rounds(py, rounds):
    r = run([py, os.path.join(PYW, "pywork.py"), f"n={rounds}"], check=False)
    try:
        return float(r.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None


def part_python(args, B, T, R):
    tmp = STATE["tmp"]
    secs, hz, rounds, reps = (4, 199, 80, 3) if args.quick else (10, 199, 200, 5)
    pys = python_interpreters()
    log(f"python: {', '.join(v for v, _ in pys)}, {secs} s at {hz} Hz (load {loadavg()})")
    T.section(f"15. Python frames: pywork.py {secs} s at {hz} Hz; a sample's chain is right when "
              "every frame of the script is in the function it names and every caller on a line "
              "naming its callee (pycheck.py); perf: python3.12 -X perf, names only",
              ("interpreter", "Python samples", "right function+line", "reaching the entry",
               "native stack to the thread's start", "BPF ns/sample", "--no-python ns/sample", "recorder CPU s", "--no-python CPU s",
               ".bprof", "--no-python .bprof"))
    R["python"] = {}
    for v, py in pys:
        a = python_bprof(B, py, tmp, hz, secs)
        b = python_bprof(B, py, tmp, hz, secs, ("--no-python",))
        R["python"][v] = (a, b)
        T.row(v, str(a.get("python_samples", 0)),
              pct((a.get("valid", 0), a.get("python_samples", 0))),
              pct((a.get("complete", 0), a.get("python_samples", 0))),
              pct((a.get("native_complete", 0), a.get("python_samples", 0))),
              f"{a['ns']:.0f}" if a["ns"] else "n/a", f"{b['ns']:.0f}" if b["ns"] else "n/a",
              f"{a['cpu']:.2f}", f"{b['cpu']:.2f}", fmt_b(a["size"]), fmt_b(b["size"]))
    p312 = dict(pys).get("3.12.1")
    if p312 and shutil.which("perf"):
        d = python_perf(p312, tmp, hz, secs)
        R["python"]["perf"] = d
        T.row("perf + 3.12 -X perf", str(d.get("python_samples", 0)),
              pct((d.get("valid", 0), d.get("python_samples", 0))) + " (names only)",
              pct((d.get("complete", 0), d.get("python_samples", 0))),
              pct((d.get("native_complete", 0), d.get("python_samples", 0))), "", "", "", "", "",
              fmt_b(d["size"]) + " perf.data")
    # slowdown of a fixed amount of work (python3.12 where present)
    py = p312 or (pys[0][1] if pys else None)
    if not py:
        return
    T.section(f"15b. Python workload slowdown: pywork.py n={rounds} rounds ({py}), median of {reps}",
              ("", "seconds", "vs none"))
    times = {k: [] for k in ("none", "prof-record", "prof-record --no-python", "perf -X perf")}
    for _ in range(reps):
        times["none"].append(python_rounds(py, rounds))
        for k, extra in (("prof-record", ()), ("prof-record --no-python", ("--no-python",))):
            out = os.path.join(tmp, "slow.bprof")
            r = run([B["prof-record"], "-q", "-F", str(hz), *extra, "--force", "-o", out, "--", py,
                     os.path.join(PYW, "pywork.py"), f"n={rounds}"], check=False)
            try:
                times[k].append(float(r.stdout.strip().splitlines()[-1]))
            except (ValueError, IndexError):
                pass
        if p312 and shutil.which("perf"):
            r = run(["perf", "record", "-q", "-e", "cpu-clock", "-F", str(hz), "--call-graph", "dwarf", "-o",
                     os.path.join(tmp, "slow.data"), "--", py, "-X", "perf",
                     os.path.join(PYW, "pywork.py"), f"n={rounds}"], check=False,
                    env=perf_env(os.path.join(tmp, "home-py")))
            try:
                times["perf -X perf"].append(float(r.stdout.strip().splitlines()[-1]))
            except (ValueError, IndexError):
                pass
    base = med([t for t in times["none"] if t])
    for k, v in times.items():
        v = [t for t in v if t]
        if v:
            T.row(k, f"{med(v):.2f}", ratio(med(v), base) if k != "none" else "1.00")
    R["python_slow"] = times


NUM = "15"
BPF_STATS = True  # runs while kernel.bpf_stats_enabled is on


def measure(args, B, T, R):
    part_python(args, B, T, R)
