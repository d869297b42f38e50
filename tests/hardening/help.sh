#!/usr/bin/env bash
# --help reads as a person wrote it: argp re-wraps prose paragraphs to the
# terminal, but the usage forms and examples after the option list are
# tables that must fit as written; a line there that starts with a lower-case
# word is the tail of a line argp had to break ("flame graphs", "zoom").
source "$BPROF_SRC/tests/e2e/lib.sh"

for prog in "$BPROF_RECORD" "$BPROF_REPORT"; do
	name=$(basename "$prog")
	"$prog" --help > "$T_DIR/$name.help"
	check "$name --help exits 0 and has examples" grep -q '^EXAMPLES:' "$T_DIR/$name.help"
	# after the option list: from the first column-0 heading on
	sed -n '/^ *-V, --version/,$p' "$T_DIR/$name.help" | sed 1d > "$T_DIR/$name.tail"
	broken=$(grep -nE '^[a-z]' "$T_DIR/$name.tail" | grep -v '^[0-9]*:for any corresponding' || true)
	[ -n "$broken" ] && printf '%s\n' "$broken"
	check "$name --help: no table line broken mid-sentence" test -z "$broken"
	check "$name --help: every line fits 79 columns" sh -c "! awk 'length > 79' '$T_DIR/$name.help' | grep -q ."
	check "$name --help: no prose line ends mid-word with a hyphen" sh -c "! grep -qE '[a-z]-\$' '$T_DIR/$name.help'"
done
finish
