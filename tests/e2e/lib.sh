# Shared helpers for end-to-end tests.  Source it; it sets -euo pipefail.
# Environment (set by ctest): BPROF_RECORD, BPROF_REPORT, BPROF_DUMP,
# BPROF_WORKLOADS, BPROF_SRC, BPROF_BUILD.  Exit 77 = skipped, which is only
# allowed outside CI: with CI=true every skip becomes a failure.
set -euo pipefail

T_NAME=$(basename "$0" .sh)
T_DIR=$(mktemp -d "/tmp/bprof-e2e-$T_NAME.XXXXXX")
T_FAILS=0
T_CHECKS=0
trap 'rm -rf "$T_DIR"' EXIT

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
