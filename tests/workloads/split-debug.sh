#!/bin/sh
# split-debug.sh FULL STRIPPED DEBUGROOT: install FULL as STRIPPED without
# symbols (the build-id note stays) and its debuginfo as
# DEBUGROOT/.build-id/xx/yyyy.debug, the layout gdb and elfutils search.
# DEBUGROOT/.build-id is this workload's alone: it is rewritten each time.
set -eu
full=$1 stripped=$2 root=$3
id=$(readelf -n "$full" | sed -n 's/^ *Build ID: *\([0-9a-f]*\)$/\1/p' | head -n1)
[ -n "$id" ] || { echo "split-debug.sh: $full has no build-id" >&2; exit 1; }
# The tree holds this workload's debuginfo only: drop what an earlier build
# (another build-id) left, so the tree has exactly one .debug file.
rm -rf "$root/.build-id"
dir=$root/.build-id/$(echo "$id" | cut -c1-2)
mkdir -p "$dir"
objcopy --only-keep-debug "$full" "$dir/$(echo "$id" | cut -c3-).debug"
objcopy --strip-all "$full" "$stripped.tmp"
mv -f "$stripped.tmp" "$stripped"
