#!/usr/bin/env bash
# Install the npm consumers of the exports (speedscope, ajv, playwright-core)
# into DIR/node_modules (default: the build tree), once.  playwright-core never
# downloads a browser: the tests drive Debian's /usr/bin/chromium.
# Usage: npm-setup.sh DIR   -> prints DIR/node_modules
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:?usage: npm-setup.sh DIR}
mkdir -p "$dir"
if [ ! -f "$dir/node_modules/.bprof-ok" ] || ! cmp -s "$here/package.json" "$dir/package.json"; then
	if ! command -v npm >/dev/null; then
		# Debian's nodejs comes without npm (package npm); nodesource's
		# nodejs provides it and conflicts with that package, so npm is not
		# in tools/install-deps.sh: install it here when it is missing.
		if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
			echo "npm-setup: installing Debian's npm" >&2
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends npm >&2 ||
				{ apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends npm >&2; }
		fi
		command -v npm >/dev/null || { echo "npm-setup: npm not found (Debian package npm)" >&2; exit 1; }
	fi
	cp "$here/package.json" "$dir/package.json"
	# a lock so parallel tests do not install twice into one directory
	exec 9>"$dir/.lock"
	flock 9
	if [ ! -f "$dir/node_modules/.bprof-ok" ]; then
		PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --prefix "$dir" --no-audit --no-fund \
			--loglevel=error >&2
		touch "$dir/node_modules/.bprof-ok"
	fi
fi
echo "$dir/node_modules"
