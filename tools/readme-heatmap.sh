#!/usr/bin/env bash
# Redraws docs/heatmap.png, the README's picture of prof-report --heatmap:
# records the phases workload (phase_one, then phase_two) beside the demo
# workload, writes the heatmap page, and screenshots it in headless
# Chromium with the first phase selected (tests/export/heatmap-click.js).
# Run as root (BPF); needs node, chromium and the npm modules of
# tests/export/npm-setup.sh.  Usage: tools/readme-heatmap.sh
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" -ne 0 ]; then
	echo "readme-heatmap: prof-record loads a BPF program: run this as root" >&2
	exit 1
fi
cmake -S . -B build >/dev/null
cmake --build build -j"$(nproc)" --target prof-record prof-report demo phases >/dev/null
NODE_PATH=$(tests/export/npm-setup.sh build/tests/export/npm)
export NODE_PATH
tmp=$(mktemp -d /tmp/bprof-heatmap.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
./build/prof-record -q -F 99 -o "$tmp/r.bprof" -- sh -c \
	'./build/tests/workloads/demo 9 & ./build/tests/workloads/phases 4 4; wait'
./build/prof-report -q --heatmap "$tmp/heatmap.html" "$tmp/r.bprof"
node tests/export/heatmap-click.js "$tmp/heatmap.html" 1 3 '' "$tmp/shot.png" > /dev/null
# the page at 1400 px, scaled to the README's width
python3 - "$tmp/shot.png" docs/heatmap.png <<'PY' || cp "$tmp/shot.png" docs/heatmap.png
import sys
from PIL import Image
im = Image.open(sys.argv[1])
im = im.crop((0, 0, im.width, min(im.height, 760)))
im.thumbnail((1000, 1000))
im.save(sys.argv[2], optimize=True)
PY
chmod 0644 docs/heatmap.png
echo "readme-heatmap: wrote docs/heatmap.png ($(stat -c %s docs/heatmap.png) bytes)"
