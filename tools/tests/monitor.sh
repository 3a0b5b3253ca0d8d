#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# Tests of a built stellar-monitor on a fake sysfs tree
# (tests/fake-sysfs.sh, STELLAR_SYSFS_ROOT); no kernel module needed:
#   - the fake tree holds exactly the kernel's hw counters
#     (kernel/stellar_hw_stats.c, the uAPI's device counter names);
#   - usage errors, --once in both formats, promtool check metrics;
#   - the HTTP server: 200 for GET /metrics with the values, 404, 405,
#     431 for an oversized request, a client that sends nothing neither
#     blocks a scrape nor stays connected past the timeout, --interval
#     serves new values, SIGTERM stops it;
#   - every PromQL expression of grafana/stellar.json names only metrics
#     that the exporter emits (its own --once output).
#
# Usage: tests/monitor.sh [PATH-TO-stellar-monitor]

MON=$(readlink -f "${1:-./stellar-monitor}")
HERE=$(dirname "$(readlink -f "$0")")
TOOLS=$(dirname "$HERE")
REPO=$(dirname "$TOOLS")
PASS=0
FAIL=0
TMP=$(mktemp -d)
PID=
cleanup() {
	[ -z "$PID" ] || kill "$PID" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

fail() {
	echo "FAIL: $*"
	FAIL=$((FAIL + 1))
}
ok() {
	PASS=$((PASS + 1))
}
# check_not DESC CMD...: pass if CMD fails.
check_not() {
	local desc=$1
	shift
	if "$@"; then fail "$desc"; else ok; fi
}
# check DESC CMD...: pass if CMD succeeds.
check() {
	local desc=$1
	shift
	if "$@"; then ok; else fail "$desc"; fi
}

command -v promtool >/dev/null || { echo "FAIL: promtool missing (scripts/install-deps.sh)"; exit 1; }
command -v curl >/dev/null || { echo "FAIL: curl missing"; exit 1; }

"$HERE/fake-sysfs.sh" "$TMP/root" || exit 1
export STELLAR_SYSFS_ROOT=$TMP/root
HW=$TMP/root/sys/class/infiniband/stellar0/ports/1/hw_counters

# The fake tree has the kernel's counters, no more, no less.
{
	sed -n '/STELLAR_STAT_NAMES_INIT/,/^}/p' "$REPO/include/uapi/stellar-netlink.h" |
		grep -oE '"[a-z0-9_]+"'
	grep -E '^\s*HW_(SPRAY|OOO|PVDMA|EMTT)\(' "$REPO/kernel/stellar_hw_stats.c" |
		grep -oE '"[a-z0-9_]+"'
} | tr -d '"' | sort >"$TMP/kernel.names"
find "$HW" -type f ! -name lifespan -printf '%f\n' | sort >"$TMP/fake.names"
check "fake tree differs from the kernel's counters: $(diff "$TMP/kernel.names" "$TMP/fake.names" | tr '\n' ' ')" \
	cmp -s "$TMP/kernel.names" "$TMP/fake.names"
check "not the 72 kernel names: $(wc -l <"$TMP/kernel.names")" \
	[ "$(wc -l <"$TMP/kernel.names")" -eq 72 ]

# Usage errors exit 2.
for args in "--metrics foo" "--metrics throughput," "--export xml" \
	"--interval 0" "--interval x" "extra"; do
	# shellcheck disable=SC2086
	"$MON" $args >/dev/null 2>&1
	check "stellar-monitor $args: exit $?, expected 2" [ $? -eq 2 ]
done
"$MON" --help | grep -q -- "--metrics LIST"
check "--help" [ $? -eq 0 ]

# --once.
"$MON" --once --metrics all >"$TMP/all.prom" || fail "--once failed"
check "--once: tx_bytes" grep -qx 'stellar_tx_bytes_total{device="stellar0",port="1"} 123456789012' "$TMP/all.prom"
promtool check metrics <"$TMP/all.prom" >"$TMP/promtool.out" 2>&1
check "promtool check metrics: $(cat "$TMP/promtool.out")" [ $? -eq 0 ]
"$MON" --once --export json --metrics throughput >"$TMP/one.json" || fail "json --once"
check "json: tx_bytes of stellar0" [ "$(jq '.metrics[] | select(.name == "stellar_tx_bytes_total" and .labels.device == "stellar0") | .value' "$TMP/one.json")" = 123456789012 ]
"$MON" --once --device stellar1 >"$TMP/one.prom"
check_not "--device stellar1 shows stellar0" grep -q 'device="stellar0"' "$TMP/one.prom"
check "--device stellar1" grep -q 'stellar_tx_bytes_total{device="stellar1",port="1"} 7' "$TMP/one.prom"

# The dashboard names only metrics the exporter emits.
# A histogram's series are NAME_bucket, NAME_sum and NAME_count.
sed -n -e 's/^# TYPE \([^ ]*\) histogram$/\1_bucket\n\1_sum\n\1_count/p' \
	-e 's/^# TYPE \([^ ]*\) .*/\1/p' "$TMP/all.prom" | sort -u >"$TMP/emitted"
DASH=$TOOLS/grafana/stellar.json
jq -r '[.. | objects | (.expr?, .definition?, (.query? | if type == "object" then .query else empty end))
	| strings] | .[]' "$DASH" >"$TMP/exprs" || fail "dashboard is not JSON"
check "dashboard has few queries: $(wc -l <"$TMP/exprs")" [ "$(wc -l <"$TMP/exprs")" -ge 20 ]
while IFS= read -r expr; do
	names=$(grep -oE '\bstellar_[a-z0-9_]+' <<<"$expr" | sort -u)
	[ -n "$names" ] || fail "dashboard query names no stellar metric: $expr"
	for n in $names; do
		grep -qx "$n" "$TMP/emitted" || fail "dashboard query names $n, not emitted: $expr"
	done
done <"$TMP/exprs"
ok

# The HTTP server.
start() {
	local port
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		port=$((20000 + RANDOM % 20000))
		"$MON" --listen "127.0.0.1:$port" "$@" 2>"$TMP/mon.err" &
		PID=$!
		for _ in $(seq 50); do
			if curl -s -o /dev/null "http://127.0.0.1:$port/metrics"; then
				PORT=$port
				URL=http://127.0.0.1:$port
				return 0
			fi
			kill -0 "$PID" 2>/dev/null || break
			sleep 0.1
		done
		kill "$PID" 2>/dev/null
		wait "$PID" 2>/dev/null
		PID=
	done
	echo "FAIL: stellar-monitor does not serve: $(cat "$TMP/mon.err")"
	exit 1
}
stop() {
	kill -TERM "$PID"
	local t0=$SECONDS
	wait "$PID"
	local rc=$?
	check "SIGTERM: exit $rc after $((SECONDS - t0)) s" [ $rc -eq 0 ] && [ $((SECONDS - t0)) -le 2 ]
	PID=
}
code() {
	rm -f "$TMP/body" "$TMP/head"
	curl -s -o "$TMP/body" -D "$TMP/head" -w '%{http_code}' --max-time 3 "$@"
}

start --metrics all
check "GET /metrics" [ "$(code "$URL/metrics")" = 200 ]
check "body: tx_bytes" grep -qx 'stellar_tx_bytes_total{device="stellar0",port="1"} 123456789012' "$TMP/body"
check "content type" grep -qi '^Content-Type: text/plain; version=0.0.4' "$TMP/head"
promtool check metrics <"$TMP/body" >"$TMP/promtool.out" 2>&1
check "promtool on a scrape: $(cat "$TMP/promtool.out")" [ $? -eq 0 ]
check "GET / is 404" [ "$(code "$URL/")" = 404 ]
check "GET /metrics/x is 404" [ "$(code "$URL/metrics/x")" = 404 ]
check "POST is 405" [ "$(code -X POST -d x "$URL/metrics")" = 405 ]
big=$(head -c 5000 /dev/zero | tr '\0' a)
check "oversized request is 431" [ "$(code -H "X-Big: $big" "$URL/metrics")" = 431 ]

# A client that sends nothing: others are served, it is dropped.
exec 3<>"/dev/tcp/127.0.0.1/$PORT"
t0=$SECONDS
check "scrape beside an idle client" [ "$(code "$URL/metrics")" = 200 ]
check "scrape beside an idle client took $((SECONDS - t0)) s" [ $((SECONDS - t0)) -le 1 ]
t0=$SECONDS
timeout 10 cat <&3 >/dev/null
rc=$?
check "idle client: closed after $((SECONDS - t0)) s (rc $rc)" [ $rc -eq 0 ] && [ $((SECONDS - t0)) -le 7 ]
exec 3<&-

# Read at scrape time: a new value shows at once.
echo 555 >"$HW/rx_bytes"
code "$URL/metrics" >/dev/null
check "scrape-time read" grep -qx 'stellar_rx_bytes_total{device="stellar0",port="1"} 555' "$TMP/body"
stop

# --interval: served from the last read, renewed every interval.
start --interval 1
echo 777 >"$HW/rx_bytes"
seen=0
for _ in $(seq 30); do
	code "$URL/metrics" >/dev/null
	if grep -qx 'stellar_rx_bytes_total{device="stellar0",port="1"} 777' "$TMP/body"; then
		seen=1
		break
	fi
	sleep 0.1
done
check "--interval 1: new value served: $(grep rx_bytes_total "$TMP/body")" [ $seen = 1 ]
check_not "--interval: default groups have no latency" grep -q srtt "$TMP/body"
stop

echo "monitor.sh: $PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
