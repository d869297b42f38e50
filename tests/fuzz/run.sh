#!/usr/bin/env bash
# Replay the seed corpora, then fuzz the reader.
# Usage: tests/fuzz/run.sh BUILD_DIR SECONDS
#
# BUILD_DIR is configured with CC=clang -DBPROF_FUZZ=ON (and fuzz_read,
# fuzz_read_content built).  Each target replays its seeds
# (tests/fuzz/corpus/<name>/) and then fuzzes for SECONDS:
#   fuzz_read          whole files -> bprof_read_buffer()
#   fuzz_read_content  decompressed content, framed by the target, so the
#                      mutations reach the section parser
#   fuzz_report        whole files through the report path (reader, libsym
#                      adapter, aggregation, every writer); output checked
#   fuzz_report_content  the same from framed content
#   fuzz_folded        hostile names in an in-memory recording; folded
#                      output invariants (one line per distinct stack, ...)
#   fuzz_ehtab         hostile .eh_frame bytes (8 bytes of section address
#                      first) through record/unwind/ehtab: build, pack, invariants
#   fuzz_exports       the same recordings through the exporters: SVG
#                      well-formed, speedscope valid JSON, pprof written
#   fuzz_cache         libsym's symbol cache files (length and checksum
#                      fixed, the file's own key): parser invariants
#   fuzz_tabcache      unwind-table cache files (body hash fixed, the
#                      file's own key) through record/unwind/tabcache: invariants
#   fuzz_pyline        CPython location tables (first line, offset, table)
#   fuzz_jvmline       HotSpot line number tables (bci, table)
#                      through libsym's bsym_python_line: invariants
#   fuzz_jitdump       jitdumps (a time window first) through libsym's
#                      bsym_jitdump_register and lookups: invariants
#   fuzz_gopclntab     Go function tables (memory length, memory, table)
#                      through libsym/gopclntab.c: lookups stay inside
# BPROF_FUZZ_TARGETS="fuzz_report fuzz_folded" runs only those.
# Prints executions, seconds and the result per target; exits non-zero on
# any crash, leak or timeout (reproducers in BUILD_DIR/fuzz-artifacts/).
set -euo pipefail

if [ $# -ne 2 ]; then
	echo "usage: $0 BUILD_DIR SECONDS" >&2
	exit 2
fi
build=$(cd "$1" && pwd)
# Undefined behaviour is a finding: stop at the first report (the targets
# are built with recoverable UBSan).  UBSAN_OPTIONS=halt_on_error=0 to
# explore past a known one.
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
seconds=$2
here=$(cd "$(dirname "$0")" && pwd)
failed=0

run_target() {
	local name=$1 seeds=$2 max_len=${3:-65536}
	local bin=$build/tests/fuzz/$name
	local work=$build/fuzz-corpus/$name
	local artifacts=$build/fuzz-artifacts/$name
	local log=$build/fuzz-$name.log
	local status=0 execs secs cov

	if [ ! -x "$bin" ]; then
		echo "$bin not found: configure with CC=clang -DBPROF_FUZZ=ON and build it" >&2
		exit 2
	fi
	mkdir -p "$work" "$artifacts"
	echo "== $name: replaying $(ls "$seeds" | wc -l) seeds"
	if ! "$bin" -runs=0 -artifact_prefix="$artifacts/" "$seeds" >"$log.replay" 2>&1; then
		tail -30 "$log.replay"
		echo "$name RESULT: FAIL (a seed crashes)"
		failed=1
		return
	fi
	echo "== $name: fuzzing for ${seconds}s"
	# New inputs go to the working corpus; the seeds are only read.
	"$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len="$max_len" \
		-print_final_stats=1 -artifact_prefix="$artifacts/" \
		"$work" "$seeds" >"$log" 2>&1 || status=$?
	execs=$(awk '/^stat::number_of_executed_units/ {print $2}' "$log")
	secs=$(grep -oE 'Done [0-9]+ runs in [0-9]+ second' "$log" | grep -oE '[0-9]+ second' | awk '{print $1}' || true)
	cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 || true)
	echo "$name executions: ${execs:-?}"
	echo "$name seconds: ${secs:-$seconds}"
	echo "$name coverage: ${cov:-?}, corpus: $(ls "$work" | wc -l) new files"
	if [ "$status" -eq 0 ] && grep -q 'runtime error' "$log"; then
		grep 'runtime error' "$log" | sort | uniq -c | head -10
		echo "$name: undefined behaviour reported (UBSAN_OPTIONS=$UBSAN_OPTIONS)"
		status=1
	fi
	if [ "$status" -ne 0 ]; then
		grep -E 'ERROR|SUMMARY|Test unit written|runtime error' "$log" | head -20 || true
		echo "$name RESULT: FAIL (exit $status), log: $log"
		failed=1
	else
		echo "$name RESULT: OK (no findings), log: $log"
	fi
}

selected() {
	[ -z "${BPROF_FUZZ_TARGETS:-}" ] || [[ " $BPROF_FUZZ_TARGETS " == *" $1 "* ]]
}

selected fuzz_read && run_target fuzz_read "$here/corpus/read"
selected fuzz_read_content && run_target fuzz_read_content "$here/corpus/content"
selected fuzz_report && run_target fuzz_report "$here/corpus/report"
selected fuzz_report_content && run_target fuzz_report_content "$here/corpus/report_content"
selected fuzz_folded && run_target fuzz_folded "$here/corpus/folded"
selected fuzz_exports && run_target fuzz_exports "$here/corpus/exports"
selected fuzz_ehtab && run_target fuzz_ehtab "$here/corpus/ehtab" 8192
selected fuzz_cache && run_target fuzz_cache "$here/corpus/cache" 65536
selected fuzz_tabcache && run_target fuzz_tabcache "$here/corpus/tabcache" 16384
selected fuzz_pyline && run_target fuzz_pyline "$here/corpus/pyline" 4096
selected fuzz_jvmline && run_target fuzz_jvmline "$here/corpus/jvmline" 4096
selected fuzz_jitdump && run_target fuzz_jitdump "$here/corpus/jitdump" 16384
selected fuzz_gopclntab && run_target fuzz_gopclntab "$here/corpus/gopclntab" 4096
exit $failed
