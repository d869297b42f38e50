#!/bin/bash
# The table cache (record/unwind/tabcache.c): a second recording of the same
# program reads the unwind tables the first one built, by build-id, and
# its stacks are as complete; a damaged file is rejected and rebuilt; a
# directory others may write to is not used; --no-table-cache neither
# reads nor writes.
. "$(dirname "$0")/common.sh"

C=$T_DIR/cache
prog=$W/uw-gcc
# share FOLDED: "complete total" over uw-gcc's user stacks
share() {
	awk 'index($0, "uw-gcc;") == 1 { t += $NF }
		index($0, "uw-gcc;") == 1 && /;(__libc_start_call_main|start_thread);/ { k += $NF }
		END { print k + 0, t + 0 }' "$1"
}
# record NAME [OPTIONS]: uw-gcc's recursion and qsort for 0.5 s at 499 Hz
record() {
	local name=$1
	shift
	"$BPROF_RECORD" -v -F 499 -o "$T_DIR/$name.bprof" "$@" -- "$prog" 0.5 recurse qsort \
		2>"$T_DIR/$name.err" >/dev/null
	"$BPROF_REPORT" -q -f -U "$T_DIR/$name.bprof" >"$T_DIR/$name.folded"
	read -r k t < <(share "$T_DIR/$name.folded")
	echo "$name: $k of $t samples reach the start frames"
	check "$name: >= 95% of stacks complete ($k/$t)" test $((k * 100)) -ge $((t * 95)) -a "$t" -ge 100
	check "$name: all 40 recursion frames" \
		grep -qE "^uw-gcc;_start;[^ ]*__libc_start_call_main;main;mode_recurse;(recurse;){40}recurse_leaf[; ]" \
		"$T_DIR/$name.folded"
}
# said NAME READ WRITTEN REJECTED: the -v line's counts
said() {
	grep -q "table cache: $2 tables read, $3 built and written, $4 rejected" "$T_DIR/$1.err"
}

mkdir -m 0700 "$C"
# what a writer killed mid-write leaves: swept after an hour
touch -d '2 hours ago' "$C/.0123abcd-0011223344556677.tab.99999"
touch "$C/.4567abcd-0011223344556677.tab.99998"
record first --table-cache="$C"
check "first: a dead writer's temporary file swept, a recent one kept" \
	test ! -e "$C/.0123abcd-0011223344556677.tab.99999" -a -e "$C/.4567abcd-0011223344556677.tab.99998"
n=$(find "$C" -name '*.tab' | wc -l)
check "first: its tables written ($n files: uw-gcc, libc, ld.so at least)" test "$n" -ge 3
check "first: said so" said first 0 "$n" 0
check "first: the directory is 0700, the files 0600" \
	test "$(stat -c %a "$C")" = 700 -a "$(find "$C" -name '*.tab' ! -perm 600 | wc -l)" = 0
check "first: a file per build-id, libc's among them" \
	test -n "$(find "$C" -name "$(build_id /usr/lib/x86_64-linux-gnu/libc.so.6)-*.tab")"

record second --table-cache="$C"
check "second: every table read, none built" said second "$n" 0 0
check "second: the tables as built (same rows)" test \
	"$(grep -o 'table rows, rules, pages: *[0-9]*' <("$BPROF_REPORT" --info "$T_DIR/first.bprof"))" = \
	"$(grep -o 'table rows, rules, pages: *[0-9]*' <("$BPROF_REPORT" --info "$T_DIR/second.bprof"))"

# damage libc's file in its body: the hash no longer matches
f=$(find "$C" -name "$(build_id /usr/lib/x86_64-linux-gnu/libc.so.6)-*.tab")
printf '\377\377\377\377\377\377\377\377' | dd of="$f" bs=1 seek=4000 conv=notrunc status=none
record damaged --table-cache="$C"
check "damaged: the file rejected, the table rebuilt and written again" said damaged $((n - 1)) 1 1
record repaired --table-cache="$C"
check "repaired: every table read again" said repaired "$n" 0 0

# a file cut short, and one that is not a table at all
head -c 100 "$f" >"$f.cut" && mv "$f.cut" "$f"
record cut --table-cache="$C"
check "cut: rejected and rebuilt" said cut $((n - 1)) 1 1

O=$T_DIR/open
mkdir -m 0777 "$O"
chmod 0777 "$O"
record open --table-cache="$O"
check "open directory: not used, and said why" grep -q "no table cache: the directory belongs to another user or others may write to it" "$T_DIR/open.err"
check "open directory: nothing written there" test "$(find "$O" -type f | wc -l)" = 0

record none --no-table-cache
check "--no-table-cache: no cache at all" bash -c "! grep -q 'table cache' '$T_DIR/none.err'"
finish
