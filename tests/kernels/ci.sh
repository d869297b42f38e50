#!/usr/bin/env bash
# ctest's kernel_debian12: the core of the kernel matrix on Debian 12's own
# kernel (6.1) in a qemu guest (tools/guest-vm), on every run of the suite:
# complete stacks without frame pointers, --wall, mapping churn, Python
# frames, --rotate, and a recording without root.  The whole matrix (5.10
# too): tools/test.sh --kernels, or tests/kernels/run.sh.  Needs root, the
# static recorder (build-static/, tools/test.sh builds it first) and qemu
# (tools/install-deps.sh); with CI=true a missing one fails.
source "$BPROF_SRC/tests/e2e/lib.sh"
[ "$(id -u)" -eq 0 ] || skip "needs root (tools/guest-vm)"
STATIC=${BPROF_STATIC_BUILD:-$BPROF_SRC/build-static}
[ -x "$STATIC/prof-record" ] || skip "no static recorder in $STATIC (tools/test.sh builds it)"
command -v qemu-system-x86_64 >/dev/null || skip "no qemu-system-x86_64 (tools/install-deps.sh installs it)"
if bash "$BPROF_SRC/tests/kernels/run.sh" -b "$BPROF_BUILD" -s "$STATIC" \
	6.1:load,plain,wall,dlswap,python,pylazy,rotate,nobody; then
	ok "the kernel matrix's core on Debian 12's 6.1"
else
	fail "the kernel matrix's core on Debian 12's 6.1"
fi
finish
