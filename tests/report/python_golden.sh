#!/bin/bash
# Python frames named from a file alone (tests/data/format/valid/python.bprof,
# fx_python): the PYTHON section's copies and line tables, no interpreter
# and no BPF.  Its walked stack holds inner (app.py, first line) and
# Outer.method (one line down), each before the native frame of the
# evaluation loop that ran it (SPEC.md 6.15).
. "${BPROF_SRC:?}/tests/e2e/lib.sh"

f=$BPROF_SRC/tests/data/format/valid/python.bprof
"$BPROF_REPORT" -q -f "$f" > "$T_DIR/f.txt"
check "folded: qualname (file:line), leaf last, the eval frames hidden" \
	grep -qx "python;Outer.method (/srv/app/méthode.py:21);inner (app.py:10);\[worker\] 3" "$T_DIR/f.txt"
"$BPROF_REPORT" -q -f -a --python-native "$f" > "$T_DIR/n.txt"
check "-a --python-native: _[py] marks, the eval frames kept" \
	grep -qx "python;\[worker\];Outer.method (/srv/app/méthode.py:21)_\[py\];\[worker\];inner (app.py:10)_\[py\];\[worker\] 3" "$T_DIR/n.txt"
"$BPROF_REPORT" -q "$f" > "$T_DIR/m.txt"
check "multi-line: one Python frame a line" grep -qx "    inner (app.py:10)" "$T_DIR/m.txt"
"$BPROF_REPORT" -q --speedscope "$T_DIR/s.json" "$f"
check "speedscope: inner with app.py, line 10" \
	python3 -c 'import json,sys; fr=json.load(open(sys.argv[1]))["shared"]["frames"]; sys.exit(0 if {"name":"inner","file":"app.py","line":10} in [{k:f.get(k) for k in ("name","file","line")} for f in fr] else 1)' "$T_DIR/s.json"
"$BPROF_REPORT" --info "$f" > "$T_DIR/i.txt" 2>&1
check "--info: interpreters, their status and the named frames" \
	bash -c "grep -q 'python:         2 interpreters, 2 code objects copied; 2 of 2 Python frames in stacks named' '$T_DIR/i.txt' && grep -q 'CPython 3.14.0: unknown version' '$T_DIR/i.txt'"
# an older reader's view: the same file without its PYTHON section names
# nothing wrong (the words are in no mapping)
"$BPROF_REPORT" -q -f --addresses "$f" > "$T_DIR/a.txt"
check "--addresses: named frames unchanged" grep -q "inner (app.py:10)" "$T_DIR/a.txt"
finish
