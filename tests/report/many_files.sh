#!/usr/bin/env bash
# Memory of a report over many files (issue 30): the exports read the files
# of a set one at a time and close each once walked (report/main.c,
# run_exports; the text outputs flush their fold every 16 files), so their
# peak RSS is bounded by the merged profile, not by the number of files.
# Before, every decoded recording stayed until the end: 1.2 MiB more per
# copy of a 150 KB recording (N=20: 37 MB, N=100: 137 MB with
# --heatmap --svg --missing-buildids).  pprof and speedscope keep a
# mapping table or a profile per file in their output, so they grow with
# the files by design and are not checked here.
source "$BPROF_SRC/tests/e2e/lib.sh"
require_bpf
command -v /usr/bin/time > /dev/null || fail "/usr/bin/time missing (tools/install-deps.sh: time)"

# one recording with many stacks: every CPU for 2 s at 999 Hz while a
# workload runs
"$BPROF_WORKLOADS/ratio" 3 > /dev/null &
wl=$!
"$BPROF_RECORD" -q -F 999 -o "$T_DIR/one.bprof" 2
wait "$wl"

mkset() { # mkset N: a directory of N copies (symlinks) of the recording
	mkdir -p "$T_DIR/set$1"
	for i in $(seq -w 1 "$1"); do ln -sf ../one.bprof "$T_DIR/set$1/f$i.bprof"; done
}
# peak RSS in KiB of prof-report ARGS... (no cache: every run alike)
peak() {
	/usr/bin/time -f '%M' -o "$T_DIR/rss" "$BPROF_REPORT" -q --no-cache "$@" > /dev/null 2>&1 ||
		{ echo 999999999; return; }
	tail -1 "$T_DIR/rss"
}
mkset 20
mkset 220
for opts in "--heatmap=$T_DIR/h.html" "--svg=$T_DIR/s.svg" "--missing-buildids" \
	"--heatmap=$T_DIR/h.html --svg=$T_DIR/s.svg --missing-buildids"; do
	# shellcheck disable=SC2086
	a=$(peak $opts "$T_DIR/set20")
	# shellcheck disable=SC2086
	b=$(peak $opts "$T_DIR/set220")
	echo "$opts: peak RSS $a KiB over 20 files, $b KiB over 220"
	check "$opts: 200 more files add under 10 MiB of peak RSS ($a -> $b KiB)" \
		test "$b" -lt $((a + 10 * 1024))
done

# the files streamed (more than 16: prescan, flushes) sum as they should:
# 220 copies are 220 times one file's counts, and their flame graph has
# one file's frames
"$BPROF_REPORT" -q -f "$T_DIR/one.bprof" | awk '{ $NF = $NF * 220; print }' | sort > "$T_DIR/want"
"$BPROF_REPORT" -q -f "$T_DIR/set220" | awk '{ $NF = $NF + 0; print }' | sort > "$T_DIR/got"
check "-f over 220 copies: 220 times the counts" cmp "$T_DIR/want" "$T_DIR/got"
"$BPROF_REPORT" -q --svg="$T_DIR/one.svg" "$T_DIR/one.bprof"
"$BPROF_REPORT" -q --svg="$T_DIR/many.svg" "$T_DIR/set220"
check "--svg over 220 copies: the same frames as one file's" \
	cmp <(grep -o '<title>[^(<]*' "$T_DIR/one.svg" | sort -u) \
	<(grep -o '<title>[^(<]*' "$T_DIR/many.svg" | sort -u)
finish
