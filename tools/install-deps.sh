#!/usr/bin/env bash
# Install the Debian packages bprof needs.
#   install-deps.sh --demo   what building, recording and reporting need
#                            (the README's first command: tools/demo.sh)
#   install-deps.sh          that plus everything the tests and the
#                            benchmark use (tools/test.sh)
# Idempotent: packages already installed are skipped, and apt-get is not run
# at all when nothing is missing.  Needs root (or sudo).  Prints how long the
# installation took.
set -euo pipefail

DEMO_PKGS=(
	# build (the bundled workloads are built with the tests' CMake, which
	# needs Criterion to configure)
	cmake make gcc g++ pkg-config clang llvm bpftool
	libbpf-dev libelf-dev libdw-dev libzstd-dev zlib1g-dev libcriterion-dev
	# libsym talks to debuginfod (elfutils/debuginfod.h); libdw loads
	# libdebuginfod at run time for DEBUGINFOD_URLS
	libdebuginfod-dev libdebuginfod1
	# libsym demangles Rust v0 names with libiberty's demangler
	libiberty-dev
	# prof-report's pprof export (profile.proto)
	protobuf-c-compiler libprotobuf-c-dev
)

TEST_PKGS=(
	# the kernel matrix (tests/kernels) in tools/guest-vm's qemu guests: qemu,
	# debootstrap for the pristine root, e2fsprogs for its disk (mke2fs, debugfs),
	# Debian's keyring for the kernels it fetches with apt-get download (no
	# initrd: the cloud kernels boot from NVMe with ext4 built in)
	qemu-system-x86 e2fsprogs debootstrap debian-archive-keyring
	# tests: Criterion, elfutils (eu-addr2line, eu-readelf), binutils (objcopy, strip),
	# xz (MiniDebugInfo fixtures), libFuzzer runtime, flamegraph.pl, python3
	elfutils binutils xz-utils libclang-rt-14-dev
	# recording without root (tests/record/capabilities.sh): setcap
	libcap2-bin
	# dwz: the libsym fixtures include dwz-compressed debuginfo (.gnu_debugaltlink)
	dwz
	# the start frames of Debian programs are libc's local functions: named from
	# its debuginfo (tests/report/unwind_debian.sh)
	libc6-dbg
	libdevel-nytprof-perl python3 procps
	# Python frames (tests/record/python.sh, test_pyoff): Debian's python3.11
	# (stripped, libpython linked in) and its internal headers, whose
	# offsetof() the per-version offset tables are checked against
	python3.11 python3.11-dev
	# hardening: memory errors on real recordings (hardening_valgrind), injected
	# ENOSPC/EIO in the writer's system calls (hardening_disk_full)
	valgrind strace
	# benchmark: perf to compare with, zstd to compress perf.data fairly,
	# bpftrace as the minimal stack-counting BPF profiler (per-sample cost),
	# libbpf-tools' offcputime beside --off-cpu/--wall (part 13)
	linux-perf zstd time bpftrace libbpf-tools
	# exports (report/): protobuf-c for pprof's profile.proto; their consumers in
	# tests/export: go tool pprof, Chromium (flame graphs, speedscope app),
	# elfutils' debuginfod (+ iproute2/util-linux for a loopback-only netns),
	# node (npm itself: tests/export/npm-setup.sh, as nodesource's nodejs
	# provides it and conflicts with Debian's npm package)
	golang-go chromium debuginfod iproute2 util-linux nodejs ca-certificates
	# the JVM walk's tests compile and run their Java workloads
	# (tests/record/jvm.sh, jit.sh): Debian 12's OpenJDK 17 with javac
	openjdk-17-jdk-headless
	# man pages and completions (tests/export/install.sh)
	man-db groff-base bash-completion
)

if [ "${1:-}" = "--demo" ]; then
	PKGS=("${DEMO_PKGS[@]}")
else
	PKGS=("${DEMO_PKGS[@]}" "${TEST_PKGS[@]}")
fi

missing=()
for p in "${PKGS[@]}"; do
	[[ $p == \#* ]] && continue
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing+=("$p")
	fi
done

if [ ${#missing[@]} -eq 0 ]; then
	echo "install-deps: all ${#PKGS[@]} packages present"
	exit 0
fi

SUDO=
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null || { echo "install-deps: need root to install: ${missing[*]}" >&2; exit 1; }
	SUDO=sudo
fi
echo "install-deps: installing ${missing[*]}"
t0=$(date +%s)
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: installed ${#missing[@]} packages in $(($(date +%s) - t0)) s"
