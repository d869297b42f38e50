#!/usr/bin/env bash
# First contact: install what is needed, build, record the bundled demo
# workload for a few seconds with prof-record, and print its folded profile
# with prof-report.  Run as root (BPF needs it).
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_TO_RECORD=${1:-5}

if [ "$(id -u)" -ne 0 ]; then
	echo "demo: prof-record loads a BPF program: run this as root (sudo $0)" >&2
	exit 1
fi
./tools/install-deps.sh --demo
cmake -S . -B build >/dev/null
# only what the demo runs: the test fixtures need the test packages
cmake --build build -j"$(nproc)" --target prof-record prof-report demo >/dev/null
echo "demo: built build/prof-record and build/prof-report"

out=$(mktemp -d /tmp/bprof-demo.XXXXXX)
echo "demo: recording the demo workload for ${SECONDS_TO_RECORD}s at 99 Hz"
./build/prof-record -F 99 -o "$out/demo.bprof" -- ./build/tests/workloads/demo "$SECONDS_TO_RECORD"
echo
echo "demo: folded profile (prof-report -f -a $out/demo.bprof), hottest stacks last:"
./build/prof-report -f -a --comm demo "$out/demo.bprof"
echo
echo "demo: the recording is $out/demo.bprof; for a flame graph (open it in a browser):"
echo "  ./build/prof-report --comm demo --svg demo.svg $out/demo.bprof"
