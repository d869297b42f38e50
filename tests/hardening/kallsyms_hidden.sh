#!/bin/bash
# Kernel addresses hidden (kernel.kptr_restrict=2: /proc/kallsyms shows
# zeros even to root).  prof-record has no switch to simulate it, so the
# sysctl is changed for the duration of the test and restored by the EXIT
# trap (the test is RUN_SERIAL: the setting is global).  Expected: a
# message saying kallsyms is hidden, exit 0, a valid file whose kernel
# section has the KALLSYMS_HIDDEN flag and no symbols, an earlier file
# untouched, and prof-report still reporting (kernel frames unnamed).
. "$(dirname "$0")/common.sh"

[ -w /proc/sys/kernel/kptr_restrict ] || skip "cannot change kernel.kptr_restrict"
old=$(cat /proc/sys/kernel/kptr_restrict)
CLEANUP="echo $old >/proc/sys/kernel/kptr_restrict"
echo 2 >/proc/sys/kernel/kptr_restrict
check "kallsyms now shows zeros" sh -c "head -n1 /proc/kallsyms | grep -q '^0000000000000000 '"

bg "$W/syscalls" 600 # killed at exit
d=$T_DIR/out
mkdir "$d"
plant_earlier "$d"
rc=0
"$REC" -q -F 199 -o "$d/hidden.bprof" 1 2>"$T_DIR/err" || rc=$?
echo "$old" >/proc/sys/kernel/kptr_restrict
CLEANUP=""
cat "$T_DIR/err"
check "hidden: exit 0" test "$rc" -eq 0
check "hidden: message says kallsyms is hidden" grep -q -i 'hidden' "$T_DIR/err"
check "hidden: message names kptr_restrict" grep -q 'kptr_restrict' "$T_DIR/err"
aftermath "hidden" "$d" hidden.bprof
t=$d.hidden.bprof.txt
kline=$(grep '^kernel ' "$t" || true)
echo "$kline"
check "hidden: kernel section flags 0x1 (KALLSYMS_HIDDEN)" \
	test "$(echo "$kline" | awk '{print $6}')" = 0x1
check "hidden: no kallsyms snapshot" test "$(echo "$kline" | awk '{print $5}')" = 0
check "hidden: has samples" test "$(grep -c '^count ' "$t")" -gt 0

rc=0
"$REP" -f -a "$d/hidden.bprof" >"$T_DIR/folded" 2>"$T_DIR/rerr" || rc=$?
cat "$T_DIR/rerr"
check "prof-report: exit 0" test "$rc" -eq 0
check "prof-report: stacks printed" test -s "$T_DIR/folded"
rc=0
"$REP" --info "$d/hidden.bprof" >"$T_DIR/info" 2>&1 || rc=$?
check "prof-report --info: exit 0" test "$rc" -eq 0
check "prof-report --info: says kallsyms was hidden" grep -q '^kallsyms: *hidden' "$T_DIR/info"
finish
