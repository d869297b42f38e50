#!/bin/bash
# prof-report --info on recordings with an ACCESS section (format 1.2,
# written by bprof-mkrec): it says as whom the recorder ran, what the
# recording lacks because of it and which capability would have given it;
# a root recorder gets one line; a file without ACCESS gets no access
# block.  No BPF needed.
. "${BPROF_SRC:?}/tests/e2e/lib.sh"

R=${BPROF_REPORT:?}
MK=${BPROF_MKREC:-${BPROF_BUILD:?}/tests/hardening/bprof-mkrec}
[ -x "$R" ] || skip "$R not built"
[ -x "$MK" ] || skip "$MK not built"

# has FILE TEXT: FILE has a line that is exactly TEXT
has() { grep -q -x -F -e "$2" "$1"; }

# 1. uid 65534 with CAP_BPF and CAP_PERFMON: every limit said, with counts
"$MK" access-user "$T_DIR/user.bprof"
rc=0
"$R" --info "$T_DIR/user.bprof" >"$T_DIR/user" 2>"$T_DIR/user.err" || rc=$?
sed -n '/^access:/,/^kernel image:/p' "$T_DIR/user"
check "user: exit 0" test "$rc" -eq 0
check "user: recorded as uid 65534 with CAP_BPF CAP_PERFMON (not root)" \
	has "$T_DIR/user" "access:         recorded as uid 65534 with CAP_BPF CAP_PERFMON (not root)"
check "user: other users' processes, 12 without mappings, CAP_SYS_PTRACE" \
	has "$T_DIR/user" "  mappings of other users' processes: not readable (12 processes without mappings): CAP_SYS_PTRACE would read them"
check "user: unreadable files, 3 objects, CAP_DAC_READ_SEARCH" \
	has "$T_DIR/user" "  files the user may not read:        not readable (3 objects): CAP_DAC_READ_SEARCH would read them"
check "user: map_files closed, 40 by path, 2 unverified, CAP_CHECKPOINT_RESTORE" \
	has "$T_DIR/user" "  /proc/PID/map_files:                closed: 40 objects identified by path (device and inode checked), 2 could not be verified (deleted or replaced since mapped): CAP_CHECKPOINT_RESTORE would identify them"
check "user: kernel addresses hidden, CAP_SYSLOG" \
	has "$T_DIR/user" "  kernel addresses:                   hidden: kernel frames need vmlinux debuginfo; CAP_SYSLOG would record kallsyms"
check "user: exactly one access block of 5 lines" \
	test "$(sed -n '/^access:/,/^kernel image:/p' "$T_DIR/user" | grep -c '')" -eq 6

# 2. root that could read everything: one line
"$MK" access-root "$T_DIR/root.bprof"
"$R" --info "$T_DIR/root.bprof" >"$T_DIR/root" 2>&1
sed -n '/^access:/,/^kernel image:/p' "$T_DIR/root"
check "root: 'recorded as root'" has "$T_DIR/root" "access:         recorded as root"
check "root: nothing else said" \
	test "$(sed -n '/^access:/,/^kernel image:/p' "$T_DIR/root" | grep -c '')" -eq 2

# 3. some capabilities: only what was lacking; unknown capability numbers
#    printed as numbers; no advice to add a capability it had
"$MK" access-caps "$T_DIR/caps.bprof"
"$R" --info "$T_DIR/caps.bprof" >"$T_DIR/caps" 2>&1
sed -n '/^access:/,/^kernel image:/p' "$T_DIR/caps"
check "caps: named, then the others as numbers" \
	has "$T_DIR/caps" "access:         recorded as uid 1000 with CAP_BPF CAP_PERFMON CAP_SYS_PTRACE CAP_SYSLOG (and capabilities 12) (not root)"
check "caps: refused despite CAP_SYS_PTRACE, not told to add it" \
	grep -q "^  mappings of other users' processes: not readable (2 processes without mappings); refused despite CAP_SYS_PTRACE" "$T_DIR/caps"
check "caps: no line for what it could read" \
	sh -c "! grep -q -e '^  files the user' -e '^  /proc/PID/map_files' -e '^  kernel addresses' '$T_DIR/caps'"

# 4. files without ACCESS (older formats, or a writer that did not say):
#    no access block at all
"$MK" empty-comm "$T_DIR/none.bprof"
for f in "$T_DIR/none.bprof" "$BPROF_SRC/tests/data/format/valid/v1.1-typical.bprof" \
	"$BPROF_SRC/tests/data/format/valid/v1.0-typical.bprof"; do
	"$R" --info "$f" >"$T_DIR/none" 2>&1
	check "no ACCESS section ($(basename "$f")): no access block" \
		sh -c "! grep -q -e '^access:' -e 'map_files' -e 'CAP_' '$T_DIR/none'"
done
finish
