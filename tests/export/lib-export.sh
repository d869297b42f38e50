# Helpers shared by the export tests (source after tests/e2e/lib.sh).

# need_cmd CMD PACKAGE: the consumer must be installed (tools/install-deps.sh).
need_cmd() {
	command -v "$1" >/dev/null 2>&1 || skip "$1 not installed (Debian package $2; run tools/install-deps.sh)"
}

# npm_modules: install the npm consumers into the build tree once; prints the
# node_modules directory.
npm_modules() {
	# npm-setup.sh installs npm itself where it is missing (Debian's nodejs
	# comes without it): checking for npm here skipped these tests on a
	# pristine Debian root
	"$BPROF_SRC/tests/export/npm-setup.sh" "$BPROF_BUILD/tests/export/npm" ||
		skip "cannot install the npm consumers (npm registry unreachable?)"
}

# need_browser: headless Chromium and node, with the npm consumers on
# NODE_PATH (exported): what the tests that drive a real page need.
need_browser() {
	need_cmd chromium chromium
	need_cmd node nodejs
	NODE_PATH=$(npm_modules)
	export NODE_PATH
}

# folded_sum FILE REGEX: samples of the folded lines matching REGEX
folded_sum() {
	awk -v re="$2" '$0 ~ re { s += $NF } END { print s + 0 }' "$1"
}
