#!/bin/sh
# check_headers.sh CLANG CC GEN: every header of bpf/ compiles on its own,
# so that none needs what its includer happened to include before it
# (issue 49: no header that needs its includer).  BPF headers with clang
# -target bpf (GEN holds vmlinux.h); the headers that user space shares
# (the layouts of the maps and the file's records) with the C compiler as
# well.  offcpu/offcpu_common.h declares two hooks that each of its two
# includers defines (where a stack is taken and how it is stored): it is
# checked with them undefined allowed.
set -eu
CLANG=$1 CC=$2 GEN=$3
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
bpf() { # HEADER [FLAGS...]
	h=$1; shift
	printf '#include "%s"\n' "$h" > "$tmp/t.c"
	if ! "$CLANG" -target bpf -D__TARGET_ARCH_x86 -I"$GEN" -I"$here" -fsyntax-only \
		-Wall -Werror -Wno-unused-function "$@" "$tmp/t.c" 2> "$tmp/err"; then
		echo "check_headers.sh: bpf/$h does not compile on its own (BPF):" >&2
		head -5 "$tmp/err" >&2
		fail=1
	fi
}
user() { # HEADER
	printf '#include "%s"\n' "$1" > "$tmp/t.c"
	if ! "$CC" -I"$here" -fsyntax-only -Wall -Werror "$tmp/t.c" 2> "$tmp/err"; then
		echo "check_headers.sh: bpf/$1 does not compile on its own (user space):" >&2
		head -5 "$tmp/err" >&2
		fail=1
	fi
}
for h in bprof.bpf.h unwind/unwind_env.h unwind/unwind_walk.h python/python_frame.h \
	 jvm/jvm_walk.h v8/v8_walk.h; do
	bpf "$h"
done
bpf offcpu/offcpu_common.h -Wno-undefined-internal
# (unwind_step.h and python_walk.h: the steps compiled both in BPF and in
# the tests' replays, which define their hooks)
for h in profile.h unwind/unwind.h python/python.h v8/v8.h jvm/jvm.h offcpu/offcpu.h \
	 btfids.h ksymname.h unwind/unwind_step.h python/python_walk.h; do
	user "$h"
done
exit $fail
