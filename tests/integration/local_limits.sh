#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# A hostile local user: an unprivileged process (uid 4242, RLIMIT_MEMLOCK
# 64 KiB, /dev/infiniband/uverbs* mode 0666 as rdma-core's udev rule makes
# it) floods a device with PDs, CQs, QPs, MRs, AHs and SRQs, and attaches
# UD QPs to multicast groups (one QP to many groups, many QPs to one
# group, many attachments in all; the exit detaches them).  Each flood
# stops at exactly the limit ibv_query_device advertises (less what the
# kernel itself holds), with ENOMEM.  The ring memory of the user's CQs is
# charged to its memory cgroup: a flood of large CQs in a cgroup with
# memory.max = 64 MiB fails with ENOMEM near that bound instead of eating
# the host's memory.  RC QPs that never connected are charged no RC
# transport arrays.  One VM, large enough for max_qp QPs.
# Arguments name the parts to run (floods, charges; default both): on a
# debug kernel (scripts/kasan.sh) the floods take most of an hour, and
# tests/vm/run-tests.sh local_limits -- charges runs the rest alone.
# stellar-test: vms=1 timeout=1200 mem=3072

# shellcheck source=tests/vm/lib.sh
. "$(dirname "$(readlink -f "$0")")/../vm/lib.sh"

HELPERS=$STELLAR_REPO/tests/integration/helpers
USER_ID=4242
UNPRIV="setpriv --reuid=$USER_ID --regid=$USER_ID --clear-groups --inh-caps=-all --bounding-set=-all"
CG=/sys/fs/cgroup/stellar_flood
RINGS_CG=/sys/fs/cgroup/stellar_rings
QPS_CG=/sys/fs/cgroup/stellar_qps

stellar_load
veth_pair veth0 veth0p 10.50.0.1/24
rdma link add stellar0 type stellar netdev veth0
G=$(gid_index stellar0 10.50.0.1)

gcc -O2 -Wall -o /tmp/local_limits "$HELPERS/local_limits.c" -libverbs ||
	fail "cannot build helpers/local_limits.c"
chmod 0755 /tmp/local_limits
chmod 0666 /dev/infiniband/uverbs*
# A process maps one ring per CQ, two per QP: more than the default 65530.
sysctl -q vm.max_map_count=1000000

mountpoint -q /sys/fs/cgroup || mount -t cgroup2 cgroup2 /sys/fs/cgroup
echo +memory >/sys/fs/cgroup/cgroup.subtree_control
mkdir -p "$CG" "$RINGS_CG" "$QPS_CG"

parts_select "floods charges" "$@"

# flood KIND COUNT [ENTRIES]: run the helper as the user in cgroup $CG,
# with a 64 KiB RLIMIT_MEMLOCK; output in $STELLAR_OUT/flood_KIND.log.
flood() {
	local out=$STELLAR_OUT/flood_$1.log

	# shellcheck disable=SC2086
	sh -c 'echo $$ >"$0/cgroup.procs"; ulimit -l 64; exec "$@"' "$CG" \
		$UNPRIV /tmp/local_limits stellar0 "$1" "$2" "${3:-1}" "$G" \
		>"$out" 2>&1 || fail "local_limits $1 exited with $?: $(cat "$out")"
	sed 's/^/    /' "$out"
}

field() {
	awk -v k="$1" '$1 == k { print $2 }' "$STELLAR_OUT/flood_$2.log"
}

# held KIND: objects of KIND the kernel (MAD agents) holds on stellar0.
held() {
	rdma resource show | awk -v k="$1" '$2 == "stellar0:" {
		for (i = 3; i < NF; i++) if ($i == k) print $(i + 1) }'
}

if part floods; then
	log "floods as uid $USER_ID stop at the advertised limits"
	for kind in pd cq qp mr ah srq mcast_grp mcast_qp mcast_total; do
		case $kind in
		# The GSI QP has QPN 1, outside the max_qp QPNs of the other QPs.
		qp|ah|mcast_*) kernel=0 ;;
		# ib_alloc_pd() gives each kernel PD a DMA MR that restrack omits.
		mr) kernel=$(($(held mr) + $(held pd))) ;;
		*) kernel=$(held "$kind") ;;
		esac
		limit=$(/tmp/local_limits stellar0 "$kind" 0 | awk '$1 == "limit" { print $2 }')
		log "$kind: limit $limit, $kernel held by the kernel"
		flood "$kind" $((limit + 1))
		assert_eq "$(field created "$kind")" $((limit - kernel)) "$kind created"
		assert_eq "$(field errno "$kind")" 12 "$kind errno (ENOMEM)"
	done
	# shellcheck disable=SC2016 # expanded by that sh
	wait_for 60 sh -c '[ -z "$(rdma resource show qp | grep -v "comm \[")" ]'
fi

if part charges; then
	# An RC QP never connected has a 4 KiB send ring and small bookkeeping;
	# the RC arrays (about 21 KiB) come with its first move to RTR.  With the
	# process's own share (its mappings of the rings) and the latency
	# telemetry's per-QP state a QP charges about 18 KiB, and 24 KiB with
	# the SLUB debugging every test guest boots with (23.96 KiB measured on
	# Debian's kernel, 24.3 on the KASAN kernel); with the arrays it charged
	# 32 KiB more (a 23 KiB kmalloc takes 32 KiB).  The bound sits between.
	log "a QP that never connected is charged no RC transport arrays"
	CG=$QPS_CG
	flood qp 8192
	assert_eq "$(field created qp)" 8192 "QPs created in $CG"
	peak=$(cat "$CG/memory.peak")
	log "8192 RC QPs in RESET: memory.peak $peak, $((peak / 8192)) bytes per QP"
	[ "$peak" -lt $((8192 * 32768)) ] ||
		fail "8192 unconnected QPs charged $peak bytes, 32 KiB or more each"

	log "ring memory is charged to the user's memory cgroup"
	CG=$RINGS_CG
	echo $((64 << 20)) >"$CG/memory.max"
	# 65536 entries of 64 bytes: a 4 MiB ring per CQ.
	flood cq 64 65536
	created=$(field created cq)
	[ "$created" -lt 64 ] ||
		fail "64 CQs with 4 MiB rings were created in a 64 MiB cgroup"
	[ "$created" -ge 8 ] || fail "only $created CQs fit in 64 MiB"
	assert_eq "$(field errno cq)" 12 "CQ flood errno (ENOMEM)"
	peak=$(cat "$CG/memory.peak")
	[ "$peak" -ge $((created * (4 << 20))) ] ||
		fail "memory.peak $peak is less than $created rings of 4 MiB"
	log "$created CQs, memory.peak $peak"
	grep -q '^max [1-9]' "$CG/memory.events" ||
		fail "the flood never reached memory.max: $(cat "$CG/memory.events")"
	grep -q '^oom_kill 0' "$CG/memory.events" ||
		fail "the flood was OOM-killed: $(cat "$CG/memory.events")"
fi

rmdir /sys/fs/cgroup/stellar_flood "$RINGS_CG" "$QPS_CG"
rdma link del stellar0
stellar_unload
