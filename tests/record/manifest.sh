#!/bin/bash
# Manifest details: a binary deleted on disk while it runs keeps its
# build-id (read through /proc/PID/map_files); a JIT-like process gets its
# anonymous executable memory as an ANON mapping and its /tmp/perf-PID.map
# copied into the file.
. "$(dirname "$0")/common.sh"

# deleted binary
mkdir "$T_DIR/bin"
cp "$W/ratio" "$T_DIR/bin/ratio"
id=$(build_id "$T_DIR/bin/ratio")
bg "$T_DIR/bin/ratio" 5 1
sleep 0.2
rm "$T_DIR/bin/ratio"
"$BPROF_RECORD" -q -p "$BG" -o "$T_DIR/del.bprof" 1
dump "$T_DIR/del.bprof"
check "deleted binary: build-id still recorded" dumpq "$T_DIR/del.bprof.txt" build-id-mapped ratio "$id"
check "deleted binary: flagged deleted (0x4)" dumpq "$T_DIR/del.bprof.txt" obj-flag "$id" 4

# JIT-like: anonymous rwx memory and a perf map
cat >"$T_DIR/jit.py" <<'PY'
import mmap, os, signal, sys, time
# the test ends us with SIGTERM: leave no perf map behind in /tmp
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
rwx = mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC
private = mmap.mmap(-1, 4096, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, prot=rwx)
private.write(b'x')
shared = mmap.mmap(-1, 4096, prot=rwx)  # shows as "/dev/zero (deleted)"
shared.write(b'x')
with open('/tmp/perf-%d.map' % os.getpid(), 'w') as f:
    f.write('%x 100 jitted_function\n' % 0x7f0000000000)
try:
    end = time.time() + float(sys.argv[1])
    while time.time() < end:
        sum(i * i for i in range(1000))
finally:
    os.unlink('/tmp/perf-%d.map' % os.getpid())
PY
bg python3 "$T_DIR/jit.py" 4
sleep 0.5
"$BPROF_RECORD" -q -p "$BG" -o "$T_DIR/jit.bprof" 1
dump "$T_DIR/jit.bprof"
check "perf map copied" awk -v p="$BG" '$1 == "process" && $2 == p && $7 > 0 { ok = 1 } END { exit !ok }' "$T_DIR/jit.bprof.txt"
check "anonymous executable mappings recorded as ANON without object" dumpq "$T_DIR/jit.bprof.txt" anon-map "$BG"
check "shared anonymous memory is not taken for a file" bash -c "! grep -q '^object .*/dev/zero' '$T_DIR/jit.bprof.txt'"
check "[vdso] recorded with its build-id" dumpq "$T_DIR/jit.bprof.txt" obj-flag '[vdso]' 8
# File offsets exactly as the kernel has them (issue 50: a mapping one page
# off passed this test): a process writes its /proc/self/maps, then runs;
# every mapping and history entry of it the file holds that the kernel
# maps from a file must give the kernel's file offset, first page and last.
cat >"$T_DIR/maps.py" <<'PY'
import os, sys, time
open(sys.argv[1] + ".%d" % os.getpid(), "w").write(open("/proc/self/maps").read())
end = time.time() + 0.4
while time.time() < end:
    sum(i * i for i in range(1000))
PY
"$BPROF_RECORD" -q -F 199 -o "$T_DIR/off.bprof" -- /usr/bin/python3 "$T_DIR/maps.py" "$T_DIR/kmaps"
dump "$T_DIR/off.bprof"
check "file offsets of the recorded mappings are /proc/PID/maps's" python3 - "$T_DIR" <<'PY'
import glob, sys
d = sys.argv[1]
(mf,) = glob.glob(d + "/kmaps.*")
pid = mf.rsplit(".", 1)[1]
kmaps = []
for l in open(mf):
    f = l.split()
    if len(f) >= 6 and f[5].startswith("/"):
        s, e = (int(x, 16) for x in f[0].split("-"))
        kmaps.append((s, e, int(f[2], 16), f[5]))
def kernel_offset(at):
    for s, e, off, path in kmaps:
        if s <= at < e:
            return off + at - s, path
    return None, None
objs, n, bad = {}, 0, []
lines = open(d + "/off.bprof.txt").read().splitlines()
for l in lines:
    f = l.split()
    if f[0] == "object":
        objs[f[1]] = f[-1]
for l in lines:
    f = l.split()
    if f[0] not in ("mapping", "history") or f[1] != pid or f[6] == "-1":
        continue
    s, e, off = int(f[3], 16), int(f[4], 16), int(f[5], 16)
    for at, want in ((s, off), (e - 4096, off + e - 4096 - s)):
        got, path = kernel_offset(at)
        if got is None or path != objs.get(f[6]):
            continue  # unmapped before the snapshot, or another file now
        n += 1
        if got != want:
            bad.append("%s %#x: file offset %#x, the kernel's %#x (%s)" % (f[0], at, want, got, path))
print("%d page offsets of pid %s checked" % (n, pid))
for b in bad:
    print("  " + b)
sys.exit(1 if bad or n < 6 else 0)
PY
finish
