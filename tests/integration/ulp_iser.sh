#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# A kernel ULP over stellar: iSCSI Extensions for RDMA.  VM a exports a
# file-backed LUN with the LIO target (set up in configfs, the portal with
# iSER: ib_isert), VM b logs in with open-iscsi's iser transport (ib_iser:
# RDMA CM, fast registration, the target moving data with RDMA READ and
# WRITE) and runs fio with crc32c verification on the SCSI disk.  The
# session must say it uses iser, and a's stellar device must have
# received the written bytes.  Then b logs out and both sides tear down.
# stellar-test: vms=2 links=1 timeout=900

# shellcheck source=tests/vm/lib.sh
. "$(dirname "$(readlink -f "$0")")/../vm/lib.sh"

IQN=iqn.2026-12.org.virtio-stellar:iser-test
LUN_MB=96
IO_MB=32

TGT=/sys/kernel/config/target
BACKSTORE=$TGT/core/fileio_0/disk0
TPG=$TGT/iscsi/$IQN/tpgt_1

# target_up: the LIO target through configfs, as targetcli would set it
# up (targetcli itself needs a system D-Bus, which the guests do not run).
target_up() {
	local np

	modprobe -a target_core_mod target_core_file iscsi_target_mod ib_isert
	mountpoint -q /sys/kernel/config ||
		mount -t configfs none /sys/kernel/config
	truncate -s "${LUN_MB}M" /tmp/iser-lun.img
	mkdir -p "$BACKSTORE"
	echo "fd_dev_name=/tmp/iser-lun.img,fd_dev_size=$((LUN_MB << 20))" \
		>"$BACKSTORE/control"
	echo 1 >"$BACKSTORE/enable"
	mkdir -p "$TPG/lun/lun_0"
	ln -s "$BACKSTORE" "$TPG/lun/lun_0/disk0"
	np=$TPG/np/$(my_ip 1):3260
	mkdir "$np"
	echo 1 >"$np/iser" || fail "the portal does not take iSER"
	assert_eq "$(cat "$np/iser")" 1 "iSER on the portal"
	echo 0 >"$TPG/attrib/authentication"
	echo 1 >"$TPG/attrib/generate_node_acls"
	echo 0 >"$TPG/attrib/demo_mode_write_protect"
	echo 1 >"$TPG/attrib/cache_dynamic_acls"
	echo 1 >"$TPG/enable"
}

target_down() {
	local np

	np=$TPG/np/$(my_ip 1):3260

	echo 0 >"$TPG/enable"
	echo 0 >"$np/iser"
	rmdir "$np"
	rm "$TPG/lun/lun_0/disk0"
	rmdir "$TPG/lun/lun_0" "$TPG" "$TGT/iscsi/$IQN"
	rmdir "$BACKSTORE" "$TGT/core/fileio_0"
	rmdir "$TGT/iscsi"
	modprobe -r ib_isert || fail "ib_isert stays loaded"
	# target_core_mod loaded the other backends itself.
	modprobe -r iscsi_target_mod target_core_file target_core_iblock \
		target_core_pscsi target_core_user target_core_mod ||
		fail "LIO modules stay loaded: $(lsmod | grep -E '^(iscsi_target|target_core)')"
}

# iser_disk: the SCSI disk of the logged-in session.
iser_disk() {
	local disk

	for _ in $(seq 150); do
		disk=$(iscsiadm -m session -P 3 2>/dev/null |
			awk '/Attached scsi disk/ { print $4; exit }')
		if [ -n "$disk" ] && [ -b "/dev/$disk" ] &&
			[ "$(cat "/sys/block/$disk/size" 2>/dev/null || echo 0)" -gt 0 ]; then
			echo "/dev/$disk"
			return 0
		fi
		sleep 0.2
	done
	fail "no SCSI disk appeared: $(iscsiadm -m session -P 3 2>&1)"
}

stellar_pair_up

if [ "$STELLAR_ROLE" = a ]; then
	target_up
	rx0=$(stellar_stat stellar0 rx_bytes)
	log "iSER target on $(my_ip 1):3260"
fi
barrier target-up

if [ "$STELLAR_ROLE" = b ]; then
	modprobe -a ib_iser sd_mod
	mkdir -p /run/lock/iscsi
	iscsid || fail "iscsid did not start"
	portal="$(peer_ip 1):3260"
	iscsiadm -m node -o new -T "$IQN" -p "$portal" -I iser >/dev/null ||
		fail "iscsiadm: no node record"
	timeout "$(scaled 120)" iscsiadm -m node -T "$IQN" -p "$portal" \
		-I iser --login >"$STELLAR_OUT/login.log" 2>&1 ||
		fail "iSER login failed: $(cat "$STELLAR_OUT/login.log")"
	iscsiadm -m session -P 1 >"$STELLAR_OUT/session.txt" 2>&1
	grep -Eq "Iface Transport:[[:space:]]*iser" "$STELLAR_OUT/session.txt" ||
		fail "the session is not iser: $(cat "$STELLAR_OUT/session.txt")"
	dev=$(iser_disk)
	log "logged in over iSER: $dev"
	timeout "$(scaled 300)" fio --name=verify --filename="$dev" --direct=1 \
		--ioengine=libaio --iodepth=16 --bsrange=4k-64k --rw=randwrite \
		--size="${IO_MB}M" --verify=crc32c --verify_fatal=1 --do_verify=1 \
		--output="$STELLAR_OUT/fio.log" ||
		fail "fio write+verify failed: $(tail -20 "$STELLAR_OUT/fio.log")"
	grep -q "err= 0" "$STELLAR_OUT/fio.log" ||
		fail "fio reported errors: $(cat "$STELLAR_OUT/fio.log")"
	iscsiadm -m node -T "$IQN" -p "$portal" -I iser --logout >/dev/null ||
		fail "iSER logout failed"
	iscsiadm -m node -o delete -T "$IQN" -p "$portal" -I iser >/dev/null
	iscsiadm -k 0 || pkill -x iscsid || true
	modprobe -r ib_iser || fail "ib_iser stays loaded"
	log "fio verify over iSER: ok"
fi
barrier io-done

if [ "$STELLAR_ROLE" = a ]; then
	received=$(($(stellar_stat stellar0 rx_bytes) - rx0))
	log "stellar0 received $received bytes"
	# fio writes at least IO_MB MB of data blocks (and reads them back)
	[ "$received" -ge $((IO_MB << 20)) ] ||
		fail "stellar0 received $received bytes for $IO_MB MB of writes"
	target_down
fi
rdma link delete stellar0
stellar_unload
