# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# Helpers for integration tests; sourced by tests/integration/*.sh:
#
#   . "$(dirname "$(readlink -f "$0")")/../vm/lib.sh"
#
# Sourced on the host (outside a test VM), it re-runs the calling test
# through tests/vm/run-tests.sh, so every test file can be run alone.
# Inside a VM the test runs as root with "set -eE -o pipefail"; any
# failing command not tested by if/||/assert_fails fails the test.
# Under pipefail, "CMD | grep -q" is false when grep's early exit kills
# a CMD with more output to write (SIGPIPE): match with "grep ... >/dev/null"
# or on a file instead.
#
# Environment set by the harness (tests/vm/guest-init.sh):
#   STELLAR_REPO     repo path (same as on the host)
#   STELLAR_ROLE     "a" or "b" (a single VM is "a"); on a fabric (header
#                    fabric=K) the hosts are "a", "b", "c"... in that order
#   STELLAR_VMS      host VMs: 1 or 2, up to 8 on a fabric
#   STELLAR_ROLES    the roles of the host VMs, space-separated
#   STELLAR_LINKS    links a<->b; on a fabric, uplinks per host
#   STELLAR_FABRIC   uplinks per host on a fabric, else 0 (tests/vm/fabric.sh)
#   STELLAR_OUT      this VM's results dir (host-visible, rw)
#   STELLAR_SHARED   dir shared rw by both VMs (barriers, values)
#   STELLAR_TIMEOUT_SCALE  how many times slower than usual the kernel runs
#                    (make kasan: 3); scale the test's own time bounds by it
#   STELLAR_LONG     1 when the test was named (run in full), 0 in the
#                    whole suite (make check: its short form); long_run
#
# Link K (1..STELLAR_LINKS) is netdev eth(K-1) with 10.K.0.1/24 on VM a
# and 10.K.0.2/24 on VM b (link_dev K, my_ip K, peer_ip K).

if [ -z "${STELLAR_IN_VM:-}" ]; then
	exec "$(dirname "${BASH_SOURCE[0]}")/run-tests.sh" --verbose \
		"$(readlink -f "${BASH_SOURCE[1]:-$0}")"
fi

# Interactive shells (tests/vm/shell.sh) may source this too; they keep
# going after a failing command.
case $- in
*i*) ;;
*) set -eE -o pipefail ;;
esac

STELLAR_KO=${STELLAR_KO:-$STELLAR_REPO/kernel/virtio_stellar.ko}
STELLAR_PROVIDER_DIR=${STELLAR_PROVIDER_DIR:-$STELLAR_REPO/providers/stellar}
# Barriers and values wait this long for the other VMs: 120 s, stretched
# for a slower kernel (STELLAR_TIMEOUT_SCALE) like the tests' own bounds.
STELLAR_BARRIER_TIMEOUT=${STELLAR_BARRIER_TIMEOUT:-$((120 * ${STELLAR_TIMEOUT_SCALE:-1}))}
IBV_PROVIDER_LIBDIR=/usr/lib/x86_64-linux-gnu/libibverbs
IBV_DRIVER_CONFDIR=/etc/libibverbs.d

# _stellar_fail_state: on a failure, keep what the devices looked like
# (per-device counters, QPs with their transport counters, neighbours,
# NIC counters) in $STELLAR_OUT/fail-state.txt, and show what is not 0,
# for failures that happen once in many runs.  Runs once; never fails.
_stellar_fail_state() {
	local dir dev state=${STELLAR_OUT:-/tmp}/fail-state.txt

	# A failure in a subshell comes back as the caller's: keep the first.
	[ ! -e "$state" ] && [ -d /proc/stellar ] || return 0
	{
		for dir in /proc/stellar/*/; do
			[ -d "$dir" ] || continue
			dev=$(basename "$dir")
			echo "==== $dev"
			timeout 10 "$STELLAR_REPO/tools/stellar-tool" qps \
				--device "$dev" 2>&1
			timeout 10 cat "$dir/qps" "$dir/stats" 2>&1
		done
		echo "==== neighbours"
		ip neigh 2>&1
		# a NIC that counts packets sent while its peer receives none
		# is a stalled emulated queue
		echo "==== links"
		ip -s link show 2>&1
		echo "==== rdma resource show qp"
		timeout 10 rdma resource show qp 2>&1
	} >"$state" 2>&1 || true
	echo "state at failure (counters that are not 0; all in $state):" >&2
	grep -v ': 0$' "$state" 2>/dev/null | head -40 >&2 || true
}

_stellar_on_error() {
	case $- in
	*e*)
		_stellar_fail_state
		echo "FAIL: command exited with $1 at line $2: $3" >&2
		;;
	esac
}
trap '_stellar_on_error $? $LINENO "$BASH_COMMAND"' ERR

log() {
	echo "[$(date +%T) $STELLAR_ROLE] $*"
}

fail() {
	trap - ERR
	_stellar_fail_state
	echo "FAIL: $*" >&2
	exit 1
}

# Only for tests whose header says skip=allowed; otherwise the runner
# counts exit 77 as a failure.
skip() {
	trap - ERR
	echo "SKIP: $*"
	exit 77
}

assert_eq() {
	local actual=$1 expected=$2 what=${3:-value}

	[ "$actual" = "$expected" ] ||
		fail "$what: expected '$expected', got '$actual'"
}

assert_contains() {
	local haystack=$1 needle=$2 what=${3:-output}

	case "$haystack" in
	*"$needle"*) ;;
	*) fail "$what does not contain '$needle':"$'\n'"$haystack" ;;
	esac
}

assert_not_contains() {
	local haystack=$1 needle=$2 what=${3:-output}

	case "$haystack" in
	*"$needle"*) fail "$what contains '$needle':"$'\n'"$haystack" ;;
	esac
}

# Run CMD...; it must succeed.  Its output is kept in ASSERT_OUTPUT.
assert_ok() {
	local rc=0

	ASSERT_OUTPUT=$("$@" 2>&1) || rc=$?
	[ "$rc" = 0 ] || fail "'$*' exited with $rc:"$'\n'"$ASSERT_OUTPUT"
}

# Run CMD...; it must exit non-zero.  Its output is kept in ASSERT_OUTPUT.
assert_fails() {
	local rc=0

	ASSERT_OUTPUT=$("$@" 2>&1) || rc=$?
	[ "$rc" != 0 ] || fail "'$*' succeeded but must fail:"$'\n'"$ASSERT_OUTPUT"
	log "failed as expected ($rc): $* -> $(echo "$ASSERT_OUTPUT" | head -n 1)"
}

# scaled SECONDS: a time bound of the test, stretched for a slower kernel
# (STELLAR_TIMEOUT_SCALE).
scaled() {
	echo $(($1 * ${STELLAR_TIMEOUT_SCALE:-1}))
}

# long_run: the test runs in full (it was named), not in the short form
# that make check runs within CI's time.
long_run() {
	[ "${STELLAR_LONG:-1}" = 1 ]
}

# parts_select "ALL..." [NAME...]: the test runs the parts NAME... (the
# test's arguments), all of ALL when none is named; an unknown name fails.
# part NAME then says whether NAME is to run.
parts_select() {
	local all=$1 p

	shift
	PARTS=" ${*:-$all} "
	for p in $PARTS; do
		[[ " $all " == *" $p "* ]] || fail "no part $p: the parts are $all"
	done
	log "parts:$PARTS"
}

part() {
	[[ $PARTS == *" $1 "* ]]
}

# Poll CMD... every 0.2 s until it succeeds; fail after SECONDS (scaled).
wait_for() {
	local seconds deadline

	seconds=$(scaled "$1")
	shift
	deadline=$(($(date +%s) + seconds))
	until "$@" >/dev/null 2>&1; do
		[ "$(date +%s)" -lt "$deadline" ] ||
			fail "timed out after ${seconds}s waiting for: $*"
		sleep 0.2
	done
}

# Kernel log lines printed since the last klog_mark.
klog_mark() {
	KLOG_MARK=$(dmesg | wc -l)
}

klog_since_mark() {
	dmesg | tail -n +"$((${KLOG_MARK:-0} + 1))"
}

# --- topology ---------------------------------------------------------

peer_role() {
	case "$STELLAR_ROLE" in
	a) echo b ;;
	*) echo a ;;
	esac
}

# _vm_index ROLE: 1 for "a", 2 for "b", ... (8 for "h").
_vm_index() {
	case "$1" in
	[a-h]) echo $(($(printf '%d' "'$1") - 96)) ;;
	*) fail "unknown role '$1'" ;;
	esac
}

# host_roles: the roles of the host VMs, one per line.
host_roles() {
	# shellcheck disable=SC2086 # a list of words
	printf '%s\n' ${STELLAR_ROLES:-$STELLAR_ROLE}
}

# other_roles: the host VMs other than this one, one per line.
other_roles() {
	host_roles | grep -vx -- "$STELLAR_ROLE" || true
}

_check_link() {
	local link=$1

	[ "$STELLAR_VMS" = 2 ] || fail "no links: this test runs in one VM"
	[ "$link" -ge 1 ] && [ "$link" -le "$STELLAR_LINKS" ] ||
		fail "no link $link (links are 1..$STELLAR_LINKS)"
}

link_dev() {
	_check_link "${1:-1}"
	echo "eth$((${1:-1} - 1))"
}

my_ip() {
	_check_link "${1:-1}"
	echo "10.${1:-1}.0.$(_vm_index "$STELLAR_ROLE")"
}

peer_ip() {
	_check_link "${1:-1}"
	echo "10.${1:-1}.0.$(_vm_index "$(peer_role)")"
}

# --- rendezvous between the VMs ---------------------------------------

_publish() {
	local file=$1 value=$2

	printf '%s' "$value" >"$file.tmp.$$"
	mv -f "$file.tmp.$$" "$file"
}

# Fail if another host VM (ROLE, default every other) has already
# finished its test.
_check_peer_alive() {
	local what=$1 role done_file

	for role in ${2:-$(other_roles)}; do
		done_file=/stellar/vm-$role/exit_code
		[ -f "$done_file" ] &&
			fail "VM $role finished (exit $(cat "$done_file")) while we waited for $what"
	done
	return 0
}

# barrier NAME [SECONDS]: wait until every host VM reached barrier NAME.
# Barriers are numbered per VM, so all VMs must pass the same barriers
# in the same order; a mismatch fails the test.  No-op with one VM.
barrier() {
	local name=$1 seconds=${2:-$STELLAR_BARRIER_TIMEOUT} seq deadline
	local seq_file=/run/stellar/barrier_seq role file other

	[ "$STELLAR_VMS" -ge 2 ] || return 0
	seq=$(($(cat "$seq_file" 2>/dev/null || echo 0) + 1))
	echo "$seq" >"$seq_file"
	_publish "$STELLAR_SHARED/barrier.$seq.$STELLAR_ROLE" "$name"
	deadline=$(($(date +%s) + seconds))
	for role in $(other_roles); do
		file=$STELLAR_SHARED/barrier.$seq.$role
		while [ ! -f "$file" ]; do
			_check_peer_alive "barrier $name" "$role"
			[ "$(date +%s)" -lt "$deadline" ] ||
				fail "barrier $name: VM $role did not arrive within ${seconds}s"
			sleep 0.1
		done
		other=$(cat "$file")
		[ "$other" = "$name" ] ||
			fail "barrier #$seq: we are at '$name', VM $role at '$other'"
	done
}

# put_val KEY VALUE: publish a value for the peer VM.
put_val() {
	case "$1" in
	'' | */* | .*) fail "put_val: bad key '$1'" ;;
	esac
	_publish "$STELLAR_SHARED/val.$STELLAR_ROLE.$1" "$2"
}

# get_val KEY [SECONDS]: print the value the peer published under KEY
# (with one VM: our own), waiting for it.
get_val() {
	local role

	role=$(peer_role)
	[ "$STELLAR_VMS" -ge 2 ] || role=$STELLAR_ROLE
	get_val_from "$role" "$@"
}

# get_val_from ROLE KEY [SECONDS]: print the value VM ROLE published
# under KEY, waiting for it.
get_val_from() {
	local role=$1 key=$2 seconds=${3:-$STELLAR_BARRIER_TIMEOUT} file deadline

	file=$STELLAR_SHARED/val.$role.$key
	deadline=$(($(date +%s) + seconds))
	while [ ! -f "$file" ]; do
		[ "$role" != "$STELLAR_ROLE" ] || fail "get_val $key: never set"
		_check_peer_alive "value $key" "$role"
		[ "$(date +%s)" -lt "$deadline" ] ||
			fail "get_val $key: VM $role did not publish it within ${seconds}s"
		sleep 0.1
	done
	cat "$file"
}

# --- the module under test --------------------------------------------

# Install the rdma-core provider into the guest's (overlay) root.
stellar_install_provider() {
	local so=$STELLAR_PROVIDER_DIR/libstellar-rdmav34.so
	local driver=$STELLAR_PROVIDER_DIR/stellar.driver

	[ -f "$so" ] || fail "provider not built: $so (run make)"
	[ -f "$driver" ] || fail "provider driver file missing: $driver"
	install -m 0644 "$so" "$IBV_PROVIDER_LIBDIR/"
	install -m 0644 "$driver" "$IBV_DRIVER_CONFDIR/"
}

# Load the RDMA core modules and the kernel dependencies of the .ko.
stellar_load_deps() {
	local dep

	[ -f "$STELLAR_KO" ] || fail "kernel module not built: $STELLAR_KO (run make)"
	modprobe -a ib_core ib_uverbs rdma_ucm
	for dep in $(modinfo -F depends "$STELLAR_KO" | tr ',' ' '); do
		modprobe "$dep"
	done
}

# stellar_load [--kernel-only] [PARAM=VALUE...]: insmod virtio_stellar
# (with module parameters) and, unless --kernel-only, install the
# provider.
stellar_load() {
	local kernel_only=0

	if [ "${1:-}" = --kernel-only ]; then
		kernel_only=1
		shift
	fi
	stellar_load_deps
	insmod "$STELLAR_KO" "$@" || fail "insmod $STELLAR_KO $* failed"
	[ "$kernel_only" = 1 ] || stellar_install_provider
	log "loaded virtio_stellar $*"
}

stellar_loaded() {
	[ -d /sys/module/virtio_stellar ]
}

stellar_unload() {
	stellar_loaded || return 0
	rmmod virtio_stellar || fail "rmmod virtio_stellar failed"
	! stellar_loaded || fail "virtio_stellar still loaded after rmmod"
	log "unloaded virtio_stellar"
}

# --- small network helpers ----------------------------------------------

# ipv6_link_local DEV: the (non-tentative) fe80:: address of DEV.
ipv6_link_local() {
	ip -6 -o addr show dev "$1" scope link -tentative |
		awk '{ sub("/.*", "", $4); print $4; exit }'
}

# has_ipv6_link_local DEV: DEV has a usable fe80:: address.
has_ipv6_link_local() {
	[ -n "$(ipv6_link_local "$1")" ]
}

# --- RDMA helpers --------------------------------------------------------

# udp_4791_bound [NETNS]: a UDP socket is bound to port 4791.
udp_4791_bound() {
	if [ -n "${1:-}" ]; then
		ip netns exec "$1" ss -Hulnp
	else
		ss -Hulnp
	fi | grep -E '[:.]4791[[:space:]]' >/dev/null
}

# rdma_link_gone DEV: "rdma link show" does not list DEV.
rdma_link_gone() {
	[ -z "$(rdma_link_line "$1")" ]
}

# ib_port_state_is DEV STATE: ibv_devinfo shows port 1 of DEV in STATE
# (PORT_ACTIVE, PORT_DOWN, ...).
ib_port_state_is() {
	ibv_devinfo -d "$1" 2>/dev/null |
		grep -E "^[[:space:]]+state:[[:space:]]+$2 " >/dev/null
}

# ib_has_gid DEV GID: ibv_devinfo -v lists GID (as printed by inet_ntop)
# as a RoCE v2 GID of DEV.
ib_has_gid() {
	ibv_devinfo -v -d "$1" 2>/dev/null |
		grep -F -- "$(printf ':\t\t%s, RoCE v2' "$2")" >/dev/null
}

# ibv_lists DEV: ibv_devices lists DEV.
ibv_lists() {
	ibv_devices 2>/dev/null | awk '{ print $1 }' | grep -qx -- "$1"
}

# rdma_link_line DEV: the "rdma link show" line of DEV (empty if none).
rdma_link_line() {
	rdma link show | grep -E "^link $1/[0-9]+ " || true
}

# veth_pair DEV0 DEV1 [ADDR0/PREFIX ADDR1/PREFIX]: create a veth pair in
# the current namespace, bring both ends up, optionally address them.
veth_pair() {
	ip link add "$1" type veth peer name "$2"
	[ -z "${3:-}" ] || ip addr add "$3" dev "$1"
	[ -z "${4:-}" ] || ip addr add "$4" dev "$2"
	ip link set "$1" up
	ip link set "$2" up
}

# veth_netns DEV PEER NS ADDR PEER_ADDR: a veth pair, DEV with ADDR here
# and PEER with PEER_ADDR in network namespace NS, which it creates (with
# its loopback up): two hosts in one VM.
veth_netns() {
	ip netns add "$3"
	ip link add "$1" type veth peer name "$2"
	ip link set "$2" netns "$3"
	ip addr add "$4" dev "$1"
	ip link set "$1" up
	ip -n "$3" addr add "$5" dev "$2"
	ip -n "$3" link set "$2" up
	ip -n "$3" link set lo up
}

# stellar_veth_pair: two devices in one VM, stellar0 on veth0 (10.60.0.1)
# in init_net and stellar1 on its peer veth0p (10.60.0.2) in netns "peer";
# sets GID0 and GID1 to their RoCE v2 GID indexes.
stellar_veth_pair() {
	veth_netns veth0 veth0p peer 10.60.0.1/24 10.60.0.2/24
	rdma link add stellar0 type stellar netdev veth0
	ip netns exec peer rdma link add stellar1 type stellar netdev veth0p
	GID0=$(gid_index stellar0 10.60.0.1)
	GID1=$(ns_gid_index peer stellar1 10.60.0.2)
}

# --- two-host verbs helpers ------------------------------------------------

# gid_index IBDEV IPV4: index of the RoCE v2 GID ::ffff:IPV4 of port 1,
# waiting up to 10 s for the RDMA core to add it.  The table has 1024
# entries: they are read with bash's own read, in index order (a "cat"
# per entry took 25 s under TCG).
gid_index() {
	local gids=/sys/class/infiniband/$1/ports/1 want n gid type

	want=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' \
		$(echo "$2" | tr . ' '))
	for _ in $(seq 100); do
		for ((n = 0; ; n++)); do
			[ -e "$gids/gids/$n" ] || break
			read -r gid <"$gids/gids/$n" 2>/dev/null || continue
			[ "$gid" = "$want" ] || continue
			read -r type <"$gids/gid_attrs/types/$n" 2>/dev/null || continue
			[ "$type" = "RoCE v2" ] || continue
			echo "$n"
			return 0
		done
		sleep 0.1
	done
	fail "no RoCE v2 GID for $2 on $1"
}

# ns_gid_index NETNS IBDEV IPV4: gid_index of a device in NETNS, whose
# sysfs only "ip netns exec" shows.
ns_gid_index() {
	ip netns exec "$1" bash -c "$(declare -f gid_index fail); gid_index \"\$@\"" \
		sh "$2" "$3" || fail "no RoCE v2 GID for $3 on $2 in $1"
}

# stellar_pair_up [PARAM=VALUE...]: load the module on both VMs and create
# stellar0 on link 1 (eth0); sets STELLAR_GID to its IPv4 GID index.
stellar_pair_up() {
	stellar_load "$@"
	rdma link add stellar0 type stellar netdev "$(link_dev 1)"
	STELLAR_GID=$(gid_index stellar0 "$(my_ip 1)")
	barrier stellar-pair-up
}

# tcp_listening PORT: something listens on TCP PORT.
tcp_listening() {
	ss -Hltn "sport = :$1" | grep -q .
}

# client_server NAME PORT SECONDS -- CMD...: run CMD as the server on VM a
# (it must listen on TCP PORT) and as "CMD PEER_IP" on VM b; both must
# exit 0 within SECONDS (scaled).  Output goes to $STELLAR_OUT/NAME.log.
client_server() {
	local name=$1 port=$2 seconds log pid rc=0

	seconds=$(scaled "$3")
	shift 4
	log=$STELLAR_OUT/$name.log
	if [ "$STELLAR_ROLE" = a ]; then
		timeout "$seconds" "$@" >"$log" 2>&1 &
		pid=$!
		for _ in $(seq 200); do
			tcp_listening "$port" && break
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.05
		done
		put_val "$name.ready" 1
		wait "$pid" || rc=$?
	else
		get_val "$name.ready" >/dev/null
		timeout "$seconds" "$@" "$(peer_ip 1)" >"$log" 2>&1 || rc=$?
	fi
	barrier "$name.done"
	[ "$rc" = 0 ] || fail "$name: '$*' exited with $rc:"$'\n'"$(tail -20 "$log")"
	log "$name: ok"
}

# --- server/client pairs with distinct commands, perftest ----------------

# cm_listening PORT: an RDMA CM id listens on PORT (any port space).
cm_listening() {
	rdma resource show cm_id 2>/dev/null | grep ' state LISTEN ' |
		grep -q "src-addr [^ ]*:$1 "
}

# _pair_ready READY: tcp:PORT, udp:PORT, cm:PORT or none.
_pair_ready() {
	case "$1" in
	tcp:*) tcp_listening "${1#tcp:}" ;;
	udp:*) ss -Hlun "sport = :${1#udp:}" | grep -q . ;;
	cm:*) cm_listening "${1#cm:}" ;;
	none) return 0 ;;
	*) fail "pair_run: bad readiness check '$1'" ;;
	esac
}

# _pair_serve NAME READY SECONDS LOG CMD...: run the server, publish
# NAME.ready once READY holds, wait for it; returns its exit code.
_pair_serve() {
	local name=$1 ready=$2 seconds=$3 log=$4 pid rc=0 deadline

	shift 4
	timeout "$seconds" "$@" >"$log" 2>&1 &
	pid=$!
	deadline=$(($(date +%s) + 30))
	until _pair_ready "$ready"; do
		kill -0 "$pid" 2>/dev/null || break
		[ "$(date +%s)" -lt "$deadline" ] ||
			fail "$name: server not ready ($ready) after 30 s:"$'\n'"$(tail -20 "$log")"
		sleep 0.1
	done
	put_val "$name.ready" 1
	wait "$pid" || rc=$?
	return "$rc"
}

# pair_run NAME SERVER_ROLE READY SECONDS SERVER_ARRAY CLIENT_ARRAY: run
# the command in the array named SERVER_ARRAY on VM SERVER_ROLE and, once
# READY (tcp:PORT, udp:PORT, cm:PORT or none) holds there, the command in
# CLIENT_ARRAY on the other VM.  Each VM expands both arrays itself, so
# device names, GID indexes and $(peer_ip) may differ per VM.  Both
# commands must exit 0 within SECONDS.  Output goes to
# $STELLAR_OUT/NAME.log; PAIR_ROLE is set to "server" or "client" and
# PAIR_LOG to that log.  SECONDS is scaled.
pair_run() {
	local name=$1 server_role=$2 ready=$3 seconds rc tag try
	local -n _pair_srv=$5 _pair_cli=$6
	local cmd

	seconds=$(scaled "$4")

	PAIR_LOG=$STELLAR_OUT/$name.log
	for try in 1 2; do
		tag=$name
		[ "$try" = 1 ] || tag=$name.again
		rc=0
		if [ "$STELLAR_ROLE" = "$server_role" ]; then
			PAIR_ROLE=server
			cmd="${_pair_srv[*]}"
			_pair_serve "$tag" "$ready" "$seconds" "$PAIR_LOG" \
				"${_pair_srv[@]}" || rc=$?
		else
			PAIR_ROLE=client
			cmd="${_pair_cli[*]}"
			get_val "$tag.ready" >/dev/null
			timeout "$seconds" "${_pair_cli[@]}" >"$PAIR_LOG" 2>&1 || rc=$?
		fi
		# The peer may still wait for "ready", then run its full time.
		barrier "$tag.done" $((seconds + STELLAR_BARRIER_TIMEOUT))
		if [ "$try" = 2 ] || ! _pair_uncalibrated "$tag"; then
			break
		fi
		log "$name: perftest could not calibrate its clock; once more"
	done
	[ "$rc" = 0 ] ||
		fail "$name ($PAIR_ROLE): '$cmd' exited with $rc:"$'\n'"$(tail -20 "$PAIR_LOG")"
	log "$name: $PAIR_ROLE ok"
}

# _pair_uncalibrated TAG: did perftest on either VM fail to calibrate its
# clock in run TAG of pair_run?  Under TCG its cycle counter against
# gettimeofday() is now and then too noisy ("Correlation coefficient
# r^2 < 0.9", then "Can't produce a report"), after the traffic ran: that
# says nothing of the device, so pair_run runs the pair once more.  Both
# VMs get the same answer.
_pair_uncalibrated() {
	local tag=$1 mine=0

	grep -q "Can't produce a report" "$PAIR_LOG" && mine=1
	put_val "$tag.uncalibrated" "$mine"
	[ "$mine" = 1 ] || [ "$(get_val "$tag.uncalibrated")" = 1 ]
}

# perftest_result LOG: the first result line of a perftest log (the
# numbers under the "#bytes" header); empty if there is none.
perftest_result() {
	awk '/#bytes/ { hdr = 1; next }
		hdr && $1 ~ /^[0-9]+$/ && NF >= 4 { print; exit }' "$1"
}

# perftest_value LOG COLUMN: one number of the result line: for _bw
# tests column 4 is the average MB/s and 5 the message rate (Mpps); for
# _lat tests 5 is t_typical and 6 t_avg (usec).  Fails unless it is a
# positive number.
perftest_value() {
	local line value

	line=$(perftest_result "$1")
	[ -n "$line" ] || fail "no perftest result line in $1:"$'\n'"$(tail -20 "$1")"
	value=$(echo "$line" | awk -v c="$2" '{ print $c }')
	awk -v v="$value" 'BEGIN { exit !(v ~ /^[0-9.]+$/ && v + 0 > 0) }' ||
		fail "perftest result '$value' (column $2) in $1 is not a positive number: $line"
	echo "$value"
}

# cm_connect_delay_shim: build (once) the LD_PRELOAD shim that holds back
# a perftest -R client's data connection until the server listens again
# (tests/integration/helpers/cm_connect_delay.c); print its path.
cm_connect_delay_shim() {
	local shim=/tmp/cm_connect_delay.so

	[ -f "$shim" ] || gcc -shared -fPIC -O2 -Wall -Werror -o "$shim" \
		"$STELLAR_REPO/tests/integration/helpers/cm_connect_delay.c" \
		-ldl >&2 || fail "cannot build $shim"
	echo "$shim"
}

# perftest_pair NAME SERVER_ROLE DEV GID PORT SECONDS ARGS...: run the
# perftest command ARGS (e.g. ib_write_bw -n 50) with -d DEV -x GID -p
# PORT as server on SERVER_ROLE and as client on the other VM (DEV and GID
# are this VM's own).  -R in ARGS switches the readiness check to RDMA CM
# and runs the client with cm_connect_delay_shim preloaded.
# The client must print a result line with a positive first figure;
# PERFTEST_LINE holds it on the client, empty on the server.
perftest_pair() {
	local name=$1 server_role=$2 dev=$3 gid=$4 port=$5 seconds=$6 ready shim
	local -a srv cli

	shift 6
	srv=("$@" -d "$dev" -x "$gid" -p "$port")
	# shellcheck disable=SC2034 # used by name in pair_run
	cli=("${srv[@]}" "$(peer_ip 1)")
	ready=tcp:$port
	case " $* " in
	*" -R "*)
		ready=cm:$port
		shim=$(cm_connect_delay_shim) || fail "$name: no CM shim"
		cli=(env "LD_PRELOAD=$shim" "${cli[@]}")
		;;
	esac
	pair_run "$name" "$server_role" "$ready" "$seconds" srv cli
	PERFTEST_LINE=''
	[ "$PAIR_ROLE" = client ] || return 0
	PERFTEST_LINE=$(perftest_result "$PAIR_LOG")
	# The message rate of atomics: 8-byte operations on a slow (debug)
	# kernel can round to 0.00 MB/s.
	case "$1" in
	*_lat) perftest_value "$PAIR_LOG" 5 >/dev/null ;;
	*atomic_bw) perftest_value "$PAIR_LOG" 5 >/dev/null ;;
	*) perftest_value "$PAIR_LOG" 4 >/dev/null ;;
	esac
	log "$name: $(echo "$PERFTEST_LINE" | tr -s ' \t' ' ')"
}

# rxe_up NETDEV: load rdma_rxe and create rxe0 on NETDEV; sets RXE_GID to
# the GID index of the NETDEV's first IPv4 address.
rxe_up() {
	modprobe -a ib_core ib_uverbs rdma_ucm rdma_rxe
	rdma link add rxe0 type rxe netdev "$1"
	RXE_GID=$(gid_index rxe0 "$(ip -4 -o addr show dev "$1" |
		awk '{ sub("/.*", "", $4); print $4; exit }')")
	log "rxe0 on $1, GID index $RXE_GID"
}

rxe_down() {
	rdma link delete rxe0
	rmmod rdma_rxe || fail "rmmod rdma_rxe failed"
}

# stellar_qp_stat DEV QPN NAME: counter NAME of QP QPN in
# /proc/stellar/DEV/qps.
stellar_qp_stat() {
	awk -v qp="qp $2:" -v n="$3:" '
		$1 == "qp" { inqp = ($1 " " $2 == qp) }
		inqp && $1 == n { print $2; found = 1 }
		END { if (!found) exit 1 }' "/proc/stellar/$1/qps" ||
		fail "no counter $3 of QP $2 in /proc/stellar/$1/qps"
}

# stellar_stat DEV NAME: counter NAME of /proc/stellar/DEV/stats.
stellar_stat() {
	local value

	value=$(awk -v n="$2:" '$1 == n { print $2 }' "/proc/stellar/$1/stats")
	[ -n "$value" ] || fail "no counter '$2' in /proc/stellar/$1/stats"
	echo "$value"
}
