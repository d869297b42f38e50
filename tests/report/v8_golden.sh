#!/bin/bash
# V8 frames named from a file alone (tests/data/format/valid/v8.bprof,
# fx_v8): the V8 section's entries, no node and no BPF.  Its walked stack
# holds leaf (an interpreted frame: its function's first line, 12) under
# an anonymous function of an unknown script running optimized code at
# offset 0x44, where leaf (line 13) is inlined into it at its line 4
# (SPEC.md 6.17): the inlined frame comes out as a frame of its own.
. "${BPROF_SRC:?}/tests/e2e/lib.sh"

f=$BPROF_SRC/tests/data/format/valid/v8.bprof
"$BPROF_REPORT" -q -f "$f" > "$T_DIR/f.txt"
check "folded: name (script:line), the inlined leaf between its code's function and the leaf below" \
	grep -qx "node;\[worker\];(anonymous) (?:4);leaf (/app/hot.js:13);leaf (/app/hot.js:12) 4" "$T_DIR/f.txt"
"$BPROF_REPORT" -q -f -a "$f" > "$T_DIR/a.txt"
check "-a: _[js] marks, _[i] on the inlined frame" \
	grep -qx "node;\[worker\];(anonymous) (?:4)_\[js\];leaf (/app/hot.js:13)_\[i\];leaf (/app/hot.js:12)_\[js\] 4" "$T_DIR/a.txt"
"$BPROF_REPORT" --info "$f" > "$T_DIR/i.txt" 2>&1
check "--info: V8 processes, their status and the named frames" \
	bash -c "grep -q 'v8:             2 processes, 2 SFIs named; 2 of 2 JavaScript frames in stacks named' '$T_DIR/i.txt' && grep -q 'pid 200      V8: a V8 whose v8dbg_ symbols lack' '$T_DIR/i.txt'"
"$BPROF_REPORT" -q --speedscope "$T_DIR/s.json" "$f"
check "speedscope: leaf with /app/hot.js, line 13" \
	python3 -c 'import json,sys; fr=json.load(open(sys.argv[1]))["shared"]["frames"]; sys.exit(0 if any(f.get("name","").startswith("leaf") and f.get("file")=="/app/hot.js" for f in fr) else 1)' "$T_DIR/s.json"
finish
