#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Install the Debian 12 packages virtio-stellar needs to build and test.
# Only missing packages are installed; nothing happens when all are there.
set -euo pipefail

PACKAGES=(
	build-essential pkg-config kmod cpio busybox-static xz-utils zstd
	linux-image-amd64 linux-headers-amd64
	qemu-system-x86 qemu-utils
	iproute2 iputils-ping procps
	rdma-core ibverbs-utils ibverbs-providers rdmacm-utils perftest
	libibverbs-dev librdmacm-dev
	libnl-3-dev libnl-genl-3-dev libnl-route-3-dev
	libcmocka-dev sparse
	nvme-cli fio python3 iperf3 nfs-kernel-server open-iscsi
	qperf ucx-utils openmpi-bin libopenmpi-dev
	prometheus curl jq
	debhelper dh-dkms dkms lintian
)

# `make kasan` builds a debug kernel from Debian's kernel source.
if [ "${1:-}" = --kasan ]; then
	PACKAGES+=(linux-source-6.1 bc bison flex libssl-dev libelf-dev)
fi

missing=()
for pkg in "${PACKAGES[@]}"; do
	dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null |
		grep -q "install ok installed" || missing+=("$pkg")
done

if [ ${#missing[@]} -eq 0 ]; then
	exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing packages: ${missing[*]}" >&2
	echo "install-deps: run as root (or: sudo $0)" >&2
	exit 1
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
