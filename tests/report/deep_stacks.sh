#!/usr/bin/env bash
# Stacks that differ only far below their leaf stay apart in folded output
# (issue 50): no stack key, hash or comparison on the way (the format's
# stack table, the report's row keys in fold.c, its rendered-text table in
# render.c, the BPF program's own stacks) may stop at some depth.
# - Synthetic (bprof-mkrec deep, exact): pairs of stacks equal but for
#   their deepest frame (the root: what a key cut at some depth loses) or
#   their leaf (the end of the folded line: what a cut in the rendered
#   text loses), user stacks of 65, 128, 247 (the recorder's limit,
#   PROFILE_MAX_USTACK_DEPTH) and 1000 frames (the format allows 65535),
#   kernel stacks of 127 (the kernel's), and both in one row: the folded
#   output is exactly one line per stack with its count, for one file and
#   for the file twice (rows of several inputs folded, counts doubled).
# - Recorded: the unwind workload's "deep" mode runs ~200 frames of
#   deep_rec under deep_a, then under deep_b; both chains are in the output,
#   whole and apart.
source "$BPROF_SRC/tests/e2e/lib.sh"
MKREC=$BPROF_BUILD/tests/hardening/bprof-mkrec
[ -x "$MKREC" ] || skip "$MKREC not built"

"$MKREC" deep "$T_DIR/deep.bprof"
# expect MULT: the folded lines mkrec's deep recording must give, sorted
# (its table of pairs: user depth, kernel depth, where the two differ)
expect() {
	python3 - "$1" <<'PY' | LC_ALL=C sort
import sys
m = int(sys.argv[1])
pairs = [(65, 0, "r"), (128, 0, "r"), (247, 0, "r"), (1000, 0, "r"), (247, 0, "l"),
         (1000, 0, "l"), (0, 127, "R"), (0, 127, "L"), (247, 127, "r"), (247, 127, "L")]
def frames(n, p, root, leaf):  # root first, as folded output prints; p: "" or "k"
    q = p or "u"
    return [p + root] + ["%s%d" % (q, i) for i in range(n - 2, 0, -1)] + [p + leaf if leaf else q + "0"]
count = 3
for user, kernel, where in pairs:
    for k in "ab":
        f = []
        if user:
            f += frames(user, "", "root_" + (k if where == "r" else "a"),
                        "leaf_" + k if where == "l" else None)
        if kernel:
            f += frames(kernel, "k", "root_" + (k if where == "R" else "a"),
                        "leaf_" + k if where == "L" else None)
        print("deep;%s %d" % (";".join(f), count * m))
        count += 2
PY
}
expect 1 > "$T_DIR/want1"
expect 2 > "$T_DIR/want2"
"$BPROF_REPORT" -q -f "$T_DIR/deep.bprof" | LC_ALL=C sort > "$T_DIR/got1"
"$BPROF_REPORT" -q -f "$T_DIR/deep.bprof" "$T_DIR/deep.bprof" | LC_ALL=C sort > "$T_DIR/got2"
check "synthetic: 10 pairs of stacks equal but for their root or their leaf, each its own line with its count" \
	diff "$T_DIR/want1" "$T_DIR/got1"
check "synthetic, the file twice (rows folded across inputs): the same lines, counts doubled" \
	diff "$T_DIR/want2" "$T_DIR/got2"

# Recorded: needs BPF from here on.
require_bpf
UW=$BPROF_WORKLOADS/uw-gcc
"$BPROF_RECORD" -q -F 499 -o "$T_DIR/rec.bprof" -- "$UW" 0.8 deep
"$BPROF_REPORT" -q -f -U "$T_DIR/rec.bprof" > "$T_DIR/rec.folded"
"$BPROF_REPORT" -q -f -U "$T_DIR/rec.bprof" "$T_DIR/rec.bprof" > "$T_DIR/rec2.folded"
chain() { # FOLDED ROOT: samples of the whole chain under ROOT (grep: mawk has no {200})
	{ grep -E "^uw-gcc;_start;[^ ]*__libc_start_call_main;main;(mode_deep;)?$2;(deep_rec;){200}deep_leaf[; ]" \
		"$1" || true; } | awk '{ s += $NF } END { print s + 0 }'
}
a=$(chain "$T_DIR/rec.folded" deep_a)
b=$(chain "$T_DIR/rec.folded" deep_b)
a2=$(chain "$T_DIR/rec2.folded" deep_a)
b2=$(chain "$T_DIR/rec2.folded" deep_b)
both=$(cat "$T_DIR/rec.folded" "$T_DIR/rec2.folded" | awk '/deep_a/ && /deep_b/ { s += $NF } END { print s + 0 }')
echo "recorded: deep_a's 200-frame chain $a samples, deep_b's $b; the file twice: $a2, $b2"
check "recorded: deep_a's whole 200-frame chain has samples" test "$a" -gt 0
check "recorded: deep_b's whole 200-frame chain has samples" test "$b" -gt 0
check "recorded: no line holds both" test "$both" -eq 0
check "recorded, the file twice (rows folded across inputs): each chain's count doubled" \
	test "$a2" -eq $((2 * a)) -a "$b2" -eq $((2 * b))
finish
