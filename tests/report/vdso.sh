#!/usr/bin/env bash
# The vDSO (clock_gettime, gettimeofday) is code no file on a workstation
# holds: the recording carries its bytes (IMAGES, SPEC 6.10) and the report
# names its functions from them.
source "$BPROF_SRC/tests/e2e/lib.sh"
require_bpf

"$BPROF_RECORD" -q -F 499 -o "$T_DIR/c.bprof" -- "$BPROF_WORKLOADS/clocks" 2
"$BPROF_REPORT" -q -f -U "$T_DIR/c.bprof" > "$T_DIR/folded"
"$BPROF_DUMP" "$T_DIR/c.bprof" > "$T_DIR/dump"
vobj=$(awk '$1 == "object" && $NF == "[vdso]" { print $2 }' "$T_DIR/dump")
check "the vdso is an object of the recording" test -n "$vobj"
check "its bytes are carried (IMAGES)" grep -qE "^image $vobj [0-9]+ " "$T_DIR/dump"
"$BPROF_REPORT" -q -f -U --addresses "$T_DIR/c.bprof" > "$T_DIR/addrs"
total=$(awk '/^clocks;/ { s += $NF } END { print s + 0 }' "$T_DIR/folded")
named=$(awk '/^clocks;/ && /;(__vdso_)?(clock_gettime|gettimeofday)(;| )/ { s += $NF } END { print s + 0 }' "$T_DIR/folded")
echo "samples: $total; in a named vdso function: $named"
check "most samples are in a named vdso function" test $((named * 2)) -gt "$total"
# Where the vdso's own symbols (.dynsym: all it keeps) end, a frame is
# "[vdso]": with kvm-clock the vdso reads the clock in a local function
# (vread_pvclock) that no symbol covers, and naming it after the symbol
# before it would be a lie.  Every "[vdso]+OFFSET" must lie outside every
# function symbol of the image, taken from this process's own vdso (the
# same kernel: its build-id must be the recorded one).
python3 - "$T_DIR/vdso.so" <<'PY'
import sys
for line in open("/proc/self/maps"):
    if line.rstrip().endswith("[vdso]"):
        lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
with open("/proc/self/mem", "rb") as m:
    m.seek(lo)
    open(sys.argv[1], "wb").write(m.read(hi - lo))
PY
vid=$(awk '$1 == "object" && $NF == "[vdso]" { print $3; exit }' "$T_DIR/dump")
mine=$(readelf -n "$T_DIR/vdso.so" | awk '/Build ID:/ { print $3; exit }')
check "this process's vdso is the recorded one (build-id $vid)" test "$mine" = "$vid"
readelf --dyn-syms -W "$T_DIR/vdso.so" > "$T_DIR/vsyms"
inside=$(python3 - "$T_DIR/vsyms" "$T_DIR/addrs" <<'PY'
import re, sys
syms = []
for line in open(sys.argv[1]):
    w = line.split()
    if len(w) > 4 and w[3] == "FUNC":
        syms.append((int(w[1], 16), int(w[2], 0)))
offs = {int(m, 16) for m in re.findall(r"\[vdso\]\+0x([0-9a-f]+)", open(sys.argv[2]).read())}
bad = [o for o in sorted(offs) if any(v <= o < v + n for v, n in syms)]
for o in bad:
    print(f"[vdso]+{o:#x} lies inside a vdso symbol, yet is unnamed", file=sys.stderr)
print(len(offs), len(bad))
PY
)
echo "unnamed vdso addresses, inside a symbol: $inside"
check "a vdso frame is unnamed only where no vdso symbol covers it" test "${inside#* }" = 0
check "the caller chain is whole" grep -qE '^clocks;.*main;read_clocks;[^ ]*(clock_gettime|gettimeofday)' "$T_DIR/folded"
"$BPROF_REPORT" --info "$T_DIR/c.bprof" > "$T_DIR/info" 2>&1
check "--info: symbols from the image in the recording" grep -q 'symbols: \[vdso\] (image in the recording)' "$T_DIR/info"
finish
