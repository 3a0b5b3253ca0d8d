#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# PID 1 of a test VM after switch_root (root = host / over 9p + tmpfs
# overlay).  Mounts the usual filesystems and the per-test share
# (/stellar), configures the inter-VM links, runs the test script named
# in /stellar/vm-$NAME/config.env with a timeout, stores its output, exit
# code and the kernel log in the share, and powers off.
#
# Kernel command line: stellarvm.repo=PATH stellarvm.name=a|b
# stellarvm.mode=test|shell|idle

export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8
export TERM=${TERM:-linux}

say() {
	echo "stellar-vm: $*" >/dev/console
}

power_off() {
	sync
	/bin/busybox poweroff -f
	echo o >/proc/sysrq-trigger
	sleep 1000
}

# is_mounted DIR: something is mounted on DIR.  Bash alone: every program
# started costs about 0.1 s here (9p root under TCG), mkdir and mountpoint
# took two thirds of the mounts' 2.7 s.
is_mounted() {
	local dev dir rest

	[ -r /proc/mounts ] || return 1
	while read -r dev dir rest; do
		[ "$dir" = "$1" ] && return 0
	done </proc/mounts
	return 1
}

mount_once() {
	local type=$1 dir=$2 opts=${3:-defaults}

	[ -d "$dir" ] || mkdir -p "$dir"
	is_mounted "$dir" || mount -t "$type" -o "$opts" "$type" "$dir" ||
		say "mounting $type on $dir failed"
}

mount_filesystems() {
	mount_once proc /proc
	mount_once sysfs /sys
	mount_once devtmpfs /dev
	mount_once devpts /dev/pts gid=5,mode=620,ptmxmode=666
	mount_once tmpfs /dev/shm mode=1777
	mount_once tmpfs /run mode=0755
	mount_once debugfs /sys/kernel/debug
	mount_once tracefs /sys/kernel/tracing
	[ -d /stellar ] || mkdir -p /stellar
	mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 stellar \
		/stellar || { say "mounting the results share failed"; power_off; }
}

read_cmdline() {
	local word

	for word in $(cat /proc/cmdline); do
		case "$word" in
		stellarvm.repo=*) STELLAR_REPO=${word#*=} ;;
		stellarvm.name=*) STELLAR_ROLE=${word#*=} ;;
		stellarvm.mode=*) VM_MODE=${word#*=} ;;
		esac
	done
}

# Name of the interface whose MAC is $1, waiting up to 10 s for it.
iface_by_mac() {
	local mac=$1 dev

	for _ in $(seq 1 100); do
		for dev in /sys/class/net/*; do
			if [ "$(cat "$dev/address" 2>/dev/null)" = "$mac" ]; then
				basename "$dev"
				return 0
			fi
		done
		sleep 0.1
	done
	return 1
}

# Link k (1..STELLAR_LINKS) becomes interface eth(K-1) with address
# 10.K.0.<vm index>/24: the first link is eth0, as on a usual VM.
# Interfaces are found by the MAC qemu gave them (52:54:00:5e:LINK:INDEX),
# so the naming does not depend on probe order.  On a fabric the router
# VM's NICs are named by fabric-router.sh and a host's uplinks are set up
# by configure_fabric_host.
configure_links() {
	local link dev

	[ "${STELLAR_LINKS:-0}" -gt 0 ] || return 0
	modprobe virtio_net || say "modprobe virtio_net failed"
	[ "$STELLAR_ROLE" != fabric ] || return 0
	if [ "${STELLAR_FABRIC:-0}" -gt 0 ]; then
		configure_fabric_host
		return
	fi
	name_links "$STELLAR_LINKS"
	for link in $(seq 1 "$STELLAR_LINKS"); do
		dev=eth$((link - 1))
		[ -e "/sys/class/net/$dev" ] || continue
		ip addr add "10.$link.0.$STELLAR_VM_INDEX/24" dev "$dev"
		ip link set "$dev" up
	done
}

# name_links N: the NICs of links 1..N (MAC 52:54:00:5e:LINK:INDEX) become
# eth0..eth(N-1), through temporary names so that no two collide.
name_links() {
	local link dev mac

	for link in $(seq 1 "$1"); do
		mac=$(printf '52:54:00:5e:%02x:%02x' "$link" "$STELLAR_VM_INDEX")
		dev=$(iface_by_mac "$mac") || { say "no NIC with MAC $mac"; continue; }
		ip link set "$dev" name "stmp$link"
	done
	for link in $(seq 1 "$1"); do
		ip link set "stmp$link" name "eth$((link - 1))" ||
			say "renaming stmp$link failed"
	done
}

# A host on the fabric: uplink K is eth(K-1) with 10.(10+K).<index>.2/24,
# its leaf's port is .1 (MAC 52:54:00:6e:K:INDEX, made permanent: a link
# made dark must not take ARP with it).  The host's fabric address
# 10.100.0.<index>/32 sits on eth0, and the other hosts are reached by one
# ECMP route over all uplinks hashed on ports, as a host with several
# NICs under one address would; each uplink is shaped to the fabric rate.
configure_fabric_host() {
	local k dev mac net conf
	local -a hops=()

	sysctl -qw net.ipv4.fib_multipath_hash_policy=1
	for conf in /proc/sys/net/ipv4/conf/*/rp_filter; do
		echo 0 >"$conf"
	done
	name_links "$STELLAR_FABRIC"
	for k in $(seq 1 "$STELLAR_FABRIC"); do
		dev=eth$((k - 1))
		net=10.$((10 + k)).$STELLAR_VM_INDEX
		mac=$(printf '52:54:00:6e:%02x:%02x' "$k" "$STELLAR_VM_INDEX")
		[ -e "/sys/class/net/$dev" ] || continue
		ip addr add "$net.2/24" dev "$dev"
		ip link set "$dev" up
		ip neigh replace "$net.1" lladdr "$mac" dev "$dev" nud permanent
		[ -z "$STELLAR_FABRIC_RATE" ] ||
			tc qdisc replace dev "$dev" root handle 1: tbf \
				rate "$STELLAR_FABRIC_RATE" burst 64kb latency 100ms
		hops+=(nexthop via "$net.1" dev "$dev")
	done
	ip addr add "10.100.0.$STELLAR_VM_INDEX/32" dev eth0
	ip route add 10.100.0.0/24 src "10.100.0.$STELLAR_VM_INDEX" "${hops[@]}"
}

start_kernel_log() {
	dmesg -w >"$VM_OUT/kernel.log" 2>&1 &
	KLOG_PID=$!
}

stop_kernel_log() {
	sleep 0.3
	kill "$KLOG_PID" 2>/dev/null
	wait "$KLOG_PID" 2>/dev/null
}

run_test() {
	local rc

	cd "$VM_OUT" || return
	timeout -k 10 "$STELLAR_TIMEOUT" bash "$STELLAR_SCRIPT" \
		"${STELLAR_ARGS[@]}" </dev/null >"$VM_OUT/output.log" 2>&1
	rc=$?
	case "$rc" in
	124 | 137) echo timeout >"$VM_OUT/status" ;;
	*) echo exited >"$VM_OUT/status" ;;
	esac
	echo "$rc" >"$VM_OUT/exit_code.tmp"
	mv "$VM_OUT/exit_code.tmp" "$VM_OUT/exit_code"
}

# On a kernel with kmemleak (make kasan), scan once the test is over:
# objects only count after 5 s, so scan twice; a leak report lands in
# the kernel log ("kmemleak: N new suspected memory leaks") and fails
# the test.
kmemleak_scan() {
	local ctl=/sys/kernel/debug/kmemleak

	[ -w "$ctl" ] || return 0
	echo scan >"$ctl"
	sleep 6
	echo scan >"$ctl"
}

run_shell() {
	cd "$STELLAR_REPO" || cd /
	say "interactive shell (role $STELLAR_ROLE); exit to power off"
	setsid -c bash -l </dev/ttyS0 >/dev/ttyS0 2>&1
}

main() {
	mount_filesystems
	read_cmdline
	VM_OUT=/stellar/vm-$STELLAR_ROLE
	# shellcheck disable=SC1091
	. "$VM_OUT/config.env" || { say "no $VM_OUT/config.env"; power_off; }
	start_kernel_log
	hostname "stellar-$STELLAR_ROLE"
	echo 1 >/proc/sys/kernel/sysrq
	echo 60 >/proc/sys/kernel/hung_task_timeout_secs 2>/dev/null
	ip link set lo up
	# iputils-ping need not be installed on the host: use busybox's.
	command -v ping >/dev/null || ln -s /bin/busybox /usr/local/bin/ping
	configure_links
	mkdir -p /stellar/shared /run/stellar
	export STELLAR_REPO STELLAR_ROLE STELLAR_VM_INDEX STELLAR_VMS
	export STELLAR_LINKS STELLAR_TIMEOUT STELLAR_SCRIPT STELLAR_ROLES
	export STELLAR_FABRIC STELLAR_FABRIC_LEAVES STELLAR_FABRIC_SPINES
	export STELLAR_FABRIC_RATE STELLAR_FABRIC_RED STELLAR_FABRIC_CC
	# Tests scale their own time bounds by it (make kasan: a slower kernel).
	export STELLAR_TIMEOUT_SCALE=${STELLAR_TIMEOUT_SCALE:-1}
	# The whole suite runs the short form of the long tests (lib.sh).
	export STELLAR_LONG
	# The host's STELLAR_KO (a variant or a KASAN build) reaches the test.
	[ -z "${STELLAR_KO:-}" ] || export STELLAR_KO
	[ -z "${STELLAR_RACE_KO:-}" ] || export STELLAR_RACE_KO
	export STELLAR_SHARED=/stellar/shared STELLAR_OUT=$VM_OUT
	export STELLAR_IN_VM=1
	cut -d ' ' -f 1 /proc/uptime >"$VM_OUT/boot_seconds"
	case "$VM_MODE" in
	shell) run_shell ;;
	idle) while :; do sleep 3600; done ;;
	*) run_test; kmemleak_scan ;;
	esac
	stop_kernel_log
	power_off
}

main
