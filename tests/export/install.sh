#!/usr/bin/env bash
# cmake --install lays out binaries, man pages and bash completions as a
# distribution would; the man pages render without warnings and document
# every long option that --help lists; the completions load and complete.
source "$BPROF_SRC/tests/e2e/lib.sh"
need() { command -v "$1" >/dev/null || skip "$1 missing (Debian package $2)"; }
need groff groff-base
prefix=$T_DIR/inst
cmake --install "$BPROF_BUILD" --prefix "$prefix" > "$T_DIR/install.log"
for f in bin/prof-report sbin/prof-record share/man/man1/prof-report.1 share/man/man8/prof-record.8 \
	share/bash-completion/completions/prof-report share/bash-completion/completions/prof-record; do
	check "installed $f" test -s "$prefix/$f"
done
check "prof-record installed executable in sbin" test -x "$prefix/sbin/prof-record"
for page in man1/prof-report.1 man8/prof-record.8; do
	check "$page renders without groff warnings" sh -c \
		"groff -man -ww -z '$prefix/share/man/$page' 2>&1 | (! grep .)"
done
if command -v man >/dev/null; then
	check "man -l prof-report.1" sh -c "man -l '$prefix/share/man/man1/prof-report.1' | grep -q -- '--pprof'"
fi
# every long option of --help is documented (groff's \- are plain - in the text)
for tool in report:man1/prof-report.1 record:man8/prof-record.8; do
	bin=$BPROF_BUILD/prof-${tool%%:*}
	[ "${tool%%:*}" = record ] && bin=$BPROF_RECORD
	[ "${tool%%:*}" = report ] && bin=$BPROF_REPORT
	text=$(groff -man -Tutf8 "$prefix/share/man/${tool#*:}" 2>/dev/null | sed 's/\x1b\[[0-9;]*m//g; s/.\x08//g' | tr '\n‐' ' -')
	for opt in $("$bin" --help | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u); do
		check "prof-${tool%%:*} $opt documented" grep -q -- "$opt" <<<"$text"
	done
done
if [ -r /usr/share/bash-completion/bash_completion ]; then
	check "prof-report completion completes --svg and --pprof" bash -c "
		source /usr/share/bash-completion/bash_completion 2>/dev/null
		source '$prefix/share/bash-completion/completions/prof-report'
		COMP_WORDS=(prof-report --p); COMP_CWORD=1; COMP_LINE='prof-report --p'; COMP_POINT=\${#COMP_LINE}
		_prof_report 2>/dev/null; [[ \" \${COMPREPLY[*]} \" == *' --pprof '* ]]"
	check "prof-record completion completes -e and the command after --" bash -c "
		source /usr/share/bash-completion/bash_completion 2>/dev/null
		source '$prefix/share/bash-completion/completions/prof-record'
		COMP_WORDS=(prof-record -e c); COMP_CWORD=2; COMP_LINE='prof-record -e c'; COMP_POINT=\${#COMP_LINE}
		_prof_record 2>/dev/null; [[ \"\${COMPREPLY[*]}\" == 'cpu-clock cycles' ]] || exit 1
		COMP_WORDS=(prof-record -- bas); COMP_CWORD=2; COMP_LINE='prof-record -- bas'; COMP_POINT=\${#COMP_LINE}
		_prof_record 2>/dev/null; [[ \" \${COMPREPLY[*]} \" == *' bash '* ]]"
else
	bash -n "$prefix/share/bash-completion/completions/prof-report"
	check "completions parse (bash-completion not installed)" bash -n "$prefix/share/bash-completion/completions/prof-record"
fi
finish
