#!/bin/bash
# The biggest programs get complete stacks with the default options:
# clang++ links libLLVM and libclang-cpp, ~2.5 M unwind rows together (10 MiB
# of tables), which the old fixed 1 M-row table could not hold (0.1-1.8 %
# of clang's stacks were complete).  The tables' kernel memory now grows
# with what is loaded, up to --unwind-memory (default 128M): >= 95 % of
# clang's user stacks must reach its start frames, nothing may be reported
# as not fitting, and the memory must be what the tables need, not a
# preallocated ceiling.
. "$(dirname "$0")/common.sh"
command -v clang++ >/dev/null || skip "clang++ is not installed"

# A C++ file that keeps clang busy ~3 s (STL instantiations, no deep
# template recursion: stacks deeper than 127 frames would be cut, which is
# another limit than the one tested here).
cpp=$T_DIR/big.cpp
{
	for h in algorithm map string vector unordered_map functional sstream memory set; do
		echo "#include <$h>"
	done
	for i in 0 1 2; do
		cat <<EOF
struct S$i { int a; std::string b; double c; bool operator<(const S$i& o) const { return a < o.a || (a == o.a && b < o.b); } };
int f$i(std::vector<S$i> v, const std::string& k) {
	std::map<std::string, std::vector<S$i>> m; std::unordered_map<int, std::set<S$i>> u;
	std::sort(v.begin(), v.end(), [](const S$i& x, const S$i& y) { return x.c * $i < y.c; });
	for (auto& s : v) { m[s.b + k].push_back(s); u[s.a % $((i + 3))].insert(s); }
	std::ostringstream os; for (auto& [key, vec] : m) os << key << vec.size();
	auto p = std::make_shared<std::function<int(int)>>([&](int x) { return x + (int)u.size(); });
	return (int)os.str().size() + (*p)($i);
}
EOF
	done
} >"$cpp"

"$BPROF_RECORD" -q -F 499 -o "$T_DIR/clang.bprof" -- clang++ -std=c++17 -O2 -c -o "$T_DIR/big.o" "$cpp" \
	2>"$T_DIR/clang.err" >/dev/null
cat "$T_DIR/clang.err" >&2
"$BPROF_REPORT" -q -f -U "$T_DIR/clang.bprof" >"$T_DIR/clang.folded"
"$BPROF_REPORT" --info "$T_DIR/clang.bprof" >"$T_DIR/clang.info"
read -r k t < <(start_share "$T_DIR/clang.folded" clang++)
echo "clang++: $k of $t samples reach the start frames"
sed -n '/^unwinding/,/^access/p' "$T_DIR/clang.info"
check "clang++ was sampled ($t samples)" test "$t" -ge 300
check "clang++: >= 95% of its stacks complete with the defaults ($k/$t)" test $((k * 100)) -ge $((t * 95))
# Where walks end (tools/stack-ends.py: object, symbol, FDE or not).
# Every program starts in ld.so's entry code, RTLD_START, which has no
# FDE: relocation (_dl_start) and the libraries' constructors (_dl_init)
# are called from it.  Its END row makes those walks complete; without
# it they fell back to the frame pointer there and ended incomplete.
dump "$T_DIR/clang.bprof"
python3 "$BPROF_SRC/tools/stack-ends.py" -a "$T_DIR/clang.bprof.txt" clang++ >"$T_DIR/clang.ends"
grep -v '  complete  .*libclang-cpp\|  complete  .*libLLVM' "$T_DIR/clang.ends" | head -n 20
check "clang's start-up was sampled in ld.so, its walks complete at the entry code" \
	grep -qE '^ *[0-9]+  complete  /.*/ld-linux-x86-64\.so\.2  [^ ]+  e_entry\+' "$T_DIR/clang.ends"
check "no walk ends incomplete in ld.so's entry code" \
	sh -c "! grep -qE '  incomplete  /.*/ld-linux-x86-64\.so\.2  [^ ]+  e_entry\+' '$T_DIR/clang.ends'"
check "the compiler's own frames are under main (clang's cc1_main)" \
	grep -qE '^clang\+\+;_start;__libc_start_main_impl;__libc_start_call_main;main;.*;cc1_main\(' "$T_DIR/clang.folded"
check "no table said not to fit" grep -q ' 0 did not fit$' "$T_DIR/clang.info"
check "no warning" sh -c "! grep -q 'WARNING' '$T_DIR/clang.err'"
check "no 'tables that did not fit' in --info" sh -c "! grep -q 'tables that did not fit' '$T_DIR/clang.info'"
# the memory is what the tables need: ~2.5 M rows are ~10 MiB in 1 MiB
# maps; the old preallocation of 16 M rows for them took 65.6 MiB
mem=$(awk '/kernel memory for the tables:/ { print int($6 + 0.999) }' "$T_DIR/clang.info")
rows=$(awk '/table rows, rules, pages:/ { sub(",", "", $5); print $5 }' "$T_DIR/clang.info")
echo "tables: $rows rows in $mem MiB of kernel memory"
check "over 2 M rows loaded ($rows)" test "$rows" -ge 2000000
check "kernel memory follows the rows: <= 4.5 bytes a row + 2 MiB ($mem MiB)" \
	test $((mem * 1048576)) -le $((rows * 9 / 2 + 2097152))
finish
