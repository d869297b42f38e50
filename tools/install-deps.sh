#!/usr/bin/env bash
# Install every Debian package bprof needs to build, test and benchmark.
# Idempotent: packages already installed are skipped, and apt-get is not run
# at all when nothing is missing.  Needs root (or sudo).
set -euo pipefail

PKGS=(
	# build
	cmake make gcc g++ pkg-config clang llvm bpftool
	libbpf-dev libelf-dev libdw-dev libzstd-dev zlib1g-dev
	# libsym talks to debuginfod (elfutils/debuginfod.h); libdw loads
	# libdebuginfod at run time for DEBUGINFOD_URLS
	libdebuginfod-dev libdebuginfod1
	# tests: Criterion, elfutils (eu-addr2line, eu-readelf), binutils (objcopy, strip),
	# xz (MiniDebugInfo fixtures), libFuzzer runtime, flamegraph.pl, python3
	libcriterion-dev elfutils binutils xz-utils libclang-rt-14-dev
	libdevel-nytprof-perl python3 procps
	# benchmark: perf to compare with, zstd to compress perf.data fairly
	linux-perf zstd time
	# exports (report/): protobuf-c for pprof's profile.proto; their consumers in
	# tests/export: go tool pprof, Chromium (flame graphs, speedscope app),
	# elfutils' debuginfod (+ iproute2/util-linux for a loopback-only netns),
	# node (npm itself: tests/export/npm-setup.sh, as nodesource's nodejs
	# provides it and conflicts with Debian's npm package)
	protobuf-c-compiler libprotobuf-c-dev
	golang-go chromium debuginfod iproute2 util-linux nodejs ca-certificates
	# man pages and completions (tests/export/install.sh)
	man-db groff-base bash-completion
)

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
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
