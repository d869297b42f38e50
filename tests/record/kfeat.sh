#!/usr/bin/env bash
# Every fallback for a kernel feature, and its message, on this kernel:
# BPROF_KFEAT_OFF takes features as missing (record/kfeat.c), so the choices
# older kernels make are checked here on every run; tests/kernels runs the
# real ones in qemu.  A message that names a feature must name the one
# taken away, with the release it arrived in.
source "$BPROF_SRC/tests/e2e/lib.sh"
require_bpf
W=$BPROF_WORKLOADS

# rec NAME OFF ARGS...: a recording with features OFF taken away
rec() {
	local name=$1 off=$2 s=0; shift 2
	BPROF_KFEAT_OFF=$off "$BPROF_RECORD" -v "$@" >/dev/null 2>"$T_DIR/$name.err" || s=$?
	echo $s >"$T_DIR/$name.rc"
}
rc() { cat "$T_DIR/$1.rc"; }
says() { grep -qF -- "$2" "$T_DIR/$1.err"; }
loaded() { grep -q "^prof-record: program $2:" "$T_DIR/$1.err"; }
complete() { # NAME: % of walked stacks reaching the start
	"$BPROF_REPORT" -q --info "$T_DIR/$1.bprof" |
		awk '/reached the start frames:/ { gsub(/[(%)]/, "", $6); print int($6); exit }'
}

# Debian 11's 5.10: no bpf_loop, no bpf_find_vma, no growing hash maps
rec old "loop,find_vma,noprealloc" -F 199 -o "$T_DIR/old.bprof" -- "$W/uw-gcc" 1 qsort recurse
check "5.10-like: records" test "$(rc old)" = 0
check "5.10-like: the tail-call sampler" loaded old do_perf_event_lean
check "5.10-like: does not say Python frames are not recorded (the tail walk names them)" \
	bash -c "! grep -q 'Python frames are not recorded' '$T_DIR/old.err'"
check "5.10-like: says V8 JavaScript frames are not recorded, and why" \
	says old "this kernel lacks the BPF helper bpf_loop (Linux 5.17): V8 JavaScript frames are not recorded"
check "5.10-like: says Java frames are not recorded, and why" \
	says old "this kernel lacks the BPF helper bpf_loop (Linux 5.17): Java frames are not recorded"
check "5.10-like: mapping generations by the lean hook (each change read at the mm lock)" \
	says old "mapping generations: at the mm lock (mmap_lock_released), read there"
c=$(complete old)
check "5.10-like: >= 95 % of FP-less stacks complete ($c %)" test "${c:-0}" -ge 95

"$BPROF_REPORT" -q --info "$T_DIR/old.bprof" > "$T_DIR/old.info"
check "5.10-like: the file does not say it has no mapping generations (--info)" \
	bash -c "! grep -q '^not recorded: *mapping generations' '$T_DIR/old.info'"
check "5.10-like: the file does not say Python frames were not walked (--info)" \
	bash -c "! grep -q '^not recorded: *Python frames' '$T_DIR/old.info'"
check "5.10-like: the file says V8 JavaScript frames were not walked (--info)" \
	grep -q '^not recorded: *V8 JavaScript frames' "$T_DIR/old.info"
check "5.10-like: the file says Java frames were not walked (--info)" \
	grep -q '^not recorded: *Java frames' "$T_DIR/old.info"
check "5.10-like: format 1.10 header (META flags 4 to 7)" \
	test "$(od -An -tu2 -j10 -N2 "$T_DIR/old.bprof" | tr -d ' ')" = 10
rec oldnort "loop,find_vma,noprealloc" --no-v8 --no-jvm -F 199 -o "$T_DIR/oldnort.bprof" -- "$W/uw-gcc" 1 recurse
"$BPROF_REPORT" -q --info "$T_DIR/oldnort.bprof" > "$T_DIR/oldnort.info"
check "5.10-like, --no-v8 --no-jvm: the file blames the kernel for no runtime's frames" \
	bash -c "[ $(rc oldnort) = 0 ] && ! grep -q '^not recorded: *\(Python\|V8\|Java\)' '$T_DIR/oldnort.info' && ! grep -qF 'Java frames are not recorded' '$T_DIR/oldnort.err'"
# a Python command there: its frames by the tail walk (python/python_frame.h)
PY=/usr/bin/python3.11
if [ -x "$PY" ]; then
	rec oldpy "loop,find_vma,noprealloc" -F 199 -o "$T_DIR/oldpy.bprof" -- "$PY" "$BPROF_SRC/tests/workloads/python/pywork.py" 1
	"$BPROF_REPORT" -q -f "$T_DIR/oldpy.bprof" > "$T_DIR/oldpy.folded"
	check "5.10-like, a Python command: the tail-call sampler names its frames (<module>;main;recurse...;leaf)" \
		bash -c "[ $(rc oldpy) = 0 ] && grep -q '^prof-record: program do_perf_event_lean:' '$T_DIR/oldpy.err' &&
			grep -Eq '<module> \([^)]*pywork\.py:[0-9]+\);main \([^)]*\);recurse \([^)]*\);recurse \(.*;leaf \(' '$T_DIR/oldpy.folded'"
fi

rec oldfp "loop,find_vma,noprealloc" --unwind=fp -F 199 -o "$T_DIR/oldfp.bprof" -- "$W/uw-fp" 1 recurse
check "5.10-like --unwind=fp: records with the lean sampler" \
	bash -c "[ $(rc oldfp) = 0 ] && grep -q '^prof-record: program do_perf_event_lean:' '$T_DIR/oldfp.err'"

# before 5.14: no syscall programs, so no loader program is tried, and
# kernel addresses are named from /proc/kallsyms (not by ksymname.bpf.c)
rec noloader syscall_prog -F 499 -o "$T_DIR/noloader.bprof" -- "$W/syscalls" 1
check "no syscall programs: loaded by libbpf, saying why, without trying the loader program" \
	bash -c "[ $(rc noloader) = 0 ] && grep -qF 'this kernel lacks BPF syscall programs (Linux 5.14): the BPF object is loaded by libbpf' '$T_DIR/noloader.err' && grep -q 'BPF object loaded by libbpf' '$T_DIR/noloader.err' && ! grep -q 'loader program failed' '$T_DIR/noloader.err'"
n=$("$BPROF_REPORT" -q -f "$T_DIR/noloader.bprof" | awk '/;do_syscall_64;/ { s += $NF } END { print s + 0 }')
check "no syscall programs: kernel frames named from /proc/kallsyms, saying why ($n samples under do_syscall_64)" \
	bash -c "[ $n -gt 20 ] && grep -qF 'this kernel lacks BPF syscall programs (Linux 5.14): kernel addresses are named from /proc/kallsyms' '$T_DIR/noloader.err'"

# 5.15/5.16: bpf_loop missing only
rec noloop loop -F 199 -o "$T_DIR/noloop.bprof" -- "$W/uw-gcc" 1 recurse
check "no bpf_loop: the tail-call sampler, >= 95 % complete ($(complete noloop) %)" \
	bash -c "[ $(rc noloop) = 0 ] && grep -q 'program do_perf_event_lean:' '$T_DIR/noloop.err' && [ $(complete noloop) -ge 95 ]"

# 5.17-6.0: bpf_loop, but no hash map that grows in a perf_event program
rec noalloc noprealloc -F 199 -o "$T_DIR/noalloc.bprof" -- "$W/uw-gcc" 1 recurse
check "no growing maps: the bpf_loop sampler with the kernel's stack maps, >= 95 % complete ($(complete noalloc) %)" \
	bash -c "[ $(rc noalloc) = 0 ] && grep -q 'program do_perf_event_cfi:' '$T_DIR/noalloc.err' && [ $(complete noalloc) -ge 95 ]"

"$BPROF_REPORT" -q --info "$T_DIR/noalloc.bprof" > "$T_DIR/noalloc.info"
check "with generations and Python: --info says nothing is missing" \
	bash -c "! grep -q '^not recorded:' '$T_DIR/noalloc.info'"

# bpf_find_vma missing: the unwinder stays, generations by the lean hook
rec novma find_vma -F 199 -o "$T_DIR/novma.bprof" -- "$W/uw-gcc" 1 recurse
check "no bpf_find_vma: the bpf_loop sampler still" loaded novma do_perf_event_cfi
check "no bpf_find_vma: mapping generations by the lean hook" \
	says novma "mapping generations: at the mm lock (mmap_lock_released), read there"

# --off-cpu and --wall: without any one of what offcpu.bpf.c's programs use,
# offcpu_lean.bpf.c's record, naming what is missing
sleeps() { # NAME REGEX: the off-CPU samples of the sleeper's stacks that match
	"$BPROF_REPORT" -q -f --off-cpu "$T_DIR/$1.bprof" | awk -v re="$2" '$0 ~ re { s += $NF } END { print s + 0 }'
}
for f in "task_storage:BPF task storage maps for tracing programs (Linux 5.11)" \
	"current_task_btf:the BPF helper bpf_get_current_task_btf (Linux 5.11)" \
	"task_pt_regs:the BPF helper bpf_task_pt_regs (Linux 5.15)" \
	"loop:the BPF helper bpf_loop (Linux 5.17)" \
	"noprealloc:hash maps that grow in perf_event programs (Linux 6.1)"; do
	off=${f%%:*} what=${f#*:}
	for m in --off-cpu --wall; do
		name=off-$off${m#--}
		rec "$name" "$off" "$m" -F 99 -o "$T_DIR/$name.bprof" -- "$W/offcpu" 1
		n=$(sleeps "$name" '^sleeper;clone3;start_thread;sleeper;sleep_long;nap;')
		check "$m without $off: records with the older kernels' programs, naming $what ($n samples in sleep_long, whole stacks)" \
			bash -c "[ $(rc "$name") = 0 ] && grep -qF -- 'this kernel lacks $what: $m records with the programs for older kernels' '$T_DIR/$name.err' && [ $n -gt 40 ]"
	done
done

# all of 5.10's lacks at once: the tail-call sampler and the lean programs
rec off510 "loop,find_vma,noprealloc,task_storage,current_task_btf,task_pt_regs" --off-cpu -F 99 \
	-o "$T_DIR/off510.bprof" -- "$W/offcpu" 2
l=$(sleeps off510 '^sleeper;clone3;start_thread;sleeper;sleep_long;nap;__GI___clock_nanosleep;')
s=$(sleeps off510 '^sleeper;clone3;start_thread;sleeper;sleep_short;nap;__GI___clock_nanosleep;')
check "5.10-like --off-cpu: records, with the tail-call sampler" \
	bash -c "[ $(rc off510) = 0 ] && grep -q 'program do_perf_event_lean:' '$T_DIR/off510.err'"
check "5.10-like --off-cpu: sleep_long's share of the naps' whole stacks 75 % +- 8 ($l, $s)" \
	python3 -c "import sys; t = $l + $s; sys.exit(0 if t > 100 and abs(100 * $l / t - 75) <= 8 else 1)"

# This boot's answers, kept (record/kfeat.h): written by the first start,
# read by the next, and never taken from a file that is not this boot's,
# not whole, or that another user could have written.  BPROF_KFEAT_OFF
# applies to kept answers as to probed ones.
kc=$T_DIR/kc/kfeat
kcrec() { # NAME ARGS...: a recording of true with the cache at $kc
	local name=$1; shift
	BPROF_KFEAT_CACHE=$kc "$@" "$BPROF_RECORD" -v -o "$T_DIR/$name.bprof" --force -- true >/dev/null 2>"$T_DIR/$name.err" || true
}
from="the kernel's features: this boot's answers, from $kc"
kcrec kc1
check "kept answers: the first start probes and keeps them" \
	bash -c "[ -s '$kc' ] && ! grep -qF \"$from\" '$T_DIR/kc1.err' && grep -q 'program do_perf_event_cfi:' '$T_DIR/kc1.err'"
check "kept answers: in a directory only root may write" \
	bash -c "[ \"\$(stat -c '%u %a' '$T_DIR/kc')\" = '0 700' ]"
kcrec kc2
check "kept answers: the next start reads them and loads what the first did" \
	bash -c "grep -qF \"$from\" '$T_DIR/kc2.err' && grep -q 'program do_perf_event_cfi:' '$T_DIR/kc2.err'"
kcrec kc3 env BPROF_KFEAT_OFF=loop
check "kept answers: BPROF_KFEAT_OFF still applies (the tail-call sampler)" \
	bash -c "grep -qF \"$from\" '$T_DIR/kc3.err' && grep -q 'program do_perf_event_lean:' '$T_DIR/kc3.err'"
good=$(cat "$kc")
for bad in "another boot|${good/ $(cat /proc/sys/kernel/random/boot_id) / 00000000-0000-0000-0000-000000000000 }" \
	   "another version|${good/bprof-kfeat 1 /bprof-kfeat 999 }" \
	   "cut short|${good% *}" \
	   "garbage|$(head -c 200 /dev/urandom | tr -d '\0')" \
	   "an unknown feature bit|$(echo "$good" | awk '{ $5 = "ffffffff"; print }')"; do
	what=${bad%%|*}
	[ "${bad#*|}" != "$good" ] || fail "kept answers: the test's $what is the good file"
	printf '%s\n' "${bad#*|}" >"$kc"
	kcrec kcbad
	check "kept answers: $what is not taken, and the file is probed anew" \
		bash -c "! grep -qF \"$from\" '$T_DIR/kcbad.err' && [ \"\$(cat '$kc')\" = '$good' ]"
done
chmod 666 "$kc"
kcrec kcperm
check "kept answers: a file others may write is not taken" \
	bash -c "! grep -qF \"$from\" '$T_DIR/kcperm.err'"

finish
