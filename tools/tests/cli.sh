#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# Command line tests of a built stellar-tool: help, usage errors and exit
# statuses, and the "module not loaded" report.  Needs no kernel module;
# the one case that depends on whether the module is loaded says which
# branch it ran.
#
# Usage: tests/cli.sh [PATH-TO-stellar-tool]

TOOL=${1:-./stellar-tool}
PASS=0
FAIL=0
OUT=$(mktemp)
ERR=$(mktemp)
trap 'rm -f "$OUT" "$ERR"' EXIT

fail() {
	echo "FAIL: $*"
	echo "  stdout: $(head -c 600 "$OUT")"
	echo "  stderr: $(head -c 600 "$ERR")"
	FAIL=$((FAIL + 1))
}

# expect STATUS STREAM PATTERN -- ARGS...: run the tool, check its exit
# status and that STREAM (stdout|stderr) matches the extended regex.
expect() {
	local status=$1 stream=$2 pattern=$3 file got
	shift 4
	"$TOOL" "$@" >"$OUT" 2>"$ERR"
	got=$?
	[ "$stream" = stdout ] && file=$OUT || file=$ERR
	if [ "$got" -ne "$status" ]; then
		fail "stellar-tool $*: exit $got, expected $status"
	elif ! grep -Eq -- "$pattern" "$file"; then
		fail "stellar-tool $*: $stream lacks /$pattern/"
	else
		PASS=$((PASS + 1))
	fi
}

# Usage errors say nothing on stdout.
expect_usage() {
	local pattern=$1
	shift 2
	expect 2 stderr "$pattern" -- "$@"
	if [ -s "$OUT" ]; then
		fail "stellar-tool $*: usage error wrote to stdout"
	fi
}

[ -x "$TOOL" ] || { echo "no executable $TOOL" >&2; exit 1; }

expect 0 stdout '^Usage: stellar-tool \[-h\|--help\]' -- --help
expect 0 stdout '^  set --device NAME SETTING\.\.\.' -- -h
expect 0 stdout '^  --db-poll-interval USEC' -- --help
expect 0 stdout '^stellar-tool [0-9]+\.[0-9]+\.[0-9]+ ' -- --version
expect 0 stdout '^stellar-tool .*version 1\)$' -- -V
for cmd in status params set stats qps pvdma emtt; do
	expect 0 stdout "^  stellar-tool \[-j\] $cmd" -- "$cmd" --help
done
expect 0 stdout '^  --spray-paths N ' -- set --help
expect 0 stdout '^  -d, --device NAME' -- stats -h
expect 0 stdout '^  pvdma \[--device NAME\] +Show on-demand pinning' -- --help
expect 0 stdout '^  emtt \[--device NAME\] +Show translation cache' -- --help
expect_usage "^stellar-tool: pvdma: unexpected argument 'x'$" -- pvdma x

expect_usage '^stellar-tool: no command given$' --
expect_usage '^Try .stellar-tool --help.' --
expect_usage "^stellar-tool: unknown command 'frob'$" -- frob
expect_usage "^stellar-tool: unknown option '-x'$" -- -x status
expect_usage "^stellar-tool: unrecognized option '--nope'$" -- --nope
expect_usage "^stellar-tool: status: unexpected argument 'stellar0'$" -- \
	status stellar0
expect_usage "^stellar-tool: status: option '--device' needs a value$" -- \
	status --device
expect_usage "^stellar-tool: stats: --device NAME is required$" -- stats
expect_usage '^  stellar-tool \[-j\] stats --device NAME$' -- stats
expect_usage "^stellar-tool: qps: --device NAME is required$" -- qps --qp 3
expect_usage "^stellar-tool: set: --device NAME is required$" -- \
	set --spray-paths 2
expect_usage "^stellar-tool: set: nothing to change" -- set --device s0
expect_usage "^stellar-tool: set: --spray-paths: 'two' is not a whole number" -- \
	set --device s0 --spray-paths two
expect_usage "'4294967296' is not a whole number" -- \
	set --device s0 --rx-buf-size 4294967296
expect_usage "^stellar-tool: params: unrecognized option '--device'$" -- \
	params --device s0
expect_usage "^stellar-tool: status: unrecognized option '--spray-paths'$" -- \
	status --spray-paths 1
expect_usage "is longer than 63 characters" -- \
	stats --device "$(printf 'x%.0s' $(seq 64))"

# Packet spray: paths, ooo-monitor, set-qp.
for cmd in paths ooo-monitor set-qp; do
	expect 0 stdout "^  stellar-tool \[-j\] $cmd" -- "$cmd" --help
done
expect 0 stdout '^  --interval MS ' -- ooo-monitor --help
expect 0 stdout '^  --qp N ' -- set-qp --help
expect_usage "^stellar-tool: paths: unexpected argument 'stellar0'$" -- \
	paths stellar0
expect_usage "^stellar-tool: paths: unrecognized option '--interval'$" -- \
	paths --interval 10
expect_usage "^stellar-tool: ooo-monitor: --device NAME is required$" -- \
	ooo-monitor
expect_usage "^stellar-tool: ooo-monitor: --interval 9: give 10 to 3600000 milliseconds$" -- \
	ooo-monitor --device s0 --interval 9
expect_usage "^stellar-tool: ooo-monitor: --interval: 'fast' is not a whole number" -- \
	ooo-monitor --device s0 --interval fast
expect_usage "^stellar-tool: ooo-monitor: --count: '-1' is not a whole number" -- \
	ooo-monitor --device s0 --count -1
expect_usage "^stellar-tool: set-qp: --device NAME and --qp N are required$" -- \
	set-qp --device s0 --spray-paths 4
expect_usage "^stellar-tool: set-qp: give --spray-paths N, the one per-QP setting$" -- \
	set-qp --device s0 --qp 17
expect_usage "^stellar-tool: set-qp: give --spray-paths N, the one per-QP setting$" -- \
	set-qp --device s0 --qp 17 --spray-paths 4 --rx-buf-size 8192
expect_usage "^stellar-tool: set-qp: --qp: 'x' is not a whole number" -- \
	set-qp --device s0 --qp x --spray-paths 4

# cdi: options; the device lookup itself is tests/test_cdi.c's.
expect 0 stdout '^  stellar-tool \[-j\] cdi \[--device NAME\] \[--output PATH\|-\]$' -- \
	cdi --help
expect 0 stdout '^  --output PATH ' -- cdi --help
expect 0 stdout '^  cdi \[--device NAME\] \[--output PATH\|-\] +Write a CDI spec' -- --help
expect_usage "^stellar-tool: cdi: empty --output$" -- cdi --output ''
expect_usage "^stellar-tool: cdi: unexpected argument 'stellar0'$" -- \
	cdi stellar0
expect 1 stderr "^stellar-tool: cdi: no device 'no-such-dev0' with a uverbs node$|is ib_uverbs loaded\?\)$" -- \
	cdi --device no-such-dev0 --output -

# Latency telemetry and top.
for cmd in latency top; do
	expect 0 stdout "^  stellar-tool \[-j\] $cmd" -- "$cmd" --help
done
expect 0 stdout '^  latency \[--device NAME \[--qp N\]\] +Show latency percentiles' -- --help
expect 0 stdout '^  -n COUNT ' -- top --help
expect 0 stdout '^  -d SECONDS ' -- top --help
expect_usage "^stellar-tool: latency: --qp needs --device$" -- latency --qp 3
expect_usage "^stellar-tool: latency: unexpected argument 'stellar0'$" -- \
	latency stellar0
expect_usage "^stellar-tool: top: -d: '0.05' is not a number of seconds" -- \
	top -d 0.05
expect_usage "^stellar-tool: top: -d: '1.2345' is not a number of seconds" -- \
	top -d 1.2345
expect_usage "^stellar-tool: top: -d: 'x' is not a number of seconds" -- \
	top -d x
expect_usage "^stellar-tool: top: -n must be at least 1$" -- top -n 0
expect_usage "^stellar-tool: top: --count: 'many' is not a whole number" -- \
	top -n many
expect_usage "^stellar-tool: top: no JSON output" -- top -j -n 1
expect_usage "^stellar-tool: top: unexpected argument 'stellar0'$" -- \
	top stellar0

NOT_LOADED="^stellar-tool: the virtio_stellar kernel module is not loaded \(generic netlink family 'stellar' not found\)$"
if [ -d /sys/module/virtio_stellar ]; then
	echo "NOTE: virtio_stellar is loaded: checked the unknown-device report instead of the not-loaded one"
	expect 1 stderr "^stellar-tool: no such stellar device 'no-such-dev0'$" -- \
		status --device no-such-dev0
	expect 1 stderr "^stellar-tool: no such stellar device 'no-such-dev0'$" -- \
		stats --device no-such-dev0
	expect 1 stderr "^stellar-tool: no such stellar device 'no-such-dev0'$" -- \
		paths --device no-such-dev0
	expect 1 stderr "^stellar-tool: no such stellar device 'no-such-dev0'$" -- \
		qps --device no-such-dev0
	expect 1 stderr "^stellar-tool: no such stellar device 'no-such-dev0'$" -- \
		ooo-monitor --device no-such-dev0 --count 1
	expect 1 stderr "^stellar-tool: no such stellar device 'no-such-dev0'$" -- \
		latency --device no-such-dev0
else
	for args in "status" "-j status" "status --device s0" "params" \
		    "stats --device s0" "set --device s0 --spray-paths 2" \
		    "qps --device s0" "qps --device s0 --qp 3" \
		    "paths" "ooo-monitor --device s0 --count 1" \
		    "set-qp --device s0 --qp 17 --spray-paths 2" \
		    "latency" "latency --device s0 --qp 3" "top -n 1" \
		    "top -n 2 -d 0.1 --device s0"; do
		# shellcheck disable=SC2086
		expect 1 stderr "$NOT_LOADED" -- $args
	done
fi

echo "cli.sh: $PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
