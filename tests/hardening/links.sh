#!/bin/bash
# Links planted at the output path.  Without --force prof-record refuses
# both (the path exists); with --force the new recording replaces the
# directory entry: a symlink is replaced, not followed (its target keeps its
# content), and a hard-linked inode is not written through (the other name
# keeps the old content).
. "$(dirname "$0")/common.sh"

bg "$W/ratio" 600 1 # killed at exit
d=$T_DIR/out
mkdir "$d"

# symlink, no --force: refused, target and link untouched
echo precious >"$T_DIR/target"
ln -s "$T_DIR/target" "$d/link.bprof"
rc=0; "$REC" -q -o "$d/link.bprof" 1 2>"$T_DIR/err" || rc=$?
cat "$T_DIR/err"
check "symlink: refused without --force" test "$rc" -ne 0
check "symlink: message says it exists" grep -q 'already exists' "$T_DIR/err"
check "symlink: target untouched" test "$(cat "$T_DIR/target")" = precious
check "symlink: still the same symlink" test "$(readlink "$d/link.bprof")" = "$T_DIR/target"

# dangling symlink, no --force: refused too (lstat), nothing created at its target
ln -s "$T_DIR/nowhere.bprof" "$d/dangling.bprof"
rc=0; "$REC" -q -o "$d/dangling.bprof" 1 2>/dev/null || rc=$?
check "dangling symlink: refused without --force" test "$rc" -ne 0
check "dangling symlink: its target not created" test ! -e "$T_DIR/nowhere.bprof"

# symlink with --force: replaced by the recording, target untouched
rc=0; "$REC" -q --force -o "$d/link.bprof" 1 2>"$T_DIR/err" || rc=$?
cat "$T_DIR/err"
check "symlink --force: exit 0" test "$rc" -eq 0
check "symlink --force: target untouched" test "$(cat "$T_DIR/target")" = precious
check "symlink --force: path is now a regular file" test -f "$d/link.bprof" -a ! -L "$d/link.bprof"
check "symlink --force: the recording is complete" dump_to "$d/link.bprof" "$T_DIR/link.txt"

# hard link, no --force: refused, both names keep the content
echo old-content >"$T_DIR/other-name"
ln "$T_DIR/other-name" "$d/hard.bprof"
rc=0; "$REC" -q -o "$d/hard.bprof" 1 2>/dev/null || rc=$?
check "hard link: refused without --force" test "$rc" -ne 0
check "hard link: content untouched" test "$(cat "$T_DIR/other-name")" = old-content
check "hard link: still two links" test "$(stat -c %h "$T_DIR/other-name")" -eq 2

# hard link with --force: a new inode at the path; the other name keeps the old one
ino=$(stat -c %i "$T_DIR/other-name")
rc=0; "$REC" -q --force -o "$d/hard.bprof" 1 2>"$T_DIR/err" || rc=$?
cat "$T_DIR/err"
check "hard link --force: exit 0" test "$rc" -eq 0
check "hard link --force: other name's content untouched" test "$(cat "$T_DIR/other-name")" = old-content
check "hard link --force: path is a new inode" test "$(stat -c %i "$d/hard.bprof")" != "$ino"
check "hard link --force: the recording is complete" dump_to "$d/hard.bprof" "$T_DIR/hard.txt"

# nothing else appeared in the directory (no temporary files)
left=$(cd "$d" && ls -A | sort | tr '\n' ' ')
check "only the expected names in the directory [$left]" test "$left" = "dangling.bprof hard.bprof link.bprof "
finish
