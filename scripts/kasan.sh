#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# `make kasan`: build a debug kernel from Debian's linux-source-6.1 with
# KASAN, lockdep (PROVE_LOCKING), DEBUG_ATOMIC_SLEEP and KMEMLEAK, build
# virtio_stellar.ko against it, and run the VM integration tests on it.
# Debian's own kernel has none of these; this is the net that catches what
# SLUB debugging cannot (out-of-bounds reads, lock order, sleeping in
# atomic context, leaks).  Not part of `make check`: the kernel build
# takes 15 to 40 minutes on two cores, and the tests run two
# to three times slower on that kernel.
#
#   scripts/kasan.sh [TEST...]     build what is missing, run TESTs (all)
#   scripts/kasan.sh --build-only  build the kernel and module only
#
# The kernel tree and its build live in STELLAR_KASAN_DIR (default
# /var/cache/stellar-kasan) and are reused; the kernel is installed as
# /boot/vmlinuz-$KVER with its modules in /lib/modules/$KVER, where the
# VM harness finds them (STELLAR_KVER).
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd -P)
DIR=${STELLAR_KASAN_DIR:-/var/cache/stellar-kasan}
SRC=$DIR/linux-source-6.1
TARBALL=/usr/src/linux-source-6.1.tar.xz
JOBS=${JOBS:-$(nproc)}

# Options on top of x86_64_defconfig + kvm_guest.config: the debugging
# nets, and everything the integration tests load or use.
CONFIG_ON=(
	KASAN KASAN_GENERIC KASAN_INLINE
	PROVE_LOCKING DEBUG_ATOMIC_SLEEP DEBUG_KMEMLEAK
	DEBUG_KMEMLEAK_AUTO_SCAN SLUB_DEBUG DEBUG_FS
	MODULES MODULE_UNLOAD NET_NS USER_NS CGROUPS MEMCG
	IPV6 VETH BONDING BRIDGE NET_SCH_NETEM NET_SCH_TBF NET_SCH_FQ_CODEL
	NET_SCH_RED NET_SCH_PRIO NET_CLS_U32 NET_CLS_BASIC IP_ROUTE_MULTIPATH
	IPV6_MULTIPLE_TABLES IP_ADVANCED_ROUTER PACKET
	VIRTIO_PCI VIRTIO_NET NET_9P NET_9P_VIRTIO 9P_FS FSCACHE OVERLAY_FS
	BLK_DEV_LOOP BLK_DEV_NULL_BLK CONFIGFS_FS KPROBES KRETPROBES KALLSYMS
	SCSI BLK_DEV_SD NFS_FS NFS_V4 NFS_V4_1 NFS_V4_2 NFSD_V4
)
# Off: what a guest of the harness never uses; it halves the build.
CONFIG_OFF=(
	DRM SOUND USB_SUPPORT WLAN WIRELESS CFG80211 MAC80211 RFKILL AGP
	ATA MD INPUT_MOUSE INPUT_JOYSTICK INPUT_TABLET INPUT_TOUCHSCREEN
	HID PCCARD MACINTOSH_DRIVERS NETFILTER NETLABEL SECURITY_SELINUX
	AUDIT PM_SLEEP HIBERNATION SUSPEND EFI CPU_FREQ X86_MCE
	NET_VENDOR_INTEL NET_VENDOR_BROADCOM NET_VENDOR_REALTEK
	NET_VENDOR_AMD NET_VENDOR_NVIDIA NET_VENDOR_MARVELL NET_VENDOR_3COM
	NET_VENDOR_DEC NET_VENDOR_DLINK NET_VENDOR_RDC NET_VENDOR_SIS
	NET_VENDOR_TI NET_VENDOR_VIA NET_VENDOR_MICROSOFT
)
CONFIG_MOD=(
	INFINIBAND INFINIBAND_USER_ACCESS RDMA_RXE
	NVME_CORE NVME_FABRICS NVME_RDMA NVME_TARGET NVME_TARGET_RDMA
	NFSD SUNRPC_XPRT_RDMA SCSI_ISCSI_ATTRS ISCSI_TCP INFINIBAND_ISER
	TARGET_CORE TCM_FILEIO TCM_IBLOCK TCM_PSCSI UIO TCM_USER2
	ISCSI_TARGET INFINIBAND_ISERT
)

die() { echo "kasan: $*" >&2; exit 1; }

unpack() {
	[ -f "$SRC/Makefile" ] && return
	[ -f "$TARBALL" ] || die "$TARBALL missing (make deps-kasan)"
	mkdir -p "$DIR"
	tar -C "$DIR" -xf "$TARBALL"
}

configure() {
	local opt

	# A .config older than this script misses its latest options.
	[ "$SRC/.config" -nt "$0" ] && return
	make -C "$SRC" -s x86_64_defconfig kvm_guest.config
	for opt in "${CONFIG_ON[@]}"; do
		"$SRC/scripts/config" --file "$SRC/.config" -e "$opt"
	done
	for opt in "${CONFIG_OFF[@]}"; do
		"$SRC/scripts/config" --file "$SRC/.config" -d "$opt"
	done
	for opt in "${CONFIG_MOD[@]}"; do
		"$SRC/scripts/config" --file "$SRC/.config" -m "$opt"
	done
	"$SRC/scripts/config" --file "$SRC/.config" \
		--set-str LOCALVERSION "-stellar-kasan" -d LOCALVERSION_AUTO \
		-d DEBUG_INFO -d DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT \
		-e DEBUG_INFO_NONE -d DEBUG_KMEMLEAK_DEFAULT_OFF \
		--set-val DEBUG_KMEMLEAK_MEM_POOL_SIZE 40000
	make -C "$SRC" -s olddefconfig
	for opt in KASAN PROVE_LOCKING DEBUG_ATOMIC_SLEEP DEBUG_KMEMLEAK \
		   INFINIBAND_USER_ACCESS RDMA_RXE NFSD SUNRPC_XPRT_RDMA \
		   INFINIBAND_ISER INFINIBAND_ISERT; do
		grep -Eq "^CONFIG_$opt=(y|m)" "$SRC/.config" ||
			die "CONFIG_$opt did not stick in $SRC/.config"
	done
}

build_kernel() {
	local kver

	make -C "$SRC" -s -j"$JOBS" bzImage modules
	kver=$(make -C "$SRC" -s kernelrelease)
	make -C "$SRC" -s modules_install INSTALL_MOD_PATH=/
	cp "$SRC/arch/x86/boot/bzImage" "/boot/vmlinuz-$kver"
	echo "$kver"
}

# The module is built in a copy of the repository's sources so that the
# tree's own kernel/ keeps its build for Debian's kernel.
build_module() {
	local out=$DIR/module

	rm -rf "$out"
	mkdir -p "$out/tests"
	cp -r "$REPO/kernel" "$REPO/include" "$out/"
	cp -r "$REPO/tests/kmod" "$out/tests/"
	make -C "$out/kernel" -s KDIR="$SRC" >&2
	make -C "$out/tests/kmod" -s KDIR="$SRC" >&2
	echo "$out/kernel/virtio_stellar.ko"
}

main() {
	local kver ko

	[ "$(id -u)" -eq 0 ] || die "run as root (installs into /boot and /lib/modules)"
	unpack
	configure
	kver=$(build_kernel)
	ko=$(build_module)
	echo "kasan: kernel $kver, module $ko"
	[ "${1:-}" = --build-only ] && return
	make -C "$REPO" -s all testprogs
	# Tests run two to three times slower on this kernel.
	STELLAR_KVER=$kver STELLAR_KO=$ko \
		STELLAR_TIMEOUT_SCALE=${STELLAR_TIMEOUT_SCALE:-3} \
		"$REPO/tests/vm/run-tests.sh" "$@"
}

main "$@"
