# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# What the host side of the benchmarks (bench/run.sh, bench/spray.sh;
# fabric.sh and pvdma.sh for last_attempt) shares.  Sourced with
# BENCH_NAME (the prefix of messages), REPO and TSV (the guests' results)
# set by the caller, and BENCH_NEEDS_TOOL=1 if the benchmark reads
# stellar-tool.

# shellcheck shell=bash

die() {
	echo "$BENCH_NAME: $*" >&2
	exit 1
}

# check_host: root, the build (and stellar-tool with BENCH_NEEDS_TOOL=1),
# perftest, python3; iperf3 is installed if missing.
check_host() {
	[ "$(id -u)" = 0 ] || die "run as root (the VMs share the host's / over 9p)"
	[ -f "$REPO/kernel/virtio_stellar.ko" ] ||
		die "kernel/virtio_stellar.ko not built: run make"
	[ -f "$REPO/providers/stellar/libstellar-rdmav34.so" ] ||
		die "the provider is not built: run make"
	[ "${BENCH_NEEDS_TOOL:-0}" = 0 ] || [ -x "$REPO/tools/stellar-tool" ] ||
		die "stellar-tool not built: run make"
	command -v ib_write_bw >/dev/null || die "perftest is not installed"
	command -v python3 >/dev/null || die "python3 is not installed"
	if ! command -v iperf3 >/dev/null; then
		echo "$BENCH_NAME: installing iperf3"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			--no-install-recommends iperf3 >/dev/null ||
			die "cannot install iperf3"
	fi
}

# last_attempt RESULTS NAME: the log directory of the guest run NAME
# under RESULTS.  When a guest's NIC stalled, tests/vm/run-tests.sh runs
# it again in RESULTS/NAME.XXXX and keeps the first attempt's logs in
# RESULTS/NAME: the newest of them holds the figures.
last_attempt() {
	local dir newest=''

	for dir in "$1/$2" "$1/$2".*; do
		[ -d "$dir" ] || continue
		if [ -z "$newest" ] || [ "$dir" -nt "$newest" ]; then
			newest=$dir
		fi
	done
	echo "${newest:-$1/$2}"
}

# value CONFIG TEST: a figure from the guests' bench.tsv; when rounds
# recorded it more than once, the median of the numbers among them (the
# mean of the middle two for an even count), or the first entry when
# none is a number (failed, n/a).
value() {
	awk -F '\t' -v c="$1" -v t="$2" '
		$1 == c && $2 == t {
			if (!found++)
				first = $3
			if ($3 ~ /^[0-9]+([.][0-9]+)?$/) {
				text = $3
				v[n++] = $3 + 0
			}
		}
		END {
			if (!found)
				print "missing"
			else if (n == 0)
				print first
			else if (n == 1)
				print text
			else {
				for (i = 1; i < n; i++)
					for (j = i; j > 0 && v[j - 1] > v[j]; j--) {
						x = v[j]; v[j] = v[j - 1]; v[j - 1] = x
					}
				if (n % 2)
					m = v[(n - 1) / 2]
				else
					m = (v[n / 2 - 1] + v[n / 2]) / 2
				printf "%.2f\n", m
			}
		}' "$TSV"
}

is_number() {
	[[ "$1" =~ ^[0-9]+([.][0-9]+)?$ ]]
}
