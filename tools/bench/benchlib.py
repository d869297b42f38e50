# SPDX-License-Identifier: Apache-2.0
"""What the parts of tools/bench/run share."""
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NCPU = os.cpu_count() or 1

# ---------------------------------------------------------------- plumbing --

CHILDREN = []          # Popen objects we started (killed at exit if alive)
STATE = {"sysctl": None, "tmp": None, "keep": False}
LOG = None


def log(msg):
    line = f"[{time.strftime('%H:%M:%S')}] {msg}"
    print(line, file=sys.stderr, flush=True)
    if LOG:
        LOG.write(line + "\n")
        LOG.flush()


def die(msg):
    log(f"bench: {msg}")
    sys.exit(1)


def cleanup():
    for p in CHILDREN:
        if p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGKILL)  # its own session: only ours
            except (ProcessLookupError, PermissionError):
                pass
            try:
                p.wait(timeout=5)
            except Exception:
                pass
    if STATE["sysctl"] is not None:
        try:
            with open("/proc/sys/kernel/bpf_stats_enabled", "w") as f:
                f.write(STATE["sysctl"])
        except OSError:
            pass
        STATE["sysctl"] = None
    if STATE["tmp"] and not STATE["keep"]:
        shutil.rmtree(STATE["tmp"], ignore_errors=True)
        STATE["tmp"] = None


def on_signal(sig, frame):
    log(f"bench: {signal.Signals(sig).name}: cleaning up"
        + (" (time limit reached; --timeout)" if sig == signal.SIGALRM else ""))
    cleanup()
    sys.exit(128 + sig)


def spawn(cmd, **kw):
    kw.setdefault("stdin", subprocess.DEVNULL)
    p = subprocess.Popen(cmd, start_new_session=True, **kw)
    CHILDREN.append(p)
    return p


def wait4(p, poll=None, interval=0.1):
    """Wait for p with wait4(); call poll() every interval while it runs.
    Returns (exit code, user+sys CPU seconds, maxrss KiB, wall seconds)."""
    t0 = time.monotonic()
    while True:
        pid, status, ru = os.wait4(p.pid, os.WNOHANG)
        if pid:
            break
        if poll:
            poll()
        time.sleep(interval)
    p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, ru.ru_utime + ru.ru_stime, ru.ru_maxrss, time.monotonic() - t0


def run(cmd, check=True, **kw):
    kw.setdefault("stdout", subprocess.PIPE)
    kw.setdefault("stderr", subprocess.PIPE)
    kw.setdefault("text", True)
    r = subprocess.run(cmd, **kw)
    if check and r.returncode != 0:
        die(f"{' '.join(map(str, cmd))}: exit {r.returncode}\n{r.stderr}")
    return r


def timed(cmd, stdin=None, stdout=None, env=None):
    """Run cmd under /usr/bin/time -f '%e %M'.  Returns (wall s measured by
    us with a monotonic clock, %e, peak RSS KiB, exit code)."""
    tf = os.path.join(STATE["tmp"], "time.out")
    fin = open(stdin) if stdin else subprocess.DEVNULL
    fout = open(stdout, "w") if stdout else subprocess.DEVNULL
    t0 = time.monotonic()
    p = spawn(["/usr/bin/time", "-f", "%e %M", "-o", tf] + cmd, stdin=fin, stdout=fout,
              stderr=subprocess.PIPE, env=env)
    _, err = p.communicate()
    wall = time.monotonic() - t0
    for f in (fin, fout):
        if f is not subprocess.DEVNULL:
            f.close()
    with open(tf) as f:
        last = f.read().strip().splitlines()[-1].split()
    if p.returncode != 0:
        log(f"  ! {' '.join(cmd)}: exit {p.returncode}: {err.decode(errors='replace')[-400:]}")
    return wall, float(last[0]), int(last[1]), p.returncode


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def fsize(path):
    return os.path.getsize(path)


def du(path):
    total = 0
    for root, dirs, files in os.walk(path):
        for n in files:
            try:
                total += os.lstat(os.path.join(root, n)).st_size
            except OSError:
                pass
    return total


def med(xs):
    return statistics.median(xs)


# ---------------------------------------------------------------- formatting --

def fmt_s(x):
    if x is None:
        return "n/a"
    if x >= 100:
        return f"{x:.0f} s"
    if x >= 1:
        return f"{x:.2f} s"
    if x >= 0.001:
        return f"{x * 1e3:.1f} ms"
    return f"{x * 1e6:.0f} us"


def fmt_b(n):
    if n is None:
        return "n/a"
    for unit, div in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= div:
            return f"{n / div:.1f} {unit}"
    return f"{n} B"


def fmt_kib(k):
    return "n/a" if k is None else fmt_b(k * 1024)


def fmt_ns(x):
    return "n/a" if x is None else (f"{x:.1f} ns" if x < 100 else f"{x:.0f} ns")


def fmt_us(x):
    return "n/a" if x is None else (f"{x:.1f} us" if x < 100 else f"{x:.0f} us")


def ratio(a, b):
    if a is None or b is None or b == 0:
        return "n/a"
    r = a / b
    if r >= 10:
        return f"{r:.0f}x" if r < 1000 else f"{r:.3g}x"
    return f"{r:.3f}x" if r < 0.1 else f"{r:.2f}x"


def pct(c):
    comp, tot = c
    return f"{100 * comp / tot:.1f} % of {tot}" if tot else "n/a"


class Table:
    def __init__(self):
        self.sections = []

    def section(self, title, head=("", "bprof", "perf", "bprof/perf")):
        self.sections.append((title, head, []))

    def row(self, *cells):
        self.sections[-1][2].append(tuple(str(c) for c in cells))

    def to_json(self):
        """The sections as data: [{"title", "head", "rows"}], cells as printed."""
        return [{"title": t, "head": list(h), "rows": [list(r) for r in rows]}
                for t, h, rows in self.sections]

    def render(self):
        out = []
        for title, head, rows in self.sections:
            ncol = max([len(head)] + [len(r) for r in rows])
            allr = [tuple(head) + ("",) * (ncol - len(head))] + \
                   [r + ("",) * (ncol - len(r)) for r in rows]
            w = [max(len(r[i]) for r in allr) for i in range(ncol)]
            out.append("")
            out.append(title)
            for j, r in enumerate(allr):
                out.append("  " + "  ".join(
                    (c.ljust(w[i]) if i == 0 else c.rjust(w[i])) for i, c in enumerate(r)).rstrip())
                if j == 0:
                    out.append("  " + "  ".join("-" * x for x in w))
        return "\n".join(out)


# ---------------------------------------------------------------- recorders --

# the frames a complete user stack reaches (parts 6, 12, 13)
START_FRAMES = ("__libc_start_call_main", "start_thread")


_PROG_NAMES = {}


def prog_name(prog_id):
    """A BPF program's name (bpftool), cached by id."""
    if prog_id not in _PROG_NAMES:
        r = run(["bpftool", "prog", "show", "id", str(prog_id), "-j"], check=False)
        try:
            _PROG_NAMES[prog_id] = json.loads(r.stdout).get("name", str(prog_id))
        except ValueError:
            _PROG_NAMES[prog_id] = str(prog_id)
    return _PROG_NAMES[prog_id]


def bpf_prog_fds(pid):
    """{fd: fdinfo path} of the BPF programs process pid holds."""
    res = {}
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                if os.readlink(f"/proc/{pid}/fd/{fd}") == "anon_inode:bpf-prog":
                    res[fd] = f"/proc/{pid}/fdinfo/{fd}"
            except OSError:
                pass
    except OSError:
        pass
    return res


def read_fdinfo(path):
    d = {}
    try:
        with open(path) as f:
            for line in f:
                k, _, v = line.partition(":")
                d[k.strip()] = v.strip()
    except OSError:
        return None
    return d


class BpfStats:
    """Polls the run_time_ns / run_cnt of every BPF program a process holds
    (the same counters `bpftool prog show` prints), keeping the last
    values seen: programs vanish when the recorder exits."""

    def __init__(self, pid):
        self.pid, self.fds, self.last, self.rescan = pid, {}, {}, 0.0

    def poll(self):
        now = time.monotonic()
        if now >= self.rescan:
            self.fds.update(bpf_prog_fds(self.pid))
            self.rescan = now + 1.0
        for fd, path in list(self.fds.items()):
            d = read_fdinfo(path)
            if d and "run_time_ns" in d:
                self.last[d.get("prog_id", fd)] = (int(d.get("prog_type", -1)),
                                                   int(d["run_time_ns"]), int(d["run_cnt"]))

    def crosscheck(self):
        """Log bpftool's view of the sampling program next to ours (once)."""
        ids = [k for k, v in self.last.items() if v[0] == 7]
        if not ids or not shutil.which("bpftool"):
            return
        r = run(["bpftool", "prog", "show", "id", str(ids[0])], check=False)
        m = re.search(r"run_time_ns (\d+) run_cnt (\d+)", r.stdout)
        self.poll()
        v = self.last[ids[0]]
        log(f"  bpftool prog show id {ids[0]}: "
            + (f"run_time_ns {m.group(1)} run_cnt {m.group(2)}" if m else "no stats")
            + f"; fdinfo right after: run_time_ns {v[1]} run_cnt {v[2]}")

    def total_ns(self):
        return sum(v[1] for v in self.last.values())

    def sample_runs(self):  # prog_type 7: BPF_PROG_TYPE_PERF_EVENT
        return self.type_runs(7)

    def type_runs(self, prog_type):  # 5: BPF_PROG_TYPE_TRACEPOINT (mapping events)
        runs = [v for v in self.last.values() if v[0] == prog_type]
        return sum(v[2] for v in runs), sum(v[1] for v in runs)

    def gens_runs(self):
        """The mapping-generation hook's runs and ns: its syscall
        tracepoint program, or the mm lock hook's three (raw tracepoints,
        by name)."""
        runs = [v for k, v in self.last.items()
                if v[0] == 5 or (v[0] == 17 and prog_name(k).startswith("handle_gen_"))]
        return sum(v[2] for v in runs), sum(v[1] for v in runs)


def start_load(B, seconds):
    """The busy workload: demo (2 threads: libc, libm, syscalls) on both CPUs."""
    p = spawn([B["demo"], str(seconds)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    return p


def stop(p):
    if p.poll() is None:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    try:
        p.wait(timeout=10)
    except Exception:
        pass


def record_bprof(B, hz, out, seconds, extra=()):
    logf = out + ".log"
    with open(logf, "w") as lf:
        p = spawn([B["prof-record"], "-F", str(hz), *extra, "-o", out, str(seconds)], stdout=lf,
                  stderr=subprocess.STDOUT)
        st = BpfStats(p.pid)
        half = time.monotonic() + seconds / 2
        checked = []

        def poll():
            st.poll()
            if not checked and time.monotonic() > half:
                checked.append(1)
                st.crosscheck()
        rc, cpu, rss, wall = wait4(p, poll)
    text = open(logf).read()
    if rc != 0 or not os.path.exists(out):
        die(f"prof-record failed (exit {rc}):\n{text}")
    m = re.search(r"(\d+) samples", text)
    runs, runs_ns = st.sample_runs()
    return {"cpu": cpu, "bpf": st.total_ns() / 1e9, "runs": runs, "runs_ns": runs_ns,
            "samples": int(m.group(1)) if m else None, "wall": wall, "rss": rss,
            "size": fsize(out), "log": text}


def record_minimal(hz, seconds):
    """The cost baseline: the smallest stack-counting profiler, bpftrace's
    profile probe counting (kernel stack, user stack, comm, pid), as bcc's
    profile does.  Its perf_event programs' run time per sample."""
    prog = (f"profile:hz:{hz} {{ @[kstack, ustack, comm, pid] = count(); }} "
            f"interval:s:{seconds} {{ exit(); }}")
    p = spawn(["bpftrace", "-e", prog], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    st = BpfStats(p.pid)
    rc, cpu, _, _ = wait4(p, st.poll)
    if rc != 0:
        log(f"  ! bpftrace exit {rc}")
    runs, runs_ns = st.sample_runs()
    return {"runs": runs, "runs_ns": runs_ns, "cpu": cpu}


def perf_env(home):
    os.makedirs(home, exist_ok=True)
    env = dict(os.environ)
    env["HOME"] = home  # keeps perf's build-id cache out of the real ~/.debug
    return env


def record_perf(hz, out, seconds, home):
    logf = out + ".log"
    with open(logf, "w") as lf:
        p = spawn(["perf", "record", "-e", "cpu-clock", "-g", "-a", "-F", str(hz), "-o", out,
                   "--", "sleep", str(seconds)], stdout=lf, stderr=subprocess.STDOUT,
                  env=perf_env(home))
        rc, cpu, rss, wall = wait4(p, lambda: None)
    text = open(logf).read()
    if rc != 0 or not os.path.exists(out):
        die(f"perf record failed (exit {rc}):\n{text}")
    m = re.search(r"\((\d+) samples\)", text)
    return {"cpu": cpu, "samples": int(m.group(1)) if m else None, "wall": wall, "rss": rss,
            "size": fsize(out), "cache": du(os.path.join(home, ".debug")), "log": text}


def wait_ready_bprof(p, logf, timeout=20):
    t_end = time.monotonic() + timeout
    while time.monotonic() < t_end:
        if p.poll() is not None:
            die(f"prof-record exited early:\n{open(logf).read()}")
        if "Sampling" in open(logf).read():
            return
        time.sleep(0.05)
    die("prof-record did not start sampling")


def wait_ready_perf(p, timeout=20):
    t_end = time.monotonic() + timeout
    while time.monotonic() < t_end:
        if p.poll() is not None:
            die("perf record exited early")
        n = 0
        try:
            for fd in os.listdir(f"/proc/{p.pid}/fd"):
                try:
                    if "perf_event" in os.readlink(f"/proc/{p.pid}/fd/{fd}"):
                        n += 1
                except OSError:
                    pass
        except OSError:
            pass
        if n >= NCPU:
            return
        time.sleep(0.05)
    die("perf record did not open its events")


# ---------------------------------------------------------------- build --

def build(args):
    bd = args.build
    if not os.path.exists(os.path.join(bd, "CMakeCache.txt")):
        log(f"configuring {bd}")
        run(["cmake", "-S", REPO, "-B", bd, "-DCMAKE_BUILD_TYPE=RelWithDebInfo"])
    targets = ["prof-record", "prof-report", "demo", "bench_fixedwork", "bench_synth",
               "bench_symaddr", "bench_ehtab", "uw-gcc", "uwdl", "bench_churn", "bench_churnlib",
               "bprof-dump", "bench_pingpong", "bench_offmix", "ratio"]
    log(f"building {' '.join(targets)} in {bd}")
    r = run(["cmake", "--build", bd, "-j", str(NCPU), "--target"] + targets, check=False)
    if r.returncode != 0:
        # a shared checkout can be mid-edit: measure the last good binaries, and say so
        STATE["build_note"] = "BUILD FAILED: measured the binaries already in the build dir"
        log(f"  ! build failed (exit {r.returncode}); using existing binaries if present:\n"
            f"{(r.stdout + r.stderr)[-1500:]}")
    B = {
        "prof-record": os.path.join(bd, "prof-record"),
        "prof-report": os.path.join(bd, "prof-report"),
        "demo": os.path.join(bd, "tests/workloads/demo"),
        "uw-gcc": os.path.join(bd, "tests/workloads/uw-gcc"),
        "fixedwork": os.path.join(bd, "tools/bench/bench_fixedwork"),
        "synth": os.path.join(bd, "tools/bench/bench_synth"),
        "symaddr": os.path.join(bd, "tools/bench/bench_symaddr"),
        "ehtab": os.path.join(bd, "tools/bench/bench_ehtab"),
        "churn": os.path.join(bd, "tools/bench/bench_churn"),
        "churnlib": os.path.join(bd, "tools/bench/libchurn.so"),
        "dump": os.path.join(bd, "tests/tools/bprof-dump"),
        "pingpong": os.path.join(bd, "tools/bench/bench_pingpong"),
        "offmix": os.path.join(bd, "tools/bench/bench_offmix"),
        "ratio": os.path.join(bd, "tests/workloads/ratio"),
        "bench_sym": None,
    }
    # libsym's own micro-benchmark, when it exists and builds
    if os.path.exists(os.path.join(REPO, "tests/libsym/bench_sym.c")):
        r = run(["cmake", "--build", bd, "-j", str(NCPU), "--target", "bench_sym"], check=False)
        p = os.path.join(bd, "tests/libsym/bench_sym")
        if r.returncode == 0 and os.access(p, os.X_OK):
            B["bench_sym"] = p
        else:
            log("  tests/libsym/bench_sym does not build; using bench_symaddr only")
    for k, v in B.items():
        if v and not os.access(v, os.X_OK):
            die(f"{k}: {v} missing after the build")
    return B


# ---------------------------------------------------------------- baselines --
# An older recorder beside the current one in the same run (parts 6c, 9, 11):
# --baseline REV|BINARY, else each part's default revision.  A revision is
# built once, from `git archive` of its commit (no worktree registered in the
# shared repository), in BUILD-base/COMMIT, and kept there: the next run of
# the same commit reuses it.

# The default baseline of parts 6c and 9: main of 2026-11-26 05:01 UTC, before
# the fixed cost went from ~40 ms to ~240 ms.  (Part 11 has its own.)
BASELINE_REV = "a0d852c"

def baseline_recorder(args, default_rev):
    """(path of the baseline prof-record or None, label) for --baseline or
    default_rev: a prof-record binary is used as it is; a git revision is
    built once per commit (target prof-record only).  None if it does not
    build: the parts print n/a for it."""
    want = args.baseline or default_rev
    cache = STATE.setdefault("baselines", {})
    if want in cache:
        return cache[want]
    if os.sep in want and os.access(want, os.X_OK) and os.path.isfile(want):
        cache[want] = (os.path.abspath(want), want)
        return cache[want]
    r = run(["git", "-C", REPO, "rev-parse", "--verify", "--quiet", want + "^{commit}"],
            check=False)
    if r.returncode != 0:
        die(f"--baseline {want}: neither a prof-record binary nor a git revision of {REPO}")
    rev = r.stdout.strip()
    label = rev[:7]
    bd = os.path.join(args.build.rstrip("/") + "-base", rev[:12])
    binp, stamp = os.path.join(bd, "build", "prof-record"), os.path.join(bd, "rev")
    if not (os.path.exists(stamp) and open(stamp).read().strip() == rev
            and os.access(binp, os.X_OK)):
        log(f"baseline: building prof-record of {rev[:10]} in {bd}")
        src = os.path.join(bd, "src")
        shutil.rmtree(bd, ignore_errors=True)
        os.makedirs(src)
        arch = subprocess.Popen(["git", "-C", REPO, "archive", rev], stdout=subprocess.PIPE)
        run(["tar", "-x", "-C", src], stdin=arch.stdout)
        arch.wait()
        ok = run(["cmake", "-S", src, "-B", os.path.join(bd, "build"),
                  "-DCMAKE_BUILD_TYPE=RelWithDebInfo"], check=False)
        if ok.returncode == 0:
            ok = run(["cmake", "--build", os.path.join(bd, "build"), "-j", str(NCPU),
                      "--target", "prof-record"], check=False)
        if ok.returncode != 0 or not os.access(binp, os.X_OK):
            log(f"  ! baseline {rev[:10]} does not build: {(ok.stdout + ok.stderr)[-800:]}")
            cache[want] = (None, label)
            return cache[want]
        with open(stamp, "w") as f:
            f.write(rev + "\n")
    cache[want] = (binp, label)
    return cache[want]


def recorder_has(rec, option):
    """Whether prof-record binary rec knows option (its --help)."""
    key = (rec, option)
    cache = STATE.setdefault("recorder_has", {})
    if key not in cache:
        r = run([rec, "--help"], check=False)
        cache[key] = re.search(r"(^|[\s,])" + re.escape(option) + r"\b", r.stdout) is not None
    return cache[key]


def wants(args, num, sub):
    """Whether sub-part sub of part num is selected: --part 6 selects all of
    part 6, --part 6c only 6c."""
    sel = getattr(args, "subparts", {}).get(num)
    return sel is None or "*" in sel or sub in sel


def spread(xs, fmt):
    """The median of xs and its range, formatted: "5.8 us (5.6-6.1 us)"."""
    if not xs:
        return "n/a"
    m, lo, hi = fmt(med(xs)), fmt(min(xs)), fmt(max(xs))
    if len(xs) == 1:
        return m
    if lo.partition(" ")[2] == hi.partition(" ")[2]:
        lo = lo.partition(" ")[0]
    return f"{m} ({lo}-{hi})"
