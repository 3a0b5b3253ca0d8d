#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# Load-and-match test of the stellar provider with the system libibverbs
# and ibverbs-utils, on a host with no RDMA device.
#
# A fake sysfs tree (SYSFS_PATH) describes one uverbs device; the
# fakedev-preload.so helper makes libibverbs use it (netlink disabled,
# /dev/infiniband redirected).  The provider is installed into a scratch
# DESTDIR and handed to libibverbs with RDMAV_DRIVERS=<absolute prefix>,
# to which libibverbs appends "-rdmav34.so".
#
# Checks:
#   1. "stellar0" with uverbs ABI 1 is listed by ibv_devices;
#   2. with uverbs ABI 2 libibverbs refuses it for the stellar provider;
#   3. a device named "foo0" is not claimed by the stellar provider;
#   4. opening stellar0 reaches stellar_alloc_context, which rejects the
#      (empty) GET_CONTEXT response of the fake device with an ABI error.
#
# usage: check-load.sh   (builds and installs the provider via make)

set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
CC=${CC:-cc}
PROVIDER_DIR=/usr/lib/x86_64-linux-gnu/libibverbs

for tool in ibv_devices ibv_devinfo; do
	if ! command -v "$tool" > /dev/null; then
		echo "check-load: $tool not found (install ibverbs-utils)" >&2
		exit 1
	fi
done

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

failures=0
fail() {
	echo "FAIL: $*" >&2
	failures=$((failures + 1))
}
pass() {
	echo "ok:   $*"
}

"$CC" -O2 -Wall -Wextra -Werror -fPIC -shared \
	-o "$T/fakedev-preload.so" "$HERE/fakedev-preload.c" -ldl
make -s -C "$HERE" install DESTDIR="$T/root" > /dev/null
DRIVER_PREFIX="$T/root$PROVIDER_DIR/libstellar"
[ -f "$DRIVER_PREFIX-rdmav34.so" ] || {
	echo "check-load: install did not produce $DRIVER_PREFIX-rdmav34.so" >&2
	exit 1
}
grep -qx 'driver stellar' "$T/root/etc/libibverbs.d/stellar.driver" ||
	fail "installed stellar.driver does not read 'driver stellar'"

# make_fake_device IBDEV UVERBS_ABI: (re)build the fake sysfs and /dev.
make_fake_device() {
	rm -rf "${T:?}/sys" "${T:?}/dev"
	mkdir -p "$T/sys/class/infiniband_verbs/uverbs0" \
		"$T/sys/class/infiniband/$1" "$T/dev"
	echo 6 > "$T/sys/class/infiniband_verbs/abi_version"
	echo "$1" > "$T/sys/class/infiniband_verbs/uverbs0/ibdev"
	echo "$2" > "$T/sys/class/infiniband_verbs/uverbs0/abi_version"
	# The fake cdev is /dev/null (1:3): opening it succeeds, commands
	# written to it "succeed" without producing a response.
	echo 1:3 > "$T/sys/class/infiniband_verbs/uverbs0/dev"
	echo "1: CA" > "$T/sys/class/infiniband/$1/node_type"
	echo 5374:656c:6c61:7230 > "$T/sys/class/infiniband/$1/node_guid"
	ln -s /dev/null "$T/dev/uverbs0"
}

# run_verbs TOOL ARGS...: run with the fake device and our provider;
# stdout+stderr go to $T/out.
run_verbs() {
	env LD_PRELOAD="$T/fakedev-preload.so" SYSFS_PATH="$T/sys" \
		STELLAR_FAKE_DEV_DIR="$T/dev" RDMAV_DRIVERS="$DRIVER_PREFIX" \
		IBV_SHOW_WARNINGS=1 "$@" > "$T/out" 2>&1 < /dev/null || true
}

show_output() {
	sed 's/^/      | /' "$T/out" >&2
}

# 1. matched and listed
make_fake_device stellar0 1
run_verbs ibv_devices
if grep -Eq '^[[:space:]]*stellar0[[:space:]]+5374656c6c617230$' "$T/out"; then
	pass "stellar0 (uverbs ABI 1) is claimed and listed by ibv_devices"
else
	fail "stellar0 not listed by ibv_devices"
	show_output
fi
if grep -q "couldn't load driver" "$T/out"; then
	fail "libibverbs could not load the provider"
	show_output
fi

# 2. ABI mismatch refused
make_fake_device stellar0 2
run_verbs ibv_devices
if grep -q 'Driver stellar does not support the kernel ABI of 2 (supports 1 to 1)' "$T/out" &&
   ! grep -Eq '^[[:space:]]*stellar0[[:space:]]' "$T/out"; then
	pass "uverbs ABI 2 is refused by the stellar provider"
else
	fail "uverbs ABI 2 was not refused as expected"
	show_output
fi

# 3. other names are not claimed
make_fake_device foo0 1
run_verbs ibv_devices
if grep -q 'no userspace device-specific driver found for foo0' "$T/out"; then
	pass "a device named foo0 is not claimed"
else
	fail "foo0 was unexpectedly claimed"
	show_output
fi

# 4. alloc_context runs and validates the driver response
make_fake_device stellar0 1
run_verbs env VERBS_LOG_LEVEL=1 VERBS_LOG_FILE="$T/verbs.log" \
	ibv_devinfo -d stellar0
if grep -q 'Failed to open device' "$T/out" &&
   grep -q 'stellar: stellar_check_ucontext_resp: kernel reports stellar ABI 0, provider speaks 1' \
	"$T/verbs.log" 2> /dev/null; then
	pass "stellar_alloc_context rejects a response without the stellar ABI"
else
	fail "opening stellar0 did not fail in stellar_alloc_context as expected"
	show_output
	[ -f "$T/verbs.log" ] && sed 's/^/      log| /' "$T/verbs.log" >&2
fi

if [ "$failures" -ne 0 ]; then
	echo "check-load: $failures check(s) failed" >&2
	exit 1
fi
echo "check-load: all checks passed"
