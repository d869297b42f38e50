#!/bin/sh
# check_skel_layout.sh MAIN.skel.h LEAN.skel.h: whether the lean object
# (profile_lean.bpf.o) can be opened through the main object's skeleton
# (record/offcpu/offcpu_rec.c): the same types (its global variables, so
# their offsets in .rodata, .data and .bss), and every map and program of
# the main skeleton, by name.  The lean object's own maps (offcpu_lean_*:
# its tail-call slots and the end pass's walk) are allowed: libbpf creates
# them, record/ finds the slots by name.  The embedded object bytes differ, of course, and are left out.
set -eu
types() {
	sed -e 's/profile_lean_bpf/profile_bpf/g' -e 's/PROFILE_LEAN_BPF/PROFILE_BPF/g' "$1" |
		awk '/__elf_bytes\(size_t \*sz\)/ { skip = 1 } skip && /^}/ { skip = 0; next } !skip' |
		grep -v -e 'offcpu_lean_' -e 's->maps\[' -e 's->progs\[' -e '_cnt = ' -e 'skel_sz = '
}
names() {
	sed -n 's/.*s->\(maps\|progs\)\[[0-9]*\]\.name = "\([^"]*\)".*/\1 \2/p' "$1" | sort
}
a=$(mktemp) b=$(mktemp)
trap 'rm -f "$a" "$b"' EXIT
types "$1" >"$a"
types "$2" >"$b"
if ! diff -u "$a" "$b" >&2; then
	echo "check_skel_layout: $2's types are not $1's (above): the lean off-CPU programs must define the globals offcpu_common.h defines, and nothing else" >&2
	exit 1
fi
names "$1" >"$a"
names "$2" >"$b"
missing=$(comm -23 "$a" "$b")
if [ -n "$missing" ]; then
	echo "check_skel_layout: $2 lacks what $1 names: $missing" >&2
	exit 1
fi
