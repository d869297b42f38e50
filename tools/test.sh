#!/usr/bin/env bash
# The one command that installs, builds and runs every test:
#   1. the dependencies (tools/install-deps.sh),
#   2. unit tests under ASan+UBSan (build-asan/),
#   3. the libFuzzer targets: corpus replay + FUZZ_SECONDS of fuzzing each (build-fuzz/),
#   4. the static recorder builds and is static (build-static/),
#   5. the full suite - unit and end-to-end BPF tests - on the normal build (build/),
#      whose ctest summary is the last thing printed; it includes kernel_debian12,
#      the kernel matrix's core on Debian 12's 6.1 in a qemu guest.
# End-to-end tests record with BPF and need root; with CI=true a test that
# cannot run fails instead of skipping.
#
#   tools/test.sh --kernels [KERNEL...]   only the kernel matrix, every feature on
#                                         each kernel (default 6.1 5.10 6.12): run it
#                                         before a change to bpf/ or record/ lands
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = --kernels ]; then
	shift
	./tools/install-deps.sh
	cmake -S . -B build -DBPROF_WERROR=ON >/dev/null
	cmake --build build -j"${JOBS:-$(nproc)}"
	cmake -S . -B build-static -DBPROF_STATIC_RECORD=ON -DBPROF_WERROR=ON >/dev/null
	cmake --build build-static -j"${JOBS:-$(nproc)}" --target prof-record
	[ $# -gt 0 ] || set -- 6.1 5.10 6.12
	exec tests/kernels/run.sh "$@"
fi
SRC=$PWD
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
JOBS=${JOBS:-$(nproc)}

step() { printf '\n=== %s\n' "$*"; }

# The kernel build, first: the verifier's counts (record_programs) and the
# kernel matrix's budgets are read against it, and two builds of one
# version can differ by 40 % (issue 50)
step "kernel $(uname -r) ($(uname -v)), $(nproc) CPUs"
step "dependencies"
./tools/install-deps.sh
# the runtimes the tests record beside the machine's own, fetched once
# into /var/cache/bprof: nodejs.org's node 16, 18 and 22 (npm registry; the
# versions of tests/record/CMakeLists.txt) and Debian 11's OpenJDK 11
for v in 16.20.2 18.20.8 22.23.3; do
	tests/record/node-setup.sh "$v" /var/cache/bprof/node >/dev/null
done
tests/record/jdk11-setup.sh /var/cache/bprof/jdk11 >/dev/null

step "ASan+UBSan build, unit tests"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DBPROF_SANITIZE=ON -DBPROF_WERROR=ON >/dev/null
cmake --build build-asan -j"$JOBS"
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	ctest -L unit --output-on-failure -j"$JOBS")

step "libFuzzer targets (${FUZZ_SECONDS}s each)"
CC=clang CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Debug -DBPROF_FUZZ=ON -DBPROF_WERROR=ON >/dev/null
cmake --build build-fuzz -j"$JOBS"
bash tests/fuzz/run.sh build-fuzz "$FUZZ_SECONDS"

step "static recorder (-DBPROF_STATIC_RECORD=ON, what README suggests for production hosts)"
cmake -S . -B build-static -DBPROF_STATIC_RECORD=ON -DBPROF_WERROR=ON >/dev/null
cmake --build build-static -j"$JOBS" --target prof-record
(cd build-static && ctest -R record_static_binary --output-on-failure)

step "build and full test suite (unit + end-to-end)"
cmake -S . -B build -DBPROF_WERROR=ON >/dev/null
cmake --build build -j"$JOBS"
cd build
ctest --output-on-failure
