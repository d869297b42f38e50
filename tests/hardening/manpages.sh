#!/usr/bin/env bash
# --help, the man pages (docs/), the bash completions and the option lists
# of the README's and docs/'s examples say the same (issue 31): every long
# option of `--help` has a man page entry and the other way round, the man
# page gives --help's defaults and examples, the completion offers every
# option, and no example uses an option the program does not have.
# mancheck.py does the comparing; it prints what disagrees.
source "$BPROF_SRC/tests/e2e/lib.sh"

docs=("$BPROF_SRC/README.md" "$BPROF_SRC"/docs/*.md)
for pair in "$BPROF_RECORD:prof-record.8" "$BPROF_REPORT:prof-report.1"; do
	prog=${pair%%:*}
	name=$(basename "$prog")
	"$prog" --help > "$T_DIR/$name.help"
	check "$name: --help, $name(${pair##*.}), completion/$name and the docs agree" \
		python3 "$BPROF_SRC/tests/hardening/mancheck.py" "$name" "$T_DIR/$name.help" \
		"$BPROF_SRC/docs/${pair#*:}" "$BPROF_SRC/completion/$name" "${docs[@]}"
done
finish
