#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# A kernel ULP over stellar: NFS over RDMA (RPC-over-RDMA, RFC 8166).  VM a
# runs the kernel NFS server (NFSv4 only, no rpcbind) with an RDMA
# listener on port 20049 and exports a tmpfs as the NFSv4 root (fsid=0:
# the guest's root is an overlay, which cannot be a pseudo-root parent);
# VM b mounts it (vers=4.2) with
# proto=rdma (xprtrdma: RDMA CM over the GSI QP, fast registration, READ
# and WRITE chunks the server moves with RDMA READ and WRITE, send with
# invalidate).  b writes a 48 MB file of random bytes with O_DIRECT, both
# hash it (a from its tmpfs), b reads it back past its page cache and hashes
# again; b's mount statistics must name the rdma transport, and a's stellar
# device must have received at least the file's bytes.  Both sides then
# tear down: unmount, stop nfsd, unload rpcrdma, delete the device.
# stellar-test: vms=2 links=1 timeout=900

# shellcheck source=tests/vm/lib.sh
. "$(dirname "$(readlink -f "$0")")/../vm/lib.sh"

EXPORT=/srv/stellar-nfs
MNT=/mnt/stellar-nfs
FILE_MB=48
NFS_RDMA_PORT=20049

server_up() {
	modprobe -a nfsd rpcrdma
	mountpoint -q /proc/fs/nfsd || mount -t nfsd nfsd /proc/fs/nfsd
	mkdir -p "$EXPORT" /var/lib/nfs/v4recovery
	mount -t tmpfs -o size=128m tmpfs "$EXPORT"
	echo "$EXPORT $(peer_ip 1)(rw,sync,no_subtree_check,no_root_squash,insecure,fsid=0)" \
		>/etc/exports
	# A short grace period: a fresh server refuses OPENs during it.
	echo 10 >/proc/fs/nfsd/nfsv4leasetime
	echo 10 >/proc/fs/nfsd/nfsv4gracetime
	exportfs -ra || fail "exportfs failed"
	# NFSv4 only: mountd answers the kernel's export upcalls, neither
	# needs rpcbind.
	rpc.mountd -N 2 -N 3 || fail "rpc.mountd failed"
	rpc.nfsd -N 3 4 || fail "rpc.nfsd failed"
	echo "rdma $NFS_RDMA_PORT" >/proc/fs/nfsd/portlist ||
		fail "nfsd has no RDMA listener: $(cat /proc/fs/nfsd/portlist)"
	log "nfsd ports: $(tr '\n' ' ' </proc/fs/nfsd/portlist)"
}

server_down() {
	rpc.nfsd 0 || fail "rpc.nfsd 0 failed"
	exportfs -ua
	pkill -x rpc.mountd || true
	umount "$EXPORT"
	modprobe -r rpcrdma || fail "rpcrdma stays loaded on the server"
}

stellar_pair_up

if [ "$STELLAR_ROLE" = a ]; then
	server_up
	rx0=$(stellar_stat stellar0 rx_bytes)
fi
barrier server-up

if [ "$STELLAR_ROLE" = b ]; then
	modprobe -a nfsv4 rpcrdma
	mkdir -p "$MNT"
	timeout "$(scaled 120)" mount -t nfs -o \
		"vers=4.2,proto=rdma,port=$NFS_RDMA_PORT,hard,timeo=600" \
		"$(peer_ip 1):/" "$MNT" ||
		fail "mount over NFS/RDMA failed: $(dmesg | tail -5)"
	grep " $MNT " /proc/mounts | tee "$STELLAR_OUT/mount.txt"
	assert_contains "$(cat "$STELLAR_OUT/mount.txt")" "proto=rdma" "mount options"
	grep -A3 "mounted on $MNT " /proc/self/mountstats >"$STELLAR_OUT/mountstats.txt"
	grep -q "xprt:[[:space:]]*rdma" /proc/self/mountstats ||
		fail "the mount's transport is not rdma: $(cat "$STELLAR_OUT/mountstats.txt")"

	head -c "$((FILE_MB << 20))" /dev/urandom >/tmp/nfs-src
	want=$(sha256sum </tmp/nfs-src | cut -d' ' -f1)
	timeout "$(scaled 300)" dd if=/tmp/nfs-src of="$MNT/data" bs=1M \
		oflag=direct status=none || fail "writing over NFS/RDMA failed"
	sync
	put_val nfs.hash "$want"
	log "wrote $FILE_MB MB over NFS/RDMA, sha256 $want"
fi

if [ "$STELLAR_ROLE" = a ]; then
	want=$(get_val nfs.hash)
	got=$(sha256sum <"$EXPORT/data" | cut -d' ' -f1)
	assert_eq "$got" "$want" "the server's copy"
	received=$(($(stellar_stat stellar0 rx_bytes) - rx0))
	log "stellar0 received $received bytes"
	[ "$received" -ge $((FILE_MB << 20)) ] ||
		fail "stellar0 received $received bytes for a $FILE_MB MB file"
fi
barrier written

if [ "$STELLAR_ROLE" = b ]; then
	echo 3 >/proc/sys/vm/drop_caches
	got=$(timeout "$(scaled 300)" dd if="$MNT/data" bs=1M iflag=direct \
		status=none | sha256sum | cut -d' ' -f1)
	assert_eq "$got" "$want" "the file read back over NFS/RDMA"
	rm "$MNT/data"
	umount "$MNT" || fail "umount failed"
	modprobe -r rpcrdma || fail "rpcrdma stays loaded on the client"
	log "NFS/RDMA write, read back and unmount: ok"
fi
barrier client-done

[ "$STELLAR_ROLE" = a ] && server_down
rdma link delete stellar0
stellar_unload
