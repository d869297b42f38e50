#!/usr/bin/env bash
# Redraws docs/flamegraph.svg, the README's picture, with the project's own
# tools: build, record the demo workload (tests/workloads/demo, the one
# tools/demo.sh records) with prof-record, draw it with prof-report --svg.
# Run as root (BPF) after a change to the drawing or to the demo, and commit
# the new file.  Usage: tools/readme-flamegraph.sh [SECONDS] (default 5).
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_TO_RECORD=${1:-5}

if [ "$(id -u)" -ne 0 ]; then
	echo "readme-flamegraph: prof-record loads a BPF program: run this as root" >&2
	exit 1
fi
cmake -S . -B build >/dev/null
cmake --build build -j"$(nproc)" --target prof-record prof-report demo >/dev/null

tmp=$(mktemp -d /tmp/bprof-flamegraph.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
./build/prof-record -q -F 99 -o "$tmp/demo.bprof" -- ./build/tests/workloads/demo "$SECONDS_TO_RECORD"
# the demo's own samples (kernel frames blue, inlined aqua, by the SVG itself);
# written whole, then renamed, so a failed run leaves the old picture
./build/prof-report -q --comm demo --svg "$tmp/flamegraph.svg" "$tmp/demo.bprof"
grep -q '<svg' "$tmp/flamegraph.svg"
mv "$tmp/flamegraph.svg" docs/flamegraph.svg
chmod 0644 docs/flamegraph.svg
echo "readme-flamegraph: wrote docs/flamegraph.svg ($(stat -c %s docs/flamegraph.svg) bytes)"
