#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# A kernel ULP over stellar: NVMe over Fabrics.  VM a exports a file-backed
# namespace with nvmet-rdma, VM b connects with nvme-rdma (RDMA CM over the
# GSI QP, fast registration, send with invalidate, kernel CQs) and runs fio
# with crc32c verification, then both sides tear down and unload.
# stellar-test: vms=2 links=1 timeout=900

# shellcheck source=tests/vm/lib.sh
. "$(dirname "$(readlink -f "$0")")/../vm/lib.sh"

NQN=stellar-test-nqn
CFG=/sys/kernel/config/nvmet

target_up() {
	modprobe -a nvmet nvmet-rdma
	mountpoint -q /sys/kernel/config ||
		mount -t configfs none /sys/kernel/config
	# A loop device: a file-backed namespace on the guest's overlay root
	# would report a zero block size.
	truncate -s 128M /tmp/nvme-ns.img
	modprobe loop
	LOOPDEV=$(losetup -f --show /tmp/nvme-ns.img)
	mkdir "$CFG/subsystems/$NQN"
	echo 1 >"$CFG/subsystems/$NQN/attr_allow_any_host"
	mkdir "$CFG/subsystems/$NQN/namespaces/1"
	echo -n "$LOOPDEV" >"$CFG/subsystems/$NQN/namespaces/1/device_path"
	echo 1 >"$CFG/subsystems/$NQN/namespaces/1/enable"
	mkdir "$CFG/ports/1"
	echo "$(my_ip 1)" >"$CFG/ports/1/addr_traddr"
	echo rdma >"$CFG/ports/1/addr_trtype"
	echo 4420 >"$CFG/ports/1/addr_trsvcid"
	echo ipv4 >"$CFG/ports/1/addr_adrfam"
	ln -s "$CFG/subsystems/$NQN" "$CFG/ports/1/subsystems/$NQN"
}

target_down() {
	rm "$CFG/ports/1/subsystems/$NQN"
	rmdir "$CFG/ports/1"
	echo 0 >"$CFG/subsystems/$NQN/namespaces/1/enable"
	rmdir "$CFG/subsystems/$NQN/namespaces/1"
	rmdir "$CFG/subsystems/$NQN"
	modprobe -r nvmet-rdma nvmet
	losetup -d "$LOOPDEV"
}

# nvme_dev: the block device of the connected namespace.
nvme_dev() {
	local dev

	for _ in $(seq 100); do
		for dev in /sys/class/nvme/nvme*; do
			[ "$(cat "$dev/subsysnqn" 2>/dev/null)" = "$NQN" ] || continue
			[ "$(cat "$dev/transport")" = rdma ] || continue
			for ns in "$dev"/nvme*n1 /dev/"${dev##*/}"n1; do
				ns=${ns##*/}
				# the namespace is scanned asynchronously: wait for its size
				[ -b "/dev/$ns" ] &&
					[ "$(cat "/sys/block/$ns/size" 2>/dev/null || echo 0)" -gt 0 ] &&
					{ echo "/dev/$ns"; return 0; }
			done
		done
		sleep 0.2
	done
	fail "no nvme-rdma namespace with a size appeared"
}

stellar_pair_up

if [ "$STELLAR_ROLE" = a ]; then
	target_up
	log "nvmet-rdma target listening on $(my_ip 1):4420"
fi
barrier target-up

if [ "$STELLAR_ROLE" = b ]; then
	modprobe nvme-rdma
	nvme connect -t rdma -n "$NQN" -a "$(peer_ip 1)" -s 4420 \
		--ctrl-loss-tmo=20 --reconnect-delay=2 ||
		fail "nvme connect over stellar failed"
	dev=$(nvme_dev)
	log "connected: $dev"
	timeout 300 fio --name=verify --filename="$dev" --direct=1 \
		--ioengine=libaio \
		--iodepth=16 --bsrange=4k-64k --rw=randwrite --size=32M \
		--verify=crc32c --verify_fatal=1 --do_verify=1 \
		--output="$STELLAR_OUT/fio-write.log" ||
		fail "fio write+verify failed: $(tail -20 "$STELLAR_OUT/fio-write.log")"
	grep -q "err= 0" "$STELLAR_OUT/fio-write.log" ||
		fail "fio reported errors: $(cat "$STELLAR_OUT/fio-write.log")"
	nvme disconnect -n "$NQN" || fail "nvme disconnect failed"
	modprobe -r nvme-rdma
	log "fio verify over nvme-rdma: ok"
fi
barrier io-done

[ "$STELLAR_ROLE" = a ] && target_down
rdma link delete stellar0
stellar_unload
