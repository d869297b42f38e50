# SPDX-License-Identifier: Apache-2.0
"""Part 12 of tools/bench/run.

The biggest programs here (clang++, g++'s cc1plus, rustc, gdb) with the
default options: complete stacks with cold and cached tables against perf
--call-graph dwarf, samples before their tables, the tables' rows, kernel
memory and build time; per object, bprof's kernel memory against the
OpenTelemetry profiler's and Parca's layouts (computed); all of them at once
under a system-wide recording.

Alone: tools/bench/run --part 12 [--quick].
"""
import glob
import os
import re
import shutil
import subprocess
import time

from benchlib import (START_FRAMES, STATE, fmt_b, loadavg, log, pct, perf_env, run, spawn)


# ---------------------------------------------------------------- part 12 --
# The biggest programs here, with the default options: complete stacks (cold
# and cached tables) against perf --call-graph dwarf, the tables' kernel
# memory per object and in total against other layouts, build times, and
# the share of samples taken before their tables.

def big_programs(tmp):
    """(label, comms or None for every sample of the command, argv)"""
    cpp = os.path.join(tmp, "big11.cpp")
    with open(cpp, "w") as f:
        for h in ("algorithm", "map", "string", "vector", "unordered_map", "functional",
                  "sstream", "memory", "set"):
            f.write(f"#include <{h}>\n")
        for i in range(3):
            f.write(f"struct S{i} {{ int a; std::string b; double c; bool operator<(const S{i}& o) "
                    f"const {{ return a < o.a || (a == o.a && b < o.b); }} }};\n"
                    f"int f{i}(std::vector<S{i}> v, const std::string& k) {{\n"
                    f"  std::map<std::string, std::vector<S{i}>> m; "
                    f"std::unordered_map<int, std::set<S{i}>> u;\n"
                    f"  std::sort(v.begin(), v.end(), [](const S{i}& x, const S{i}& y) "
                    f"{{ return x.c * {i} < y.c; }});\n"
                    f"  for (auto& s : v) {{ m[s.b + k].push_back(s); u[s.a % {i + 3}].insert(s); }}\n"
                    "  std::ostringstream os; for (auto& [key, vec] : m) os << key << vec.size();\n"
                    "  auto p = std::make_shared<std::function<int(int)>>([&](int x) "
                    "{ return x + (int)u.size(); });\n"
                    f"  return (int)os.str().size() + (*p)({i});\n}}\n")
    rs = os.path.join(tmp, "big11.rs")
    with open(rs, "w") as f:
        f.write("use std::collections::{BTreeMap, HashMap};\n"
                "fn f<T: std::fmt::Debug + Ord + Clone>(v: &mut Vec<T>) -> BTreeMap<String, T> "
                "{ v.sort(); v.iter().map(|x| (format!(\"{:?}\", x), x.clone())).collect() }\n"
                "fn main() { let mut a: Vec<i64> = (0..1000).rev().collect();\n"
                "  let mut b: Vec<String> = a.iter().map(|x| x.to_string()).collect();\n"
                "  let m: HashMap<i64, Vec<String>> = a.iter().map(|&x| (x, vec![x.to_string()])).collect();\n"
                "  println!(\"{:?} {:?} {}\", f(&mut a).len(), f(&mut b).len(), m.len()); }\n")
    progs = []
    if shutil.which("clang++"):
        progs.append(("clang++ -O2 -c (libLLVM, libclang-cpp)", ("clang++",),
                      ["clang++", "-std=c++17", "-O2", "-c", "-o", os.devnull, cpp]))
    if shutil.which("g++"):
        progs.append(("g++ -O2 -c (cc1plus, 35 MB)", ("cc1plus",),
                      ["g++", "-std=c++17", "-O2", "-c", "-o", os.devnull, cpp]))
    if shutil.which("rustc"):
        progs.append(("rustc -O (librustc_driver, 153 MB, no build-id)", None,
                      ["rustc", "-O", "-o", os.path.join(tmp, "big11-rs"), rs]))
    libc = "/usr/lib/x86_64-linux-gnu/libc.so.6"
    if shutil.which("gdb") and os.path.exists(libc):
        # gdb reading libc's DWARF (libc6-dbg): C++ on libstdc++ and libpython
        progs.append(("gdb -batch, info types of libc (DWARF)", ("gdb",),
                      ["gdb", "-batch", "-nx", "-ex", "info types .", libc]))
    return progs


def share_comms(folded, comms):
    tot = comp = 0
    for line in folded.splitlines():
        stack, _, n = line.rpartition(" ")
        frames = stack.split(";")
        if not n.isdigit() or (comms and frames[0] not in comms):
            continue
        tot += int(n)
        if any(f in START_FRAMES for f in frames):
            comp += int(n)
    return comp, tot


def share_perf_comms(data, comms, home):
    # --no-inline: perf asks addr2line for the inlined frames of every
    # address, minutes on libLLVM; the start frames are never inlined
    r = run(["perf", "script", "--no-inline", "-i", data, "-F", "comm,ip,sym"], check=False,
            env=perf_env(home))
    tot = comp = 0
    cur = None
    for line in r.stdout.splitlines() + [""]:
        if not line.strip():
            if cur is not None and (not comms or cur[0] in comms):
                tot += 1
                comp += cur[1]
            cur = None
        elif not line.startswith("\t"):
            cur = [line.rsplit(None, 0)[0].strip(), 0]
        elif cur is not None:
            w = line.split()
            if len(w) > 1 and w[1] in START_FRAMES:
                cur[1] = 1
    return comp, tot


def info_figures(text):
    g = {}
    for key, rx in (("rows", r"table rows, rules, pages: +(\d+) \([0-9.]+ KiB\), \d+, (\d+); "
                              r"built in ([0-9.]+) ms"),
                    ("kmem", r"kernel memory for the tables: +([0-9.]+) MiB"),
                    ("before", r"user stacks before their tables: (\d+)"),
                    ("walked", r"user stacks walked: +(\d+)"),
                    ("misses", r"tables: .* (\d+) did not fit")):
        m = re.search(rx, text)
        g[key] = m.groups() if m else None
    return g


def ehtab_one(B, path, tmp):
    """rows and pages of one object's table (bench_ehtab on a copy)"""
    d = os.path.join(tmp, "one-" + os.path.basename(path))
    os.makedirs(d, exist_ok=True)
    dst = os.path.join(d, os.path.basename(path))
    if not os.path.exists(dst):
        shutil.copy(path, dst)
    r = run([B["ehtab"], d], check=False)
    kv = {}
    for line in r.stdout.splitlines():
        w = line.split()
        if len(w) == 2:
            kv[w[0]] = float(w[1])
    shutil.rmtree(d, ignore_errors=True)
    rows = int(kv.get("rows", 0))
    pages = int((kv.get("packed_bytes", 0) - rows * 4) / 12)
    return rows, pages, kv.get("build_ms", 0.0)


def part_big(args, B, T, R):
    tmp = STATE["tmp"]
    hz = 499
    T.section(f"12a. The biggest programs here, DEFAULT options ({hz} Hz, `-- COMMAND`): share "
              "of user stacks reaching __libc_start_call_main/start_thread",
              ("program", "bprof, tables cached", "bprof, cold cache", "perf dwarf",
               "before tables (cached / cold)"))
    R["big"] = {}
    home = os.path.join(tmp, "home-big")
    for label, comms, argv in big_programs(tmp):
        log(f"big programs: {label} (load {loadavg()})")
        res = {}
        cache = os.path.join(tmp, "tabcache-big")
        shutil.rmtree(cache, ignore_errors=True)
        for mode in ("cold", "cached"):
            out = os.path.join(tmp, f"big-{mode}.bprof")
            # the same empty cache directory: built (and written) then read
            run([B["prof-record"], "-q", "-F", str(hz), f"--table-cache={cache}", "-o", out, "--"]
                + argv, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            folded = run([B["prof-report"], "-q", "-f", "-U", out], check=False).stdout
            res[mode] = share_comms(folded, comms)
            res[mode + "_info"] = info_figures(run([B["prof-report"], "--info", out],
                                                    check=False).stdout)
            os.unlink(out)
        data = os.path.join(tmp, "big.data")
        run(["perf", "record", "-q", "-e", "cpu-clock", "-F", str(hz), "--call-graph", "dwarf",
             "-o", data, "--"] + argv, check=False, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, env=perf_env(home))
        res["dwarf"] = share_perf_comms(data, comms, home)
        os.unlink(data)
        R["big"][label] = res

        def before(i):
            if not i or not i.get("before") or not i.get("walked"):
                return "n/a"
            b, w = int(i["before"][0]), int(i["walked"][0])
            return f"{100 * b / w:.1f} %" if w else "n/a"
        T.row(label, pct(res["cached"]), pct(res["cold"]), pct(res["dwarf"]),
              f"{before(res['cached_info'])} / {before(res['cold_info'])}")

    T.section("12b. Their tables (prof-report --info): rows, kernel memory, build time cold "
              "and from the table cache",
              ("program", "rows, pages", "kernel memory", "bytes/row", "built cold", "cached"))
    for label, res in R["big"].items():
        ci, wi = res["cold_info"], res["cached_info"]
        if not ci or not ci.get("rows"):
            T.row(label, "n/a", "", "", "", "")
            continue
        rows, pages, cold_ms = int(ci["rows"][0]), int(ci["rows"][1]), ci["rows"][2]
        kmem = float(ci["kmem"][0]) if ci.get("kmem") else 0
        T.row(label, f"{rows:,}, {pages:,}", f"{kmem:.1f} MiB",
              f"{kmem * 1048576 / rows:.2f}" if rows else "",
              f"{cold_ms} ms", f"{wi['rows'][2]} ms" if wi and wi.get("rows") else "n/a")

    # per object, computed from each layout; the largest objects here
    objs = [p for p in ("/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1",
                        "/usr/lib/llvm-14/lib/libclang-cpp.so.14",
                        "/usr/lib/gcc/x86_64-linux-gnu/12/cc1plus",
                        "/usr/lib/x86_64-linux-gnu/libz3.so.4",
                        "/usr/bin/gdb", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
                        "/usr/lib/x86_64-linux-gnu/libc.so.6") if os.path.exists(p)]
    try:
        sysroot = run(["rustc", "--print", "sysroot"], check=False).stdout.strip()
        objs += sorted(glob.glob(os.path.join(sysroot, "lib", "librustc_driver-*.so")))[:1]
    except OSError:
        pass
    T.section("12c. Kernel memory of one object's table: bprof (4-byte rows in 1 MiB maps, "
              "64 B per 64 KiB page entry) against the OpenTelemetry profiler's layout "
              "(4-byte StackDelta in a per-object inner array of 2^k entries, which the kernel "
              "lays out every 8 bytes) and Parca's 14-byte rows, computed on the same rows",
              ("object", "rows", "bprof", "OpenTelemetry (computed)", "Parca (computed)",
               "build (bench_ehtab)"))
    tot = [0, 0, 0, 0]
    for p in objs:
        rows, pages, ms = ehtab_one(B, os.path.realpath(p), tmp)
        if not rows:
            continue
        ours = rows * 4 + pages * 64
        k = 1
        while k < rows:
            k *= 2
        otel = k * 8 + pages * 64
        parca = rows * 14
        tot = [tot[0] + rows, tot[1] + ours, tot[2] + otel, tot[3] + parca]
        T.row(os.path.basename(p), f"{rows:,}", fmt_b(ours), fmt_b(otel), fmt_b(parca),
              f"{ms:.0f} ms")
    if tot[0]:
        T.row("total", f"{tot[0]:,}", f"{fmt_b(tot[1])} ({tot[1] / tot[0]:.2f} B/row)",
              f"{fmt_b(tot[2])} ({tot[2] / tot[0]:.2f} B/row)",
              f"{fmt_b(tot[3])} ({tot[3] / tot[0]:.2f} B/row)", "")

    # several of them at once, system-wide: what the host's tables take
    progs = big_programs(tmp)
    if progs:
        out = os.path.join(tmp, "big-all.bprof")
        log(f"big programs at once, system-wide (load {loadavg()})")
        rec = spawn([B["prof-record"], "-q", "-F", "99", "-o", out, "10"],
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(1.5)
        ps = [spawn(a, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for _, _, a in progs]
        for p in ps:
            p.wait()
        rec.wait()
        info = run([B["prof-report"], "--info", out], check=False).stdout
        g = info_figures(info)
        T.section("12d. All of them at once under a system-wide recording (10 s, 99 Hz)",
                  ("", "figure"))
        if g.get("rows") and g.get("kmem"):
            rows = int(g["rows"][0])
            T.row("tables: rows, pages; kernel memory",
                  f"{rows:,}, {int(g['rows'][1]):,}; {g['kmem'][0]} MiB "
                  f"({float(g['kmem'][0]) * 1048576 / rows:.2f} B/row)")
        if g.get("misses"):
            T.row("tables that did not fit (default budget)", g["misses"][0])
        m = re.search(r"reached the start frames: +(\d+) \(([0-9.]+) %\)", info)
        if m:
            T.row("user stacks reaching the start frames (all processes)", f"{m.group(2)} %")
        os.unlink(out)


NUM = "12"
BPF_STATS = False  # runs while kernel.bpf_stats_enabled is on


def measure(args, B, T, R):
    part_big(args, B, T, R)
