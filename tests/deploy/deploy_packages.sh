#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# Install from packages: the .debs "make deb" left in build/deb/ go in with
# dpkg -i (the guest's root is a tmpfs overlay, the host is untouched) and
# DKMS builds the module for the booted kernel, into updates/dkms.  With
# the build tree hidden: "rdma link add" loads that module through its
# alias (no modprobe), ibv_rc_pingpong moves checked data through the
# packaged provider, stellar-tool and stellar-monitor from /usr/sbin see
# the device, and stellar-link (what stellar-link@.service runs at boot)
# creates and deletes a device; the units pass systemd-analyze verify.
# DKMS's kernel hook puts the module back for a kernel that lacks it (what
# a kernel upgrade runs), and dpkg --purge leaves no file of the packages,
# no module and no DKMS tree behind.  dpkg -i's duration (nearly all of it
# the DKMS build) goes to dkms_seconds in the results.
# smp=2: DKMS builds with two jobs; mem=2048: the build's objects live in
# the tmpfs overlay; memdebug=off: the test is the packaging, and SLUB
# debugging and page poisoning make the compiler's every file and page
# dearer, while the module's memory use is checked by every other test.
# stellar-test: vms=1 timeout=2400 smp=2 mem=2048 memdebug=off

# shellcheck source=tests/vm/lib.sh
. "$(dirname "$(readlink -f "$0")")/../vm/lib.sh"

KVER=$(uname -r)
DEB_DIR=$STELLAR_REPO/build/deb
PKGS=(virtio-stellar-dkms ibverbs-provider-stellar stellar-tools)
DKMS_NAME=virtio-stellar
DKMS_VERSION=0.1
DKMS_MOD=/lib/modules/$KVER/updates/dkms/virtio_stellar.ko
PROVIDER=$IBV_PROVIDER_LIBDIR/libstellar-rdmav34.so
DRIVER=$IBV_DRIVER_CONFDIR/stellar.driver
LINK_HELPER=/usr/libexec/stellar/stellar-link
# Besides every file the packages list (dpkg -L).
LEFTOVERS=("/var/lib/dkms/$DKMS_NAME" "/usr/src/$DKMS_NAME-$DKMS_VERSION"
	"$DKMS_MOD" "$PROVIDER" "$DRIVER" /usr/sbin/stellar-tool
	/usr/sbin/stellar-monitor "$LINK_HELPER")

# installed_modules: virtio_stellar modules where out-of-tree modules go
# (make install: updates/, DKMS: updates/dkms/) and the one modprobe finds.
installed_modules() {
	{
		find "/lib/modules/$KVER/updates" "/lib/modules/$KVER/extra" \
			-name 'virtio_stellar.ko*' 2>/dev/null || true
		modinfo -n virtio_stellar 2>/dev/null || true
	} | sort -u
}

# pingpong SIZE PORT: ibv_rc_pingpong with data checks on stellar0 to its
# own address; the server must have mapped the packaged provider and
# nothing from the repository.
pingpong() {
	local size=$1 port=$2 pid maps

	ibv_rc_pingpong -d stellar0 -g "$G" -p "$port" -c -s "$size" -n 200 \
		>"$STELLAR_OUT/pingpong_$size.server.log" 2>&1 &
	pid=$!
	wait_for 30 tcp_listening "$port"
	maps=$(cat "/proc/$pid/maps")
	assert_contains "$maps" "$PROVIDER" "the pingpong server's mappings"
	assert_not_contains "$maps" "$STELLAR_REPO" "the pingpong server's mappings"
	timeout 120 ibv_rc_pingpong -d stellar0 -g "$G" -p "$port" -c \
		-s "$size" -n 200 10.60.0.1 \
		>"$STELLAR_OUT/pingpong_$size.client.log" 2>&1 ||
		fail "pingpong $size: client failed: $(tail -5 "$STELLAR_OUT/pingpong_$size.client.log")"
	wait "$pid" ||
		fail "pingpong $size: server failed: $(tail -5 "$STELLAR_OUT/pingpong_$size.server.log")"
	grep -q "200 iters" "$STELLAR_OUT/pingpong_$size.client.log" ||
		fail "pingpong $size: no result line"
	log "pingpong $size bytes: ok"
}

log "the packages of make deb"
mkdir -p /tmp/debs
for pkg in "${PKGS[@]}"; do
	debs=("$DEB_DIR/${pkg}"_*.deb)
	if [ "${#debs[@]}" != 1 ] || [ ! -f "${debs[0]}" ]; then
		fail "need one $DEB_DIR/${pkg}_*.deb (run make deb), found: ${debs[*]}"
	fi
	cp "${debs[0]}" /tmp/debs/
done
dpkg-query -W -f='${Status}' dkms 2>/dev/null | grep -q "install ok installed" ||
	fail "dkms is not installed on the host (make deps)"

# What udev/systemd set up on a booted system and the test VM lacks: DKMS
# uses bash's <(...), which needs /dev/fd.
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
export DEBIAN_FRONTEND=noninteractive
# man-db's trigger would re-index every manual page over 9p for minutes.
rm -f /var/lib/man-db/auto-update

log "hide the build tree and the headers of other kernels"
for dir in kernel providers tools build; do
	mount -t tmpfs -o ro,size=4k stellar-hidden "$STELLAR_REPO/$dir"
done
# DKMS builds for every kernel in /lib/modules with headers: only the
# booted one's stay, so the test builds once, the same on every host.
for build in /lib/modules/*/build; do
	[ "$build" = "/lib/modules/$KVER/build" ] ||
		mount -t tmpfs -o ro,size=4k stellar-hidden "$build"
done
[ -d "/lib/modules/$KVER/build/include" ] ||
	fail "no headers for the booted kernel $KVER (linux-headers-$KVER)"

log "nothing of stellar installed or loaded yet"
! stellar_loaded || fail "virtio_stellar is loaded before the packages are installed"
assert_eq "$(installed_modules)" "" "virtio_stellar modules before dpkg -i"
for path in "${LEFTOVERS[@]}"; do
	[ ! -e "$path" ] || fail "$path exists before the packages are installed"
done

log "dpkg -i ${PKGS[*]} (DKMS builds the module)"
start=$(date +%s)
if ! dpkg -i /tmp/debs/*.deb >"$STELLAR_OUT/dpkg-install.log" 2>&1; then
	cp "/var/lib/dkms/$DKMS_NAME/$DKMS_VERSION/build/make.log" \
		"$STELLAR_OUT/dkms-make.log" 2>/dev/null || true
	fail "dpkg -i failed (see dkms-make.log):"$'\n'"$(tail -30 "$STELLAR_OUT/dpkg-install.log")"
fi
seconds=$(($(date +%s) - start))
echo "$seconds" >"$STELLAR_OUT/dkms_seconds"
log "dpkg -i with the DKMS build took ${seconds}s"
for pkg in "${PKGS[@]}"; do
	assert_eq "$(dpkg-query -W -f='${Status}' "$pkg")" "install ok installed" \
		"dpkg status of $pkg"
done
dpkg -L "${PKGS[@]}" | sort -u >/tmp/package-files

log "DKMS built and installed the module for $KVER"
assert_contains "$(dkms status -m "$DKMS_NAME" -v "$DKMS_VERSION" -k "$KVER")" \
	"$DKMS_NAME/$DKMS_VERSION, $KVER, x86_64: installed" "dkms status"
assert_eq "$(modinfo -n virtio_stellar)" "$DKMS_MOD" "modinfo -n virtio_stellar"
assert_eq "$(installed_modules)" "$DKMS_MOD" "virtio_stellar modules after dpkg -i"
assert_contains "$(modinfo -F alias virtio_stellar)" "rdma-link-stellar" \
	"the module's aliases"
assert_eq "$(cat "$DRIVER")" "driver stellar" "$DRIVER"
[ -f "$PROVIDER" ] || fail "$PROVIDER not installed"
assert_eq "$(command -v stellar-tool)" /usr/sbin/stellar-tool "stellar-tool in PATH"

log "the units"
assert_ok systemd-analyze verify stellar-link@veth1.service \
	stellar-monitor.service
[ -z "$ASSERT_OUTPUT" ] || fail "systemd-analyze verify: $ASSERT_OUTPUT"

log "rdma link add loads the module by its alias"
! stellar_loaded || fail "virtio_stellar loaded before rdma link add"
veth_pair veth0 veth0p 10.60.0.1/24
rdma link add stellar0 type stellar netdev veth0 ||
	fail "rdma link add stellar0 without a prior modprobe failed"
stellar_loaded || fail "virtio_stellar not loaded after rdma link add"
# The loaded module's GNU build ID (the note in sysfs ends with it) is the
# DKMS-built file's.
file_id=$(readelf -n "$DKMS_MOD" | awk '/Build ID:/ { print $3 }')
[ -n "$file_id" ] || fail "no build ID in $DKMS_MOD"
loaded_note=$(od -An -tx1 -v /sys/module/virtio_stellar/notes/.note.gnu.build-id |
	tr -d ' \n')
case "$loaded_note" in
*"$file_id") log "the loaded module is $DKMS_MOD (build ID $file_id)" ;;
*) fail "the loaded module's build ID note $loaded_note is not $DKMS_MOD's $file_id" ;;
esac
G=$(gid_index stellar0 10.60.0.1)
wait_for 15 ib_port_state_is stellar0 PORT_ACTIVE

log "traffic through the packaged provider"
pingpong 64 18701
pingpong 16384 18702

log "stellar-tool and stellar-monitor from the package"
out=$(stellar-tool status --device stellar0)
assert_contains "$out" "  netdev: veth0 (ifindex " "stellar-tool status"
assert_contains "$out" "  port_state: ACTIVE" "stellar-tool status"
out=$(stellar-monitor --once --device stellar0)
tx=$(echo "$out" | awk '/^stellar_tx_bytes_total\{device="stellar0"/ { print $2 }')
[ -n "$tx" ] || fail "stellar-monitor: no stellar_tx_bytes_total of stellar0"
[ "$tx" -gt $((2 * 200 * 16384)) ] ||
	fail "stellar-monitor: stellar_tx_bytes_total of stellar0 is '$tx', expected more than the pingpongs sent"

log "stellar-link, the boot-time unit's helper"
veth_pair veth1 veth1p 10.61.0.1/24
"$LINK_HELPER" up veth1 || fail "stellar-link up veth1 failed"
assert_contains "$(rdma_link_line stellar_veth1)" " netdev veth1" \
	"rdma link show of stellar_veth1"
"$LINK_HELPER" up veth1 || fail "stellar-link up veth1 a second time failed"
assert_fails "$LINK_HELPER" up veth0 stellar_veth1
assert_contains "$ASSERT_OUTPUT" "stellar_veth1 exists and runs over 'veth1', not veth0" \
	"stellar-link up on another netdev"
assert_fails "$LINK_HELPER" up veth1 rdma7
assert_contains "$ASSERT_OUTPUT" "device name 'rdma7' must start with 'stellar'" \
	"stellar-link up with a bad name"
"$LINK_HELPER" down veth1 || fail "stellar-link down veth1 failed"
rdma_link_gone stellar_veth1 || fail "stellar_veth1 still there after stellar-link down"
"$LINK_HELPER" down veth1 || fail "stellar-link down veth1 without a device failed"

rdma link delete stellar0
stellar_unload

log "DKMS's kernel hook installs the module for a kernel without it"
dkms uninstall -m "$DKMS_NAME" -v "$DKMS_VERSION" -k "$KVER" \
	>"$STELLAR_OUT/dkms-uninstall.log" 2>&1
assert_eq "$(installed_modules)" "" "virtio_stellar modules after dkms uninstall"
/etc/kernel/postinst.d/dkms "$KVER" >"$STELLAR_OUT/kernel-hook.log" 2>&1
assert_eq "$(installed_modules)" "$DKMS_MOD" "virtio_stellar modules after the kernel hook"
assert_eq "$(modinfo -n virtio_stellar)" "$DKMS_MOD" "modinfo -n after the kernel hook"

log "dpkg --purge ${PKGS[*]}"
dpkg --purge "${PKGS[@]}" >"$STELLAR_OUT/dpkg-purge.log" 2>&1 ||
	fail "dpkg --purge failed:"$'\n'"$(tail -30 "$STELLAR_OUT/dpkg-purge.log")"
for pkg in "${PKGS[@]}"; do
	! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q installed ||
		fail "$pkg still installed after dpkg --purge"
done
left=()
while read -r path; do
	# Directories other packages share (/usr, /etc/libibverbs.d, /lib
	# as a link to usr/lib...) stay.
	[ -d "$path" ] && continue
	[ ! -e "$path" ] && [ ! -L "$path" ] || left+=("$path")
done </tmp/package-files
for path in "${LEFTOVERS[@]}"; do
	[ ! -e "$path" ] || left+=("$path")
done
[ "${#left[@]}" = 0 ] || fail "left after dpkg --purge: ${left[*]}"
for dir in "/usr/src/$DKMS_NAME-$DKMS_VERSION" /usr/libexec/stellar \
	/usr/share/stellar "/usr/share/doc/${PKGS[0]}"; do
	[ ! -e "$dir" ] || fail "$dir left after dpkg --purge"
done
assert_eq "$(installed_modules)" "" "virtio_stellar modules after dpkg --purge"
assert_fails modinfo virtio_stellar
log "deploy_packages OK"
