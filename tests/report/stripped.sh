#!/usr/bin/env bash
# A stripped binary is recorded, then deleted; its names must come back from
# a build-id debug tree, and never from an impostor with another build-id.
source "$BPROF_SRC/tests/e2e/lib.sh"
require_bpf

cp "$BPROF_WORKLOADS/stripped" "$T_DIR/stripped"
"$BPROF_RECORD" -q -F 499 -o "$T_DIR/s.bprof" -- "$T_DIR/stripped" 2
rm "$T_DIR/stripped"

"$BPROF_REPORT" -q -f --debug-dir "$BPROF_WORKLOADS/debug" "$T_DIR/s.bprof" > "$T_DIR/named"
check "stripped_work named from the build-id tree after the binary is gone" \
	grep -qE '^stripped;.*;stripped_work[; ]' "$T_DIR/named"

"$BPROF_REPORT" -q -f "$T_DIR/s.bprof" > "$T_DIR/bare"
check "without debuginfo: no name invented" sh -c "! grep -q stripped_work '$T_DIR/bare'"
check "without debuginfo: frames say their object, [stripped]" grep -q '^stripped;.*\[stripped\]' "$T_DIR/bare"
check "without debuginfo: no [unknown] for a known object" sh -c "! grep -q '^stripped;.*\[unknown\]' '$T_DIR/bare'"
"$BPROF_REPORT" -q -f --addresses "$T_DIR/s.bprof" > "$T_DIR/addr"
check "--addresses names the object lacking debuginfo" grep -qE '^stripped;.*stripped\+0x[0-9a-f]+' "$T_DIR/addr"

# An impostor at the recorded path: a binary with symbols but another build-id.
cp "$BPROF_WORKLOADS/ratio" "$T_DIR/stripped"
"$BPROF_REPORT" -q -f "$T_DIR/s.bprof" > "$T_DIR/impostor"
check "impostor with another build-id is not used" sh -c "! grep -qE 'func_a|func_b|stripped_work' '$T_DIR/impostor'"

"$BPROF_REPORT" --info "$T_DIR/s.bprof" > "$T_DIR/info"
check "--info lists the object as missing debuginfo" grep -q 'MISSING' "$T_DIR/info"

# The binary is back (its own build-id) but its debuginfo is not: the
# summary says what would name its unnamed frames; with it, nothing to say.
cp "$BPROF_WORKLOADS/stripped" "$T_DIR/stripped"
"$BPROF_REPORT" -f "$T_DIR/s.bprof" 2> "$T_DIR/hint" > /dev/null
check "summary: unnamed frames and no debuginfo, what would name them" \
	grep -qE "stripped has unnamed frames and no debuginfo \(build-id [0-9a-f]+\): .*DEBUGINFOD_URLS" "$T_DIR/hint"
"$BPROF_REPORT" -f --debug-dir "$BPROF_WORKLOADS/debug" "$T_DIR/s.bprof" 2> "$T_DIR/nohint" > /dev/null
check "summary: no such line once its debuginfo is found" sh -c "! grep -q 'stripped has unnamed' '$T_DIR/nohint'"
finish
