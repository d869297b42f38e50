#!/bin/bash
# syscalls workload: kernel stacks are recorded, and so is the interrupted
# kernel ip.
. "$(dirname "$0")/common.sh"

out=$T_DIR/sys.bprof
bg "$W/syscalls" 600 # killed at exit: alive through the three recordings however slow their start
sleep 0.2
# 499 Hz: the shares below need samples, and a busy host leaves the
# workload a fraction of a CPU (25 samples in 3 s at 99 Hz were seen)
"$BPROF_RECORD" -q -F 499 -p "$BG" -o "$out" 3
dump "$out"
n=$(dumpq "$out.txt" samples syscalls)
k=$(dumpq "$out.txt" kstacks syscalls)
ip=$(dumpq "$out.txt" kip syscalls)
echo "samples $n, with kernel stack $k, with kernel ip $ip"
check "syscalls was sampled" test "$n" -gt 20
check "most samples have a kernel stack" test $((k * 100 / n)) -ge 50
check "kernel ips recorded" test "$ip" -gt 0
check "kernel identity recorded" grep -q '^kernel [0-9a-f]\{40\} 0xffff' "$out.txt"
check "kallsyms snapshot of the sampled kernel symbols recorded" awk '$1 == "kernel" && $5 > 0 && $6 == "0x2" { ok = 1 } END { exit !ok }' "$out.txt"

# -U: no kernel stacks asked, so none recorded
"$BPROF_RECORD" -q -U -p "$BG" -o "$T_DIR/u.bprof" 1
dump "$T_DIR/u.bprof"
check "-U records no kernel stacks" test "$(dumpq "$T_DIR/u.bprof.txt" kstacks syscalls)" -eq 0
"$BPROF_RECORD" -q --no-kallsyms -K -p "$BG" -o "$T_DIR/k.bprof" 1
dump "$T_DIR/k.bprof"
check "--no-kallsyms: zero ksyms" awk '$1 == "kernel" && $5 == 0 { ok = 1 } END { exit !ok }' "$T_DIR/k.bprof.txt"
finish
