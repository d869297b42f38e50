#!/usr/bin/env bash
# Symbolization through a real debuginfod (elfutils), on loopback only: the
# test re-runs itself inside a new network namespace (unshare -n) where only
# lo exists, starts `debuginfod -F` over a directory holding the stripped
# workload's debug file, and checks that prof-report names stripped_work of
# a recording whose binary was deleted.  Then a server that hangs (accepts,
# never answers) and a server that is down: a clear warning, and the report
# still completes within a bound set by DEBUGINFOD_TIMEOUT.
source "$BPROF_SRC/tests/e2e/lib.sh"
source "$BPROF_SRC/tests/export/lib-export.sh"
require_bpf
need_cmd debuginfod debuginfod
need_cmd unshare util-linux
need_cmd ip iproute2

if [ -z "${BPROF_IN_NETNS:-}" ]; then
	unshare -n true 2>/dev/null || skip "cannot create a network namespace (unshare -n)"
	rm -rf "$T_DIR"
	BPROF_IN_NETNS=1 exec unshare -n bash "$0" "$@"
fi
ip link set lo up
check "in a network namespace with loopback only" sh -c "! ip -o link | grep -v ': lo:'"

PORT=8002
SLOW_PORT=8003
srv=$T_DIR/srv
mkdir -p "$srv"
cp "$BPROF_WORKLOADS"/debug/.build-id/*/*.debug "$srv/stripped.debug"
bid=$(eu-readelf -n "$BPROF_WORKLOADS/stripped" | awk '/Build ID:/ { print $3 }')

debuginfod -p "$PORT" -d "$T_DIR/debuginfod.sqlite" -F "$srv" > "$T_DIR/debuginfod.log" 2>&1 &
DPID=$!
SPID=
cleanup() {
	local rc=$?
	set +e
	[ -n "$DPID" ] && kill "$DPID" 2>/dev/null && wait "$DPID" 2>/dev/null
	[ -n "$SPID" ] && kill "$SPID" 2>/dev/null && wait "$SPID" 2>/dev/null
	rm -rf "$T_DIR"
	exit "$rc"
}
trap cleanup EXIT

# wait until the scan has indexed the debug file
# (a fresh cache per probe: the client caches a miss for 10 minutes)
ready=false
for i in $(seq 1 300); do
	if DEBUGINFOD_URLS=http://127.0.0.1:$PORT DEBUGINFOD_CACHE_PATH=$T_DIR/probe-cache.$i \
		debuginfod-find debuginfo "$bid" > /dev/null 2>&1; then
		ready=true
		break
	fi
	sleep 0.2
done
check "debuginfod serves the build-id $bid" $ready

cp "$BPROF_WORKLOADS/stripped" "$T_DIR/stripped"
"$BPROF_RECORD" -q -F 499 -o "$T_DIR/s.bprof" -- "$T_DIR/stripped" 2
rm "$T_DIR/stripped"

# control: no debuginfo anywhere without debuginfod
env -u DEBUGINFOD_URLS "$BPROF_REPORT" -q -f "$T_DIR/s.bprof" > "$T_DIR/bare"
check "without debuginfod: stripped_work not named" sh -c "! grep -q stripped_work '$T_DIR/bare'"
env -u DEBUGINFOD_URLS "$BPROF_REPORT" -q --missing-buildids "$T_DIR/s.bprof" > "$T_DIR/missing"
cat "$T_DIR/missing"
check "--missing-buildids lists the stripped binary: \"$bid $T_DIR/stripped\"" \
	grep -qx "$bid $T_DIR/stripped" "$T_DIR/missing"

export DEBUGINFOD_URLS=http://127.0.0.1:$PORT DEBUGINFOD_CACHE_PATH=$T_DIR/cache DEBUGINFOD_TIMEOUT=5
"$BPROF_REPORT" -q -f "$T_DIR/s.bprof" > "$T_DIR/named"
check "debuginfod: stripped_work named after the binary is gone" \
	grep -qE '^stripped;.*;stripped_work[; ]' "$T_DIR/named"
check "the debug file landed in DEBUGINFOD_CACHE_PATH" test -s "$T_DIR/cache/$bid/debuginfo"
"$BPROF_REPORT" -q --missing-buildids "$T_DIR/s.bprof" > "$T_DIR/missing2"
check "--missing-buildids no longer lists it" sh -c "! grep -q '^$bid ' '$T_DIR/missing2'"
"$BPROF_REPORT" -q -f --no-debuginfod "$T_DIR/s.bprof" > "$T_DIR/nod"
check "--no-debuginfod: not asked (fresh cache)" env DEBUGINFOD_CACHE_PATH="$T_DIR/cache2" \
	sh -c "'$BPROF_REPORT' -q -f --no-debuginfod '$T_DIR/s.bprof' | grep -vq stripped_work && ! test -e '$T_DIR/cache2/$bid'"

# a server that hangs: accepts, never answers
python3 "$BPROF_SRC/tests/export/slow-server.py" "$SLOW_PORT" > "$T_DIR/slow.log" 2>&1 &
SPID=$!
for _ in $(seq 1 50); do grep -q ready "$T_DIR/slow.log" && break; sleep 0.1; done
# the report's own time, without debuginfod: the bounds below add it (a
# busy host makes it seconds, which are not the lookups')
start=$(date +%s)
"$BPROF_REPORT" -q -f --no-debuginfod "$T_DIR/s.bprof" > /dev/null
base=$(( $(date +%s) - start ))
echo "the report alone: ${base}s"
# Each lookup waits DEBUGINFOD_TIMEOUT, (DEBUGINFOD_RETRY_LIMIT + 1) times;
# libsym asks once per object lacking DWARF (debuginfo, then executable).
slow_run() { # RETRIES -> sets rc, took, lookups
	local start
	start=$(date +%s)
	set +e
	DEBUGINFOD_URLS=http://127.0.0.1:$SLOW_PORT DEBUGINFOD_CACHE_PATH=$T_DIR/cache3.$1 \
		DEBUGINFOD_TIMEOUT=2 DEBUGINFOD_RETRY_LIMIT=$1 \
		timeout 200 "$BPROF_REPORT" -f "$T_DIR/s.bprof" > "$T_DIR/slow.out" 2> "$T_DIR/slow.err"
	rc=$?
	set -e
	took=$(( $(date +%s) - start ))
	lookups=$(grep -c 'warning: debuginfod' "$T_DIR/slow.err" || true)
	cat "$T_DIR/slow.err"
	echo "hanging server, DEBUGINFOD_RETRY_LIMIT=$1: exit $rc after ${took}s, $lookups lookups"
}
slow_run 0
check "hanging server: the report completes (exit 0)" test "$rc" -eq 0
check "hanging server: a clear warning naming debuginfod and the timeout" \
	grep -qiE 'warning: debuginfod.*(Timer expired|timed out)' "$T_DIR/slow.err"
check "hanging server: the report is still written" grep -q '^stripped;' "$T_DIR/slow.out"
# (about 2.4 s per lookup is measured: connection set-up on top of the timeout)
check "hanging server: DEBUGINFOD_TIMEOUT=2 respected: ${took}s <= $lookups lookups x 3s + 5s + ${base}s" \
	test "$lookups" -ge 1 -a "$took" -le $((lookups * 3 + 5 + base))
slow_run 1
check "hanging server, one retry: ${took}s <= $lookups lookups x 2 x 3s + 5s + ${base}s" \
	test "$rc" -eq 0 -a "$took" -le $((lookups * 6 + 5 + base))

# a server that is down: nothing listens on the port
kill "$DPID"; wait "$DPID" 2>/dev/null || true; DPID=
start=$(date +%s)
set +e
DEBUGINFOD_URLS=http://127.0.0.1:$PORT DEBUGINFOD_CACHE_PATH=$T_DIR/cache4 DEBUGINFOD_TIMEOUT=2 \
	timeout 120 "$BPROF_REPORT" -f "$T_DIR/s.bprof" > "$T_DIR/down.out" 2> "$T_DIR/down.err"
rc=$?
set -e
took=$(( $(date +%s) - start ))
cat "$T_DIR/down.err"
echo "server down: exit $rc after ${took}s"
check "server down: completes quickly (exit $rc, ${took}s < 10s + ${base}s)" test "$rc" -eq 0 -a "$took" -lt $((10 + base))
check "server down: a clear warning naming debuginfod" grep -qi 'warning: debuginfod' "$T_DIR/down.err"
finish
