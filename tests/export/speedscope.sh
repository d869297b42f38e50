#!/usr/bin/env bash
# --speedscope read by speedscope: valid against the schema the speedscope
# package ships (ajv), imported by the speedscope app itself in headless
# Chromium, whose Sandwich view shows the same totals as prof-report -f.
# Hostile names (quotes, backslashes, control bytes, invalid UTF-8) must
# still give valid JSON.
source "$BPROF_SRC/tests/e2e/lib.sh"
source "$BPROF_SRC/tests/export/lib-export.sh"
require_bpf
need_browser

"$BPROF_RECORD" -q -F 499 -o "$T_DIR/r.bprof" -- "$BPROF_WORKLOADS/ratio" 3
"$BPROF_REPORT" -q -f "$T_DIR/r.bprof" > "$T_DIR/folded"
"$BPROF_REPORT" -q --speedscope "$T_DIR/r.json" "$T_DIR/r.bprof"
total=$(awk '{ s += $NF } END { print s }' "$T_DIR/folded")
fa=$(folded_sum "$T_DIR/folded" ';func_a( |;)')
fb=$(folded_sum "$T_DIR/folded" ';func_b( |;)')
echo "prof-report -f: total=$total func_a=$fa func_b=$fb"

node "$BPROF_SRC/tests/export/speedscope-check.js" "$T_DIR/r.json" "$T_DIR/speedscope.png" \
	> "$T_DIR/check.json" || fail "speedscope-check.js"
cat "$T_DIR/check.json"; echo
py() { python3 -c "import json,sys; r=json.load(open('$T_DIR/check.json')); $1"; }
check "valid against speedscope's file-format-schema.json" py "assert r['valid'], r['schemaErrors']"
check "one sampled profile per process, named comm (pid); ratio's the biggest" py "
import re; t = r['total']; assert all(re.match(r'^\S.* \(\d+\)$', n) for n in t), t
assert re.match(r'^ratio \(\d+\)$', max(t, key=t.get)), t"
check "file total = prof-report -f total ($total)" py "assert r['all'] == $total, r['all']"
check "func_a/func_b in the file = folded ($fa/$fb)" py "assert r['byFunc']['func_a'] == $fa and r['byFunc']['func_b'] == $fb, r['byFunc']"
check "speedscope app imported it without error" py "assert r['imported'] and not r['failed'] and not r['errors'] and r['title'].endswith(' - speedscope'), r"
check "speedscope's Sandwich view: func_a $fa, func_b $fb total" py "assert r['sandwich'].get('func_a') == $fa and r['sandwich'].get('func_b') == $fb, r['sandwich']"
# (the 1:3 split itself is the sampler's, checked by report_ratio; here the
# export must carry exactly the folded counts, checked above)
check "func_b outweighs func_a in speedscope" py "assert r['sandwich']['func_b'] > r['sandwich']['func_a'], r['sandwich']"

# several processes, several files merged: one profile per process
"$BPROF_RECORD" -q -F 499 -o "$T_DIR/s.bprof" -- "$BPROF_WORKLOADS/syscalls" 1
"$BPROF_REPORT" -q --speedscope "$T_DIR/m.json" "$T_DIR/r.bprof" "$T_DIR/s.bprof"
"$BPROF_REPORT" -q -f "$T_DIR/r.bprof" "$T_DIR/s.bprof" > "$T_DIR/mfolded"
mtotal=$(awk '{ s += $NF } END { print s }' "$T_DIR/mfolded")
node "$BPROF_SRC/tests/export/speedscope-check.js" "$T_DIR/m.json" "$T_DIR/m.png" > "$T_DIR/check.json" ||
	fail "speedscope-check.js (merged)"
check "merged files: a profile per process, valid, total $mtotal, imported" py "
assert r['valid'] and len(r['total']) >= 2 and r['all'] == $mtotal and r['imported'] and not r['errors'], r"

# hostile names: a recording built in memory is not possible from the shell,
# so the JSON escaper is unit-tested (tests/export/test_export.c); here the
# same escaper must keep a real file valid for python's strict parser too
check "strict JSON (python json, no NaN, no control bytes)" python3 -c "
import json,sys
json.load(open('$T_DIR/m.json'), parse_constant=lambda c: sys.exit('constant ' + c))"
finish
