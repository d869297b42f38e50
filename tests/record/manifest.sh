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
finish
