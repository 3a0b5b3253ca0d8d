#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# PVDMA: user memory pinned on first access, checked byte for byte through
# a loopback RC QP pair (helpers/pvdma_test.c): chunk boundaries, MRs not
# 2 MB aligned, 1-byte MRs, huge pages, remote READ/WRITE/atomics (and
# ATOMIC WRITE flags after WRITEs) into
# never-touched chunks, prefetch, fork, memory unmapped before its first
# access, re-registration (and ibv_rereg_mr of translation, access and
# PD), on-demand MRs that follow munmap/mmap and fork (also while the
# range is remapped under traffic), an implicit on-demand MR (the whole
# address space: mmapped, heap and stack memory, remaps, atomics, its
# lkey, unmapped and kernel addresses; its per-page pin descriptions are
# charged to the owner's memory cgroup), a tiny RLIMIT_MEMLOCK, a process killed with
# pinned chunks (every pin released), several QPs racing to pin the same
# chunks, eager mode, MRs whose iova is not their address, and data
# through the eMTT on, off, smaller than the working set and resized under
# traffic; an MR deregistered and re-registered under the same key index
# while traffic hammers it (eMTT on, off and tiny) never shows the old pages.
# Arguments (optional): case names of helpers/pvdma_test.c to run alone.
# stellar-test: vms=1 timeout=900

# shellcheck source=tests/vm/lib.sh
. "$(dirname "$(readlink -f "$0")")/../vm/lib.sh"

HELPERS=$STELLAR_REPO/tests/integration/helpers
TOOL=$STELLAR_REPO/tools/stellar-tool
PROG=/tmp/pvdma_test

[ -x "$TOOL" ] || fail "stellar-tool not built: $TOOL (run make -C tools)"
gcc -O2 -Wall -pthread -o "$PROG" "$HELPERS/pvdma_test.c" -libverbs ||
	fail "cannot build helpers/pvdma_test.c"

# pvdma VALUE-NAME: a line of stellar0's section of /proc/stellar/FILE.
mem_stat() {
	awk -v dev="[stellar0]" -v key="$2:" '
		/^\[/ { in_dev = ($0 == dev); next }
		in_dev && index($0, key) == 1 { sub(/^[^:]*: */, ""); print; exit }
	' "/proc/stellar/$1"
}

# Every case runs in a memory cgroup of its own (odp_charge reads what it
# is charged).
CG=/sys/fs/cgroup/stellar_pvdma
mountpoint -q /sys/fs/cgroup || mount -t cgroup2 cgroup2 /sys/fs/cgroup
echo +memory >/sys/fs/cgroup/cgroup.subtree_control
mkdir -p "$CG"

# run_case CASE: run one case; a failure is reported at the end, so that
# one run shows every failing case.
FAILED=()
FIRST_FAILURE=
run_case() {
	local out rc=0

	out=$(sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG" \
		"$PROG" -d stellar0 -g "$GID" "$1" 2>&1) || rc=$?
	if [ "$rc" = 0 ] && [[ "$out" == *"ok $1"* ]]; then
		log "case $1 passed: ${out//$'\n'/ | }"
	else
		log "case $1 FAILED ($rc): $out"
		FAILED+=("$1")
		[ -n "$FIRST_FAILURE" ] ||
			FIRST_FAILURE="$1 ($rc): $(tail -n 2 <<<"$out" | tr '\n' ' ')"
	fi
}

# resize_under_traffic: the eMTT replaced (RCU) 100 times while the
# random case runs; its data must stay right.
resize_under_traffic() {
	local rc=0 pid size

	"$PROG" -d stellar0 -g "$GID" random >"$STELLAR_OUT/resize.log" 2>&1 &
	pid=$!
	for _ in $(seq 25); do
		for size in 0 2 64 1; do
			"$TOOL" set --device stellar0 --emtt-cache-size "$size"
		done
	done
	wait "$pid" || rc=$?
	[ "$rc" = 0 ] || fail "random with the eMTT resized under it: $(cat "$STELLAR_OUT/resize.log")"
	log "resize: random passed under 100 eMTT replacements"
}

device_up() {
	veth_pair veth0 veth0p 10.60.0.1/24 10.60.0.2/24
	rdma link add stellar0 type stellar netdev veth0
	GID=$(gid_index stellar0 10.60.0.1)
}

device_down() {
	rdma link delete stellar0
	ip link delete veth0
	stellar_unload
}

stellar_load
device_up

# The files and the module parameter exist and read as documented.
assert_eq "$(cat /sys/module/virtio_stellar/parameters/pin_mode)" lazy \
	"default pin_mode"
assert_eq "$(head -n 2 /proc/stellar/pvdma_stats | tail -n 1)" \
	"Active mappings: 0" "first line of the stellar0 section"
assert_contains "$(cat /proc/stellar/emtt_stats)" "Entries: 64000" \
	"default eMTT size"
assert_fails sh -c 'echo sometimes > /sys/module/virtio_stellar/parameters/pin_mode'

# Cases named as arguments (tests/vm/run-tests.sh mem_pvdma -- CASE...):
# those only, in that order, then the device goes (for reruns on slow
# kernels).  Besides pvdma_test's cases: emtt=N sets the eMTT's size
# (stellar-tool's --emtt-cache-size), resize replaces it under traffic.
NAMED=()
for arg in "$@"; do
	[ -z "$arg" ] || NAMED+=("$arg")
done
if [ "${#NAMED[@]}" -gt 0 ]; then
	for c in "${NAMED[@]}"; do
		case "$c" in
		emtt=*)
			assert_ok "$TOOL" set --device stellar0 --emtt-cache-size "${c#emtt=}"
			log "eMTT entries: $(mem_stat emtt_stats Entries)"
			;;
		resize) resize_under_traffic ;;
		*) run_case "$c" ;;
		esac
	done
	device_down
	rmdir "$CG"
	[ ${#FAILED[@]} = 0 ] || fail "failed cases: ${FAILED[*]}; the first: $FIRST_FAILURE"
	log "mem_pvdma: the named cases passed: ${NAMED[*]}"
	exit 0
fi

for c in boundaries tiny atomic atomic_write prefetch fork unmapped rereg \
	rereg_verb odp odp_follow odp_implicit odp_charge concurrent iova edge \
	rereg_race; do
	run_case "$c"
done

echo 8 >/proc/sys/vm/nr_hugepages
[ "$(cat /proc/sys/vm/nr_hugepages)" -ge 4 ] ||
	fail "could not reserve 4 huge pages"
run_case hugetlb

klog_mark
run_case memlock
assert_contains "$(klog_since_mark)" "RLIMIT_MEMLOCK" "memlock message"

# A process killed with a partly pinned MR: every pin is released.
rc=0
"$PROG" -d stellar0 -g "$GID" exit >"$STELLAR_OUT/exit.log" 2>&1 || rc=$?
assert_eq "$rc" 137 "the exit case must die of SIGKILL: $(cat "$STELLAR_OUT/exit.log")"
wait_for 10 test "$(mem_stat pvdma_stats 'Pinned bytes')" = 0 ||
	fail "pinned bytes after exit: $(mem_stat pvdma_stats 'Pinned bytes')"
assert_eq "$(mem_stat pvdma_stats 'Active mappings')" 0 "mappings after exit"

# The eMTT: data is the same with it on, off, and far smaller than the
# working set (1000 entries, 16384 pages): then it must evict.  Each run
# checks every byte against the process's own view of the memory.
run_case random
hits=$(mem_stat emtt_stats Hits)
[ "$hits" -gt 0 ] || fail "eMTT on, no hits"
"$TOOL" set --device stellar0 --emtt-cache-size 0
assert_eq "$(mem_stat emtt_stats Entries)" 0 "eMTT off"
fills=$(mem_stat emtt_stats Fills)
run_case random
run_case iova
run_case edge
run_case rereg_race
assert_eq "$(mem_stat emtt_stats Hits)" "$hits" "hits with the eMTT off"
assert_eq "$(mem_stat emtt_stats Fills)" "$fills" "fills with the eMTT off"
"$TOOL" set --device stellar0 --emtt-cache-size 1
assert_eq "$(mem_stat emtt_stats Entries)" 1000 "eMTT of 1000 entries"
ev0=$(mem_stat emtt_stats Evictions)
hits=$(mem_stat emtt_stats Hits)
run_case random
[ "$(mem_stat emtt_stats Evictions)" -gt "$ev0" ] ||
	fail "a working set larger than the eMTT evicted nothing"
[ "$(mem_stat emtt_stats Hits)" -gt "$hits" ] ||
	fail "no hits with a working set larger than the eMTT"
run_case rereg_race

resize_under_traffic
log "$(cat /proc/stellar/emtt_stats)"
log "$(cat /proc/stellar/pvdma_stats)"

# stellar-tool shows the same figures, as text and as JSON.
out=$("$TOOL" pvdma --device stellar0)
assert_contains "$out" "Active mappings: $(mem_stat pvdma_stats 'Active mappings')" \
	"stellar-tool pvdma"
assert_contains "$out" "Pin mode: lazy" "stellar-tool pvdma"
out=$("$TOOL" -j emtt)
python3 -c 'import json, sys
d = json.loads(sys.argv[1])[0]
assert d["device"] == "stellar0" and d["entries"] == 1000, d
assert d["evictions"] > 0, d' "$out" || fail "stellar-tool -j emtt: $out"

# The per-device setting: eager for this device only, then back.
"$TOOL" set --device stellar0 --pin-mode 1
assert_contains "$(cat /proc/stellar/stellar0/settings)" "pin_mode: eager" \
	"per-device pin_mode"
eager0=$(mem_stat pvdma_stats 'Eager pins')
run_case tiny
[ "$(mem_stat pvdma_stats 'Eager pins')" -gt "$eager0" ] ||
	fail "pin_mode 1 did not pin at registration"
assert_fails "$TOOL" set --device stellar0 --pin-mode 2
"$TOOL" set --device stellar0 --pin-mode 0
device_down

# Eager mode pins at registration; the data cases still pass.
stellar_load pin_mode=eager
device_up
assert_contains "$(cat /proc/stellar/stellar0/settings)" "pin_mode: eager" \
	"per-device pin_mode"
for c in tiny atomic fork rereg; do
	run_case "$c"
done
[ "$(mem_stat pvdma_stats 'Eager pins')" -gt 0 ] || fail "no eager pins"
device_down
rmdir "$CG"
[ ${#FAILED[@]} = 0 ] || fail "failed cases: ${FAILED[*]}; the first: $FIRST_FAILURE"
