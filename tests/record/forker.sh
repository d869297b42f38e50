#!/bin/bash
# forker: ~20 ms children, a third of them exec'ing forker-helper.  Nearly
# every child image that has samples must have a mapping snapshot (read
# while it ran, or its parent's for children that never exec'd).
. "$(dirname "$0")/common.sh"

out=$T_DIR/fork.bprof
"$BPROF_RECORD" -q -F 199 -o "$out" -- "$W/forker" 4 >"$T_DIR/children"
dump "$out"
echo "children forked: $(cat "$T_DIR/children")"
read -r pct have total < <(dumpq "$out.txt" coverage forker forker-helper)
echo "images with a snapshot: $have of $total ($pct%)"
read -r hpct hhave htotal < <(dumpq "$out.txt" coverage forker-helper)
echo "exec'd helper images with a snapshot: $hhave of $htotal ($hpct%)"
check "many child images sampled" test "$total" -ge 20
check "at least 90% of sampled images have a snapshot" test "$pct" -ge 90
check "exec'd children sampled" test "$htotal" -ge 5
check "at least 90% of exec'd helper images have a snapshot" test "$hpct" -ge 90
lost=$(dumpq "$out.txt" loss manifest_lost)
echo "manifest_lost: $lost"
check "manifest_lost accounts for every missing snapshot" test "$lost" -ge $((total - have))
# Frames above a frame in libc or ld.so can be garbage (Debian builds them
# without frame pointers), so the walk of each stack stops at the first one.
check "user ips of forked children inside their mappings" dumpq "$out.txt" ips-in-maps forker own
check "user ips of exec'd helpers inside their mappings" dumpq "$out.txt" ips-in-maps forker-helper own
finish
