# Shared helpers for end-to-end tests.  Source it; it sets -euo pipefail.
# Environment (set by ctest): BPROF_RECORD, BPROF_REPORT, BPROF_DUMP,
# BPROF_WORKLOADS, BPROF_SRC, BPROF_BUILD.  Exit 77 = skipped, which is only
# allowed outside CI: with CI=true every skip becomes a failure.
set -euo pipefail

T_NAME=$(basename "$0" .sh)
T_DIR=$(mktemp -d "/tmp/bprof-e2e-$T_NAME.XXXXXX")
T_FAILS=0
T_CHECKS=0
# prof-report's symbol cache (libsym/CACHE.md) defaults to $XDG_CACHE_HOME/bprof:
# each test gets its own, so that no result depends on what an earlier run
# (or the user's own reports) left in ~/.cache; within a test, reports after
# the first use it warm.
export XDG_CACHE_HOME=$T_DIR/xdg-cache

# With BPROF_CACHE_CHECK=1 (e.g. BPROF_CACHE_CHECK=1 ctest -L e2e), every
# recording a test leaves in T_DIR is reported, at its end, with no symbol
# cache, a cold one and a warm one (multi-line, and -f -a --addresses):
# the outputs must be byte-identical (libsym/CACHE.md).  Recordings
# prof-report refuses are skipped.
cache_check_recordings() {
	local f c=$T_DIR/.cache-check bad=0 n=0 args
	[ -n "${BPROF_REPORT:-}" ] || return 0
	while IFS= read -r f; do
		for args in "" "-f -a --addresses"; do
			# shellcheck disable=SC2086 # args are words
			"$BPROF_REPORT" -q --no-cache $args "$f" > "$c.0" 2>/dev/null || continue
			rm -rf "$c"
			# shellcheck disable=SC2086
			"$BPROF_REPORT" -q --cache-dir "$c" $args "$f" > "$c.1" 2>/dev/null || true
			# shellcheck disable=SC2086
			"$BPROF_REPORT" -q --cache-dir "$c" $args "$f" > "$c.2" 2>/dev/null || true
			n=$((n + 1))
			if ! cmp -s "$c.0" "$c.1" || ! cmp -s "$c.0" "$c.2"; then
				echo "FAIL: cache check: $f ($args): output differs with the symbol cache" >&2
				bad=1
			fi
		done
	done < <(find "$T_DIR" -name '*.bprof' -type f 2>/dev/null)
	echo "cache check: $n reports of $T_NAME's recordings identical with and without the cache" \
		"$([ $bad -eq 0 ] && echo '(all)' || echo '(NOT all)')"
	return $bad
}

t_exit() {
	local rc=$?
	if [ "${BPROF_CACHE_CHECK:-}" = 1 ] && [ "$rc" -ne 77 ]; then
		cache_check_recordings || rc=1
	fi
	rm -rf "$T_DIR"
	exit "$rc"
}
trap t_exit EXIT

skip() {
	if [ "${CI:-}" = "true" ]; then
		echo "FAIL (cannot run in CI): $*" >&2
		exit 1
	fi
	echo "SKIP: $*" >&2
	exit 77
}

require_bpf() {
	[ "$(id -u)" -eq 0 ] || skip "needs root for BPF (run as root)"
	[ -r /sys/kernel/btf/vmlinux ] || skip "kernel has no BTF (/sys/kernel/btf/vmlinux)"
}

fail() { echo "FAIL: $*" >&2; T_FAILS=$((T_FAILS + 1)); }
ok() { T_CHECKS=$((T_CHECKS + 1)); echo "ok: $*"; }

# check DESCRIPTION COMMAND...: runs the command, counts a pass or a failure.
check() {
	local what=$1; shift
	T_CHECKS=$((T_CHECKS + 1))
	if "$@"; then echo "ok: $what"; else fail "$what"; fi
}

# Call at the end of every test: a test that checked nothing fails.
finish() {
	if [ "$T_CHECKS" -eq 0 ]; then
		echo "FAIL: $T_NAME made no checks" >&2
		exit 1
	fi
	if [ "$T_FAILS" -ne 0 ]; then
		echo "$T_NAME: $T_FAILS of $T_CHECKS checks failed" >&2
		exit 1
	fi
	echo "$T_NAME: all $T_CHECKS checks passed"
}
