# SPDX-License-Identifier: Apache-2.0
"""Part 16 of tools/bench/run.

Runtimes (issue 37): Go and JIT code, each program recorded by
`prof-record -F 199 -- PROGRAM` and by `perf record -e cpu-clock -F 199 -g`
(Go also `--call-graph dwarf`) of the same command, named as users name it
(prof-report -f -a -U; perf script, which reads /tmp/perf-PID.map at
report time, after `perf inject --jit` for a jitdump).  The programs:
tests/workloads/go/stacks/main.go built as tests/report/go_stacks.sh
builds it (plain `go build`, and stripped with -ldflags="-s -w"; GOCACHE
and GOPATH in the temporary directory, GOFLAGS=-mod=mod, GOPROXY=off);
tests/workloads/jit/hot.js under `node --perf-basic-prof` (perf map) and
`node --perf-prof` (jitdump; perf records it with -k 1); Hot.java
(compiled with javac into the temporary directory) under `java
-XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit` (map written as the
JVM exits), and the same JVM with no exit dump whose map `jcmd PID
Compiler.perfmap` writes about a second before it exits (3 s after the JVM
starts, --quick 2 s; what was compiled later is not in it).  Each
program runs 4 s (--quick: Go 2 s, node/java 3 s).

The figures, per (program, recorder), each a share with its count
("samples": all the recording's samples of the command's processes; for
Go those of the program's comm):
- Go rows, over the program's samples (its comm): "own functions" = the
  innermost user frame is named main.* (main.leafHot, its inlined
  main.mix, main.leafBare, main.mid...); "roots" = the user stack holds
  runtime.goexit, runtime.main or runtime.mstart (a walk that reached a Go
  thread's root).
- JIT rows, over the JIT-leaf samples (the innermost user frame is in
  anonymous executable memory: bprof marks it _[j]; perf puts it in
  /tmp/perf-PID.map, a jitted-PID-N.so after inject, //anon or
  [unknown]), as tests/record/jit.sh judges them: "JIT leaf named" = that
  frame has a name ([unknown] and [jit-ambiguous] are not names); "own
  functions" = the name is the workload's (hot.js's functions; Hot.leafHot,
  midHot, topHot); "roots" = the same JIT-leaf samples whose user stack
  reaches __libc_start_call_main or start_thread (a walk through the JIT
  frames to the thread's start).
Kernel frames are left out on both sides (prof-report -U; perf's
[kernel.kallsyms] frames skipped).

16c, Java and Node.js frames (issue 38): tests/workloads/java/Chain.java
and Deopt.java (JDK 17 as tests/record/jvm.sh runs them, or $BPROF_JDK;
5 s, --quick 3 s) and tests/workloads/node/v8work.js (scale 1.2, ~5 s;
--quick 0.7), again under OpenJDK 11 and node 16, 18 and 22 where
tests/record's setup scripts can fetch them (into /var/cache/bprof, once),
each recorded by three recorders, one after the other:
- `prof-record -F 199 -- PROGRAM`, no runtime flag: its folded output
  graded by the tests' checkers, tests/record/jvmcheck.py (the call graph
  tests/record/jvm.sh gives it) and tests/workloads/node/v8check.py.
  "samples graded" = the checker's: Java, the samples with a frame of the
  workload's class; Node, the main thread's samples with a JavaScript frame
  of the script (or an unnamed one).  "right by method" = every frame of
  the class/script named, a path of the call graph from main / the module
  function (Java: also reaching the thread's start, no unnamed frame above);
  "right by line" = that and every frame's line right too (inside its
  method; a caller's on a call of its callee; jvmcheck's line_valid_pct,
  v8check's right_by_line_pct); "reaching the thread's start" = the stack
  holds __libc_start_call_main or start_thread.  "BPF per sample" = the
  sampling program's bpf_stats run_time_ns / run_cnt (the runtime walks
  run inside it), median and range of 3 runs (--quick 1), alternating with
  the walker-off runs below, the first graded; "file" = its .bprof's size;
- the same command with --no-jvm / --no-v8 (native stacks only, as before
  the walkers): BPF ns/sample, file size;
- `perf record -e cpu-clock -F 199 -g` of the command with the runtime's
  perf-map flags (java -XX:+UnlockDiagnosticVMOptions
  -XX:+DumpPerfMapAtExit -XX:+PreserveFramePointer: compiled frames keep
  rbp, so -g walks them; node --perf-basic-prof
  --interpreted-frames-native-stack: interpreted functions named too), its
  perf script turned into the checkers' input (map names spelled as
  prof-report spells them, without lines: a perf map has none; HotSpot's
  "Interpreter" an unnamed Java frame, node's shared
  Builtins_InterpreterEntryTrampoline an unnamed JavaScript frame) and
  graded the same way by method and reaching the thread's start; the
  perf.data size.  A perf map names a compiled method, not the methods
  inlined into it: those frames are missing, and the sample is not right.

Alone: tools/bench/run --part 16 [--quick] (both tables), --part 16c.
"""
import os
import re
import shutil
import subprocess
import time

from benchlib import (BpfStats, REPO, START_FRAMES, STATE, fmt_b, fmt_ns, fsize, loadavg, log, pct,
                      perf_env, run, spawn, spread, wait4, wants)

REPO_GO = os.path.join("tests", "workloads", "go", "stacks", "main.go")
REPO_JIT = os.path.join("tests", "workloads", "jit")
GO_ROOTS = ("runtime.goexit", "runtime.main", "runtime.mstart")
HZ = 199
ANNOT = re.compile(r"_\[[a-z]\]$")
PERF_JIT_DSO = re.compile(r"(^/tmp/perf-\d+\.map$|/jitted-\d+-\d+\.so$|^//anon|^\[unknown\]$)")


# ---------------------------------------------------------------- programs --

def go_programs(tmp, secs):
    """(label, comm, argv) of main.go built plain and stripped, or []."""
    if not shutil.which("go"):
        log("  go missing: no Go rows")
        return []
    src = os.path.join(tmp, "rt-go-src")
    os.makedirs(src, exist_ok=True)
    shutil.copy(os.path.join(REPO, REPO_GO), src)
    with open(os.path.join(src, "go.mod"), "w") as f:
        f.write("module gostacks\ngo 1.19\n")
    env = dict(os.environ, GOCACHE=os.path.join(tmp, "rt-gocache"),
               GOPATH=os.path.join(tmp, "rt-gopath"), GOFLAGS="-mod=mod", GOTOOLCHAIN="local",
               GOPROXY="off", HOME=os.environ.get("HOME", "/root"))
    out = []
    for kind, flags in (("go-plain", []), ("go-stripped", ["-ldflags=-s -w"])):
        binp = os.path.join(tmp, kind)
        t0 = time.monotonic()
        r = run(["go", "build", *flags, "-o", binp, "."], check=False, cwd=src, env=env)
        if r.returncode != 0:
            log(f"  ! go build {kind}: {r.stderr[-600:]}")
            continue
        log(f"  built {kind} in {time.monotonic() - t0:.1f} s")
        out.append((f"Go main.go, {kind[3:]}", kind, [binp, str(secs)]))
    return out


def jit_programs(tmp, secs):
    """(label, kind, argv, own regex, jcmd) of node and java, where present."""
    out = []
    ms = str(int(secs * 1000))
    if shutil.which("node"):
        shutil.copy(os.path.join(REPO, REPO_JIT, "hot.js"), tmp)
        own = re.compile(r"hot\.js")
        out.append(("node --perf-basic-prof", "map", ["node", "--perf-basic-prof", "hot.js", ms],
                    own, False))
        out.append(("node --perf-prof (jitdump)", "jitdump", ["node", "--perf-prof", "hot.js", ms],
                    own, False))
    else:
        log("  node missing: no node rows")
    if shutil.which("java") and shutil.which("javac") and shutil.which("jcmd"):
        shutil.copy(os.path.join(REPO, REPO_JIT, "Hot.java"), tmp)
        r = run(["javac", "-d", tmp, os.path.join(tmp, "Hot.java")], check=False)
        if r.returncode == 0:
            own = re.compile(r"Hot\.(leaf|mid|top)Hot")
            out.append(("java -XX:+DumpPerfMapAtExit", "map",
                        ["java", "-XX:+UnlockDiagnosticVMOptions", "-XX:+DumpPerfMapAtExit",
                         "-cp", tmp, "Hot", ms], own, False))
            out.append(("java, jcmd Compiler.perfmap", "map",
                        ["java", "-cp", tmp, "Hot", ms], own, True))
        else:
            log(f"  ! javac: {r.stderr[-400:]}")
    else:
        log("  java/javac/jcmd missing: no Java rows")
    return out


# ---------------------------------------------------------------- running --

def descendant(pid, comm, timeout=10.0):
    """The pid of the first descendant of pid whose comm is comm."""
    t_end = time.monotonic() + timeout
    while time.monotonic() < t_end:
        todo, seen = [pid], set()
        while todo:
            p = todo.pop()
            if p in seen:
                continue
            seen.add(p)
            try:
                with open(f"/proc/{p}/comm") as f:
                    if p != pid and f.read().strip() == comm:
                        return p
                with open(f"/proc/{p}/task/{p}/children") as f:
                    todo += [int(x) for x in f.read().split()]
            except OSError:
                pass
        time.sleep(0.05)
    return None


def run_recorder(cmd, cwd, env, jcmd_at):
    """Run a recorder's command line to its end; with jcmd_at, call
    `jcmd JAVA Compiler.perfmap` that many seconds after the JVM appears."""
    p = spawn(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if jcmd_at:
        jpid = descendant(p.pid, "java")
        if jpid is None:
            log("  ! no java process under the recorder: no jcmd")
        else:
            time.sleep(jcmd_at)
            r = run(["jcmd", str(jpid), "Compiler.perfmap"], check=False)
            if r.returncode != 0:
                log(f"  ! jcmd {jpid} Compiler.perfmap: exit {r.returncode}: {r.stdout[-300:]}")
    _, err = p.communicate()
    if p.returncode != 0:
        log(f"  ! {' '.join(cmd[:6])}...: exit {p.returncode}: {err.decode(errors='replace')[-400:]}")
    return p.returncode


def remove_maps(pids):
    """The /tmp/perf-PID.map files our own processes left (not others')."""
    for pid in pids:
        try:
            os.unlink(f"/tmp/perf-{pid}.map")
        except OSError:
            pass


# ---------------------------------------------------------------- reading --
# A stack: (comm, user frame names outermost first, leaf in JIT code, count)

def stacks_bprof(B, rec):
    r = run([B["prof-report"], "-q", "-f", "-a", "-U", rec], check=False)
    out = []
    for line in r.stdout.splitlines():
        stack, _, n = line.rpartition(" ")
        if not n.isdigit():
            continue
        frames = stack.split(";")
        names = [ANNOT.sub("", f) for f in frames[1:]]
        jit = len(frames) > 1 and frames[-1].endswith("_[j]")
        out.append((frames[0], names, jit, int(n)))
    d = run([B["dump"], rec], check=False)
    pids = {int(l.split()[1]) for l in d.stdout.splitlines()
            if l.startswith("process ") and l.split()[1].isdigit()}
    remove_maps(pids)
    return out


FRAME = re.compile(r"^\s*([0-9a-f]+)\s+(.*?)(?:\s+\(([^()]*)\))?$")


def stacks_perf(data, home):
    r = run(["perf", "script", "-i", data, "-F", "comm,pid,ip,sym,dso"], check=False,
            env=perf_env(home))
    out, pids, cur = [], set(), None

    def flush():
        if cur is not None:
            fr = [(s, d) for s, d in cur[2] if not d.startswith("[kernel")
                  and not d.startswith("[guest")]
            jit = bool(fr) and PERF_JIT_DSO.search(fr[0][1]) is not None
            out.append((cur[0], [s for s, _ in reversed(fr)], jit, 1))
    for line in r.stdout.splitlines():
        if not line.strip():
            flush()
            cur = None
        elif not line[0].isspace():
            w = line.split()  # "COMM PID" (a comm with spaces: the pid is last)
            cur = [" ".join(w[:-1]), w[-1], []]
            if w[-1].isdigit():
                pids.add(int(w[-1]))
        elif cur is not None:
            m = FRAME.match(line)
            if m:
                cur[2].append((m.group(2) or "[unknown]", m.group(3) or "[unknown]"))
    flush()
    remove_maps(pids)
    return out


def figures_go(stacks, comm):
    tot = own = root = 0
    for c, names, _, n in stacks:
        if c != comm:
            continue
        tot += n
        if names and names[-1].startswith("main."):
            own += n
        if any(f in GO_ROOTS for f in names):
            root += n
    return {"samples": tot, "named": None, "own": (own, tot), "roots": (root, tot)}


def figures_jit(stacks, own_re):
    tot = jit = named = own = root = 0
    for _, names, is_jit, n in stacks:
        tot += n
        if not is_jit:
            continue
        jit += n
        leaf = names[-1]
        if not leaf.startswith(("[unknown]", "[jit-ambiguous]")):
            named += n
            if own_re.search(leaf):
                own += n
        if any(f in START_FRAMES for f in names):
            root += n
    return {"samples": tot, "named": (named, jit), "own": (own, jit), "roots": (root, jit)}


# ---------------------------------------------------------------- part 16 --

def part_runtimes(args, B, T, R):
    tmp = os.path.join(STATE["tmp"], "rt")
    os.makedirs(tmp, exist_ok=True)
    go_secs, jit_secs = (2, 3) if args.quick else (4, 4)
    home = os.path.join(tmp, "home-perf")
    log(f"runtimes: Go {go_secs} s, node/java {jit_secs} s at {HZ} Hz (load {loadavg()})")
    T.section(f"16. Runtimes (issue 37): Go and JIT code at {HZ} Hz, `-- PROGRAM`; Go rows over "
              "the program's samples, JIT rows over its JIT-leaf samples (definitions: "
              "run --list)",
              ("program", "recorder", "samples", "JIT leaf named", "own functions", "roots"))
    R["runtimes"] = {}

    def row(label, rec, f):
        R["runtimes"][(label, rec)] = f
        T.row(label, rec, str(f["samples"]), pct(f["named"]) if f["named"] else "-",
              pct(f["own"]), pct(f["roots"]))

    for label, comm, argv in go_programs(tmp, go_secs):
        log(f"  {label} (load {loadavg()})")
        out = os.path.join(tmp, comm + ".bprof")
        run_recorder([B["prof-record"], "-q", "-F", str(HZ), "-o", out, "--", *argv], tmp,
                     None, 0)
        row(label, "prof-record", figures_go(stacks_bprof(B, out), comm))
        for name, cg in (("perf -g", ["-g"]), ("perf dwarf", ["--call-graph", "dwarf"])):
            data = os.path.join(tmp, f"{comm}-{cg[-1]}.data")
            run_recorder(["perf", "record", "-q", "-e", "cpu-clock", "-F", str(HZ), *cg, "-o",
                          data, "--", *argv], tmp, perf_env(home), 0)
            row(label, name, figures_go(stacks_perf(data, home), comm))
            os.unlink(data)

    for i, (label, kind, argv, own_re, jcmd) in enumerate(jit_programs(tmp, jit_secs)):
        log(f"  {label} (load {loadavg()})")
        at = jit_secs - 1 if jcmd else 0
        out = os.path.join(tmp, f"jit{i}.bprof")
        run_recorder([B["prof-record"], "-q", "-F", str(HZ), "-o", out, "--", *argv], tmp,
                     None, at)
        row(label, "prof-record", figures_jit(stacks_bprof(B, out), own_re))
        data = os.path.join(tmp, f"jit{i}.data")
        extra = ["-k", "1"] if kind == "jitdump" else []  # jitdump: a monotonic clock
        run_recorder(["perf", "record", "-q", "-e", "cpu-clock", "-F", str(HZ), "-g", *extra,
                      "-o", data, "--", *argv], tmp, perf_env(home), at)
        name = "perf -g"
        if kind == "jitdump":
            inj = data + ".jit"
            r = run(["perf", "inject", "--jit", "-i", data, "-o", inj], check=False, cwd=tmp,
                    env=perf_env(home))
            if r.returncode != 0:
                log(f"  ! perf inject --jit: exit {r.returncode}: {r.stderr[-300:]}")
            else:
                data, name = inj, "perf -g, inject --jit"
        row(label, name, figures_jit(stacks_perf(data, home), own_re))
    R["load"].append(("16", loadavg()))


# ---------------------------------------------------------------- part 16c --
# Java and Node.js frames (issue 38): the BPF walkers' chains graded by the
# tests' checkers, beside perf with the runtime's perf-map flags.

JW = os.path.join(REPO, "tests", "workloads", "java")
NW = os.path.join(REPO, "tests", "workloads", "node")
JDK = os.environ.get("BPROF_JDK", "/usr/lib/jvm/java-17-openjdk-amd64")
CACHE = "/var/cache/bprof"
NODE_VERSIONS = ("16.20.2", "18.20.8", "22.23.3")  # as tests/record/CMakeLists.txt
# the checkers' call graphs, as tests/record/jvm.sh passes them
JAVA_GRAPHS = {
    "Chain": "main>middle,middle>step,step>leaf,main>recurse,recurse>recurse,recurse>bottom,"
             "main>alloc",
    "Deopt": "main>phaseA,main>phaseB,main>phaseC,phaseA>work,phaseB>work,phaseC>work",
}
# perf's best case: compiled frames keep rbp (-g walks through them), the
# map names them; node's interpreted frames get a trampoline of their own
# each, named in the map (without it they are all
# Builtins_InterpreterEntryTrampoline)
PERF_JAVA = ["-XX:+UnlockDiagnosticVMOptions", "-XX:+DumpPerfMapAtExit",
             "-XX:+PreserveFramePointer"]
PERF_NODE = ["--perf-basic-prof", "--interpreted-frames-native-stack"]
PERF_JAVA_SYM = re.compile(r"^(?:\S+ )?([\w$]+(?:\.[\w$]+)*)\.([\w$<>]+)\(.*\)$")
PERF_JS_SYM = re.compile(r"^(?:JS|Eval|Function|LazyCompile):[~^*+]?(\S*) (\S+?)(?::\d+){0,2}$")


def frames_programs(tmp, quick):
    """(label, kind, class or script, argv, off flag) of Chain, Deopt and
    v8work.js, where java 17 and node are present, and again on OpenJDK 11
    and node 16, 18 and 22 where they can be fetched."""
    out = []
    ms = "3000" if quick else "5000"  # each of Chain's and Deopt's 3 phases: ms/3
    if os.access(os.path.join(JDK, "bin", "javac"), os.X_OK):
        r = run([os.path.join(JDK, "bin", "javac"), "-d", tmp, os.path.join(JW, "Chain.java"),
                 os.path.join(JW, "Deopt.java")], check=False)
        if r.returncode == 0:
            for cls in ("Chain", "Deopt"):
                out.append((f"Java {cls}", "java", cls,
                            [os.path.join(JDK, "bin", "java"), "-cp", tmp, cls, ms], "--no-jvm"))
        else:
            log(f"  ! javac: {r.stderr[-400:]}")
    else:
        log(f"  {JDK} missing: no Java rows")
    # the other releases the tests record (tests/record/jdk11-setup.sh,
    # node-setup.sh: fetched once into /var/cache/bprof), where they can be had
    jdk11 = setup_home(["jdk11-setup.sh", os.path.join(CACHE, "jdk11")])
    if jdk11 and os.access(os.path.join(JDK, "bin", "javac"), os.X_OK):
        d11 = os.path.join(tmp, "jdk11")
        os.makedirs(d11, exist_ok=True)
        r = run([os.path.join(JDK, "bin", "javac"), "--release", "11", "-d", d11,
                 os.path.join(JW, "Chain.java"), os.path.join(JW, "Deopt.java")], check=False)
        if r.returncode == 0:
            for cls in ("Chain", "Deopt"):
                out.append((f"Java {cls}, OpenJDK 11", "java", cls,
                            [os.path.join(jdk11, "bin", "java"), "-cp", d11, cls, ms], "--no-jvm"))
    scale = "0.7" if quick else "1.2"  # v8work.js: ~3.6 s + poly's phases per 1
    if shutil.which("node"):
        out.append(("Node v8work.js", "node", "v8work.js",
                    ["node", os.path.join(NW, "v8work.js"), scale], "--no-v8"))
    else:
        log("  node missing: no Node rows")
    for ver in NODE_VERSIONS:
        node = setup_home(["node-setup.sh", ver, os.path.join(CACHE, "node")])
        if node:
            out.append((f"Node v8work.js, node {ver}", "node", "v8work.js",
                        [node, os.path.join(NW, "v8work.js"), scale], "--no-v8"))
    return out


def setup_home(argv):
    """What tests/record's setup script argv prints (a JDK's home, a node),
    fetching it once; None where it cannot be had."""
    r = run([os.path.join(REPO, "tests", "record", argv[0]), *argv[1:]], check=False)
    if r.returncode != 0 or not r.stdout.strip():
        log(f"  {argv[0]} {' '.join(argv[1:])}: not available")
        return None
    return r.stdout.strip().splitlines()[-1]


def record_cost(B, argv, out, tmp, extra=()):
    """prof-record -- argv with the sampling program's BPF run time read:
    (ns per sample, file size).  The recorder's CPU is not taken: with
    -- COMMAND its rusage holds the program's, which it waits for."""
    if os.path.exists(out):
        os.unlink(out)  # prof-record does not overwrite a file
    p = spawn([B["prof-record"], "-q", "-F", str(HZ), *extra, "-o", out, "--", *argv], cwd=tmp,
              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    st = BpfStats(p.pid)
    rc, _, _, _ = wait4(p, st.poll)
    if rc != 0 or not os.path.exists(out):
        log(f"  ! prof-record {' '.join(extra)} -- {argv[0]}...: exit {rc}")
        return None, None
    runs, runs_ns = st.sample_runs()
    return (runs_ns / runs if runs else None), fsize(out)


def rooted(folded, frame_re):
    """Samples with a frame matching frame_re (the workload's), and those of
    them whose stack reaches the thread's start."""
    tot = root = 0
    with open(folded) as f:
        for line in f:
            stack, _, n = line.rstrip("\n").rpartition(" ")
            if not n.isdigit():
                continue
            frames = stack.split(";")
            if any(frame_re.search(fr) for fr in frames):
                tot += int(n)
                if any(fr in START_FRAMES for fr in frames):
                    root += int(n)
    return root, tot


def grade(kind, name, folded):
    """The checker's shares of a folded file: {"samples", "method", "line",
    "roots"}, each share a (count, total)."""
    if kind == "java":
        r = run(["python3", os.path.join(REPO, "tests", "record", "jvmcheck.py"), folded,
                 "--class", name, "--root", "main", "--source", os.path.join(JW, name + ".java"),
                 "--edges", JAVA_GRAPHS[name]], check=False)
        d = dict(l.split(None, 1) for l in r.stdout.splitlines() if " " in l)
        n = int(d.get("samples", 0))
        # jvmcheck's valid rows already require the thread's start; the
        # roots column counts it alone, over the same rows (a frame of name)
        roots = rooted(folded, re.compile(r"^" + name + r"\.[\w$<>]+\("))
        share = lambda k: (round(n * float(d.get(k, 0)) / 100), n)  # noqa: E731
        return {"samples": n, "method": share("valid_pct"), "line": share("line_valid_pct"),
                "roots": roots}
    r = run(["python3", os.path.join(NW, "v8check.py"), os.path.join(NW, name), folded],
            check=False)
    d = dict(l.split(None, 1) for l in r.stdout.splitlines() if " " in l)
    n = int(d.get("js_samples", 0))
    share = lambda k: (round(n * float(d.get(k, 0)) / 100), n)  # noqa: E731
    return {"samples": n, "method": share("right_by_function_pct"),
            "line": share("right_by_line_pct"), "roots": share("reach_start_pct")}


def perf_folded(data, home, folded):
    """perf script's stacks as the checkers read prof-report's: user frames
    only, outermost first, the map's names in prof-report's spelling and
    without lines (a perf map holds none: "Chain.leaf()", "leaf (PATH)"); an
    interpreted Java frame ("Interpreter") unnamed: "[java]"; the JVM's
    other code "[jvm] NAME"."""
    r = run(["perf", "script", "-i", data, "-F", "comm,pid,ip,sym,dso"], check=False,
            env=perf_env(home))
    stacks, pids, cur = {}, set(), None

    def name(sym, dso):
        if sym == "Builtins_InterpreterEntryTrampoline":
            return "[js]"  # an interpreted function run by the shared trampoline: unnamed
        if not dso.startswith("/tmp/perf-"):
            return sym
        m = PERF_JS_SYM.match(sym)
        if m:
            return f"{m.group(1) or '(anonymous)'} ({m.group(2)})"
        m = PERF_JAVA_SYM.match(sym)
        if m:
            return f"{m.group(1)}.{m.group(2)}()"
        return "[java]" if sym == "Interpreter" else "[jvm] " + sym

    def flush():
        if cur:
            fr = [name(s, d) for s, d in reversed(cur[1]) if not d.startswith("[kernel")]
            key = ";".join([cur[0]] + fr)
            stacks[key] = stacks.get(key, 0) + 1
    for line in r.stdout.splitlines():
        if not line.strip():
            flush()
            cur = None
        elif not line[0].isspace():
            w = line.split()
            cur = [" ".join(w[:-1]), []]
            if w[-1].isdigit():
                pids.add(int(w[-1]))
        elif cur is not None:
            m = FRAME.match(line)
            if m:
                cur[1].append((m.group(2) or "[unknown]", m.group(3) or "[unknown]"))
    flush()
    remove_maps(pids)
    with open(folded, "w") as f:
        for k, v in stacks.items():
            f.write(f"{k} {v}\n")


def part_frames(args, B, T, R):
    tmp = os.path.join(STATE["tmp"], "rtf")
    os.makedirs(tmp, exist_ok=True)
    home = os.path.join(tmp, "home-perf")
    reps = 1 if args.quick else 3
    log(f"runtime frames: Java, Node at {HZ} Hz, {reps} runs on/off (load {loadavg()})")
    T.section(f"16c. Java and Node.js frames (issue 38) at {HZ} Hz, `-- PROGRAM`: prof-record "
              "with no runtime flag, its walker off, and perf -g with the runtime's perf-map "
              "flags; graded by jvmcheck.py and v8check.py (definitions: run --list)",
              ("program", "recorder", "samples graded", "right by method", "right by line",
               "reaching the thread's start", "BPF per sample, median (range)", "file"))
    R["frames"] = {}
    for label, kind, name, argv, off in frames_programs(tmp, args.quick):
        log(f"  {label} (load {loadavg()})")
        out = os.path.join(tmp, f"{kind}-{name}.bprof")
        # on and off alternating, reps times: BPF time on a shared machine
        # moves between runs; the first on-run is graded
        ns, ns_off = [], []
        for rep in range(reps):
            x, size = record_cost(B, argv, out if rep == 0 else out + ".again", tmp)
            ns += [x] if x else []
            x, size_off = record_cost(B, argv, out + ".off", tmp, (off,))
            ns_off += [x] if x else []
        g = {"samples": 0, "method": (0, 0), "line": (0, 0), "roots": (0, 0)}
        if os.path.exists(out):
            size = fsize(out)
            folded = out + ".folded"
            with open(folded, "w") as f:
                subprocess.run([B["prof-report"], "-q", "-f", out], stdout=f, check=False)
            g = grade(kind, name, folded)
        R["frames"][(label, "prof-record")] = dict(g, ns=ns, size=size)
        R["frames"][(label, off)] = {"ns": ns_off, "size": size_off}
        T.row(label, "prof-record", str(g["samples"]), pct(g["method"]), pct(g["line"]),
              pct(g["roots"]), spread(ns, fmt_ns), fmt_b(size))
        T.row("", f"prof-record {off}", "-", "-", "-", "-", spread(ns_off, fmt_ns),
              fmt_b(size_off))
        # perf -g with the runtime's map flags, graded by method only
        flags = PERF_JAVA if kind == "java" else PERF_NODE
        data = os.path.join(tmp, f"{kind}-{name}.data")
        run_recorder(["perf", "record", "-q", "-e", "cpu-clock", "-F", str(HZ), "-g", "-o", data,
                      "--", argv[0], *flags, *argv[1:]], tmp, perf_env(home), 0)
        if not os.path.exists(data):
            continue
        folded = data + ".folded"
        perf_folded(data, home, folded)
        p = grade(kind, name, folded)
        R["frames"][(label, "perf")] = dict(p, size=fsize(data))
        T.row("", "perf -g + perf map", str(p["samples"]), pct(p["method"]), "- (a map has no lines)", pct(p["roots"]),
              "-", fmt_b(fsize(data)) + " perf.data")
        os.unlink(data)
    R["load"].append(("16c", loadavg()))


NUM = "16"
SUBPARTS = "c"  # --part 16c: the Java and Node.js frames alone (--part 16: both tables)
BPF_STATS = True  # 16c reads BPF run times: runs while kernel.bpf_stats_enabled is on


def measure(args, B, T, R):
    if wants(args, NUM, "*"):
        part_runtimes(args, B, T, R)
    if wants(args, NUM, "c"):
        part_frames(args, B, T, R)
