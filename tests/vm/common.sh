# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# Host-side helpers of the VM test harness, sourced by run-tests.sh and
# shell.sh.  Nothing here runs inside a guest.
#
# Environment knobs (all optional):
#   STELLAR_KVER        kernel version to boot (default: newest
#                       /boot/vmlinuz-6.1.*-amd64)
#   STELLAR_VM_MEM      memory per VM (qemu -m, default 1024)
#   STELLAR_VM_SMP      vCPUs per VM (qemu -smp, default 1)
#   STELLAR_KO          the module the guests load (default: kernel/'s)
#   STELLAR_RACE_KO     verbs_lifetime's race module (default: the one
#                       next to STELLAR_KO's tree, else tests/kmod/'s)
#   STELLAR_MEMDEBUG    1: every test boots with SLUB debugging and page
#                       poisoning, also those whose header says
#                       memdebug=off
#   STELLAR_SLUB_DEBUG  the slub_debug flags of that debugging (default
#                       FZP; FZPU adds the allocation and free stacks
#                       to SLUB's reports, see below)
#   STELLAR_VM_ACCEL    qemu accelerator (default tcg)
#   STELLAR_VM_CPU      qemu -cpu model (default max,-erms,-fsrm; see below)
#   STELLAR_VM_ICOUNT   qemu -icount options (default none): guest time
#                       from the instruction count, for CPU-bound benches
#   STELLAR_VM_BUILD    build/cache dir (default tests/vm/.build)
#   STELLAR_PORT_BASE   first UDP port of the inter-VM links (default
#                       derived from the runner's PID)
#   STELLAR_BOOT_SLACK  seconds allowed for boot + shutdown on top of a
#                       test's timeout before the host kills the VMs
#   STELLAR_BOOT_LIMIT  seconds (times STELLAR_TIMEOUT_SCALE) a test's VMs
#                       have to reach their init (default 120); past it
#                       a boot counts as stalled (run-tests.sh)
#   STELLAR_FABRIC_HOST_NICE  nice value of a fabric's host VMs (default
#                       5; the router VM runs at the runner's own)

VM_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
REPO=$(cd "$VM_DIR/../.." && pwd -P)
# shellcheck source=tests/vm/cpu.sh
. "$VM_DIR/cpu.sh"
VM_BUILD=${STELLAR_VM_BUILD:-$VM_DIR/.build}
VM_MEM=${STELLAR_VM_MEM:-1024}
VM_SMP=${STELLAR_VM_SMP:-1}
# What VM_MEM and VM_SMP go back to for tests whose header sets neither.
# shellcheck disable=SC2034 # used by run-tests.sh
DEFAULT_VM_MEM=$VM_MEM
# shellcheck disable=SC2034 # used by run-tests.sh
DEFAULT_VM_SMP=$VM_SMP
VM_ACCEL=${STELLAR_VM_ACCEL:-tcg}
# TCG runs "rep movsb/stosb" a byte per step: with ERMS or FSRM the guest
# kernel copies and clears memory (memcpy, copy_to_user, clear_page) that
# way, 4-5 times slower here than with the "rep movsq" it uses without
# them (dd from /dev/zero: 4.4 s against 0.9 s for 3 GB).
VM_CPU=${STELLAR_VM_CPU:-max,-erms,-fsrm}
VM_ICOUNT=${STELLAR_VM_ICOUNT:-}
VM_SLUB_DEBUG=${STELLAR_SLUB_DEBUG:-FZP}
case "$VM_SLUB_DEBUG" in
'' | *[!A-Z-]*)
	echo "STELLAR_SLUB_DEBUG: slub_debug flags are letters (FZPU)" >&2
	exit 2
	;;
esac
# shellcheck disable=SC2034 # used by run-tests.sh
BOOT_SLACK=${STELLAR_BOOT_SLACK:-120}
# shellcheck disable=SC2034 # used by run-tests.sh
BOOT_LIMIT=${STELLAR_BOOT_LIMIT:-120}
# Attempts of a test whose guest NIC stalls or that does not boot
# shellcheck disable=SC2034 # used by run-tests.sh
ATTEMPTS=${STELLAR_ATTEMPTS:-3}

# Modules the initramfs loads, in this order, before mounting the root.
# Dependencies found with modinfo are added in front of their users.
INITRAMFS_MODULES="virtio_ring virtio virtio_pci_legacy_dev
	virtio_pci_modern_dev virtio_pci netfs fscache 9pnet 9pnet_virtio
	9p overlay"

# Kernel log lines that fail a test.  "Call Trace:" is on the list on its
# own: any stack dump (WARN, BUG, allocation failure, hung task, lockdep)
# is a defect worth a red test, even when its headline is not known here.
KLOG_BAD_PATTERNS=(
	'BUG:' 'WARNING:' 'Oops' 'soft lockup' 'hard LOCKUP' 'hung task'
	'blocked for more than' 'refcount_t:' 'list_add corruption'
	'list_del corruption' 'general protection fault' 'KASAN' 'UBSAN'
	'kernel BUG' 'Call Trace:' 'RIP:' 'Kernel panic'
	'Poison overwritten' 'Redzone overwritten' 'Padding overwritten'
	'Object already free' 'Freepointer corrupt' 'Wrong object count'
	'memory corruption' 'unreferenced object' 'suspected memory leak'
	'leak detector disabled' 'kmemleak_object' 'Memory pool empty'
)

VM_PIDS=()

die() {
	echo "error: $*" >&2
	exit 2
}

# Version of the kernel the guests boot.
vm_kernel_version() {
	local newest

	if [ -n "${STELLAR_KVER:-}" ]; then
		echo "$STELLAR_KVER"
		return
	fi
	newest=$(ls /boot/vmlinuz-6.1.*-amd64 2>/dev/null | sort -V | tail -n 1)
	[ -n "$newest" ] || die "no /boot/vmlinuz-6.1.*-amd64 (apt-get install linux-image-amd64)"
	basename "$newest" | sed 's/^vmlinuz-//'
}

# Print MODULE and, before it, its dependencies (depth first, each once;
# SEEN_MODULES holds the ones already printed).
module_with_deps() {
	local kver=$1 name=$2 dep

	case " $SEEN_MODULES " in *" $name "*) return ;; esac
	for dep in $(modinfo -k "$kver" -F depends "$name" | tr ',' ' '); do
		module_with_deps "$kver" "$dep"
	done
	SEEN_MODULES="$SEEN_MODULES $name"
	echo "$name"
}

# Copy module NAME of kernel KVER into DEST/NAME.ko, decompressing it.
copy_module() {
	local kver=$1 name=$2 dest=$3 file

	file=$(modinfo -k "$kver" -n "$name") || die "module $name not found for $kver"
	case "$file" in
	"(builtin)") return 1 ;;
	*.ko) cp "$file" "$dest/$name.ko" ;;
	*.ko.xz) xz -dc "$file" >"$dest/$name.ko" ;;
	*.ko.zst) zstd -qdc "$file" >"$dest/$name.ko" ;;
	*.ko.gz) gzip -dc "$file" >"$dest/$name.ko" ;;
	*) die "unknown module format: $file" ;;
	esac
}

# Build (or reuse) the initramfs for KVER; prints its path.
vm_initramfs() {
	local kver=$1 out="$VM_BUILD/initramfs-$1.cpio.gz" stage name
	local inputs=("$VM_DIR/initramfs-init" "$VM_DIR/common.sh" /bin/busybox)

	mkdir -p "$VM_BUILD"
	if [ -s "$out" ] && [ -z "$(find "${inputs[@]}" -newer "$out")" ]; then
		echo "$out"
		return
	fi
	[ -x /bin/busybox ] || die "/bin/busybox missing (apt-get install busybox-static)"
	file -L /bin/busybox | grep -q 'statically linked' ||
		die "/bin/busybox is not static (apt-get install busybox-static)"
	stage=$(mktemp -d "$VM_BUILD/initramfs.XXXXXX")
	mkdir -p "$stage"/{bin,sbin,dev,proc,sys,lower,upper,newroot,modules}
	cp /bin/busybox "$stage/bin/busybox"
	mknod -m 600 "$stage/dev/console" c 5 1
	cp "$VM_DIR/initramfs-init" "$stage/init"
	chmod 755 "$stage/init"
	SEEN_MODULES=""
	for name in $INITRAMFS_MODULES; do
		module_with_deps "$kver" "$name"
	done >"$stage/modules/order"
	# A kernel of our own (make kasan) has some of them built in.
	for name in $(cat "$stage/modules/order"); do
		copy_module "$kver" "$name" "$stage/modules" || echo "$name"
	done >"$stage/modules/builtin"
	grep -vxF -f "$stage/modules/builtin" "$stage/modules/order" \
		>"$stage/modules/order.ko" || true
	mv "$stage/modules/order.ko" "$stage/modules/order"
	(cd "$stage" && find . | cpio -o -H newc --quiet | gzip -1) >"$out.tmp"
	mv "$out.tmp" "$out"
	rm -rf "$stage"
	echo "$out"
}

# True if UDP PORT on 127.0.0.1 has no socket bound to it.
udp_port_free() {
	! ss -Hunl "sport = :$1" 2>/dev/null | grep -q .
}

# Pick the first port base for NLINKS link pairs.  Deterministic from
# the runner's PID (or STELLAR_PORT_BASE), moved past ports in use.
vm_port_base() {
	local nlinks=$1 base port ok

	base=${STELLAR_PORT_BASE:-$((20000 + ($$ % 1000) * 32))}
	for _ in $(seq 1 64); do
		ok=1
		for port in $(seq "$base" $((base + 2 * nlinks - 1))); do
			udp_port_free "$port" || { ok=0; break; }
		done
		[ "$ok" = 1 ] && { echo "$base"; return; }
		base=$((base + 32))
		[ "$base" -gt 60000 ] && base=20000
	done
	die "no free UDP ports for $nlinks links"
}

# MAC address of the NIC of VM INDEX (1=a, 2=b) on link LINK.
vm_link_mac() {
	printf '52:54:00:5e:%02x:%02x\n' "$2" "$1"
}

# qemu -netdev/-device arguments for VM INDEX (1 or 2) of a pair.
vm_link_args() {
	local index=$1 nlinks=$2 port_base=$3 link mine peer

	for link in $(seq 1 "$nlinks"); do
		if [ "$index" = 1 ]; then
			mine=$((port_base + 2 * (link - 1)))
			peer=$((mine + 1))
		else
			peer=$((port_base + 2 * (link - 1)))
			mine=$((peer + 1))
		fi
		echo "-netdev socket,id=l$link,udp=127.0.0.1:$peer,localaddr=127.0.0.1:$mine"
		echo "-device virtio-net-pci,netdev=l$link,mac=$(vm_link_mac "$index" "$link")"
	done
}

# Fabric links (header fabric=K): uplink K of host INDEX (1=a, 2=b, ...)
# is a link of its own to the router VM, whose end has the MAC
# vm_fabric_mac INDEX K.  Link number J = (INDEX-1)*K_PER_HOST + K uses
# ports PORT_BASE+2(J-1) (host) and +1 (router).
vm_fabric_mac() {
	printf '52:54:00:6e:%02x:%02x\n' "$2" "$1"
}

# qemu -netdev/-device arguments of the fabric links of VM INDEX; INDEX
# "router" gives the router VM's end of every host's uplinks.
#   vm_fabric_link_args INDEX UPLINKS HOSTS PORT_BASE
vm_fabric_link_args() {
	local index=$1 uplinks=$2 hosts=$3 port_base=$4 host k port mac

	for host in $(seq 1 "$hosts"); do
		[ "$index" = router ] || [ "$index" = "$host" ] || continue
		for k in $(seq 1 "$uplinks"); do
			port=$((port_base + 2 * ((host - 1) * uplinks + k - 1)))
			if [ "$index" = router ]; then
				mac=$(vm_fabric_mac "$host" "$k")
				echo "-netdev socket,id=h${host}u$k,udp=127.0.0.1:$port,localaddr=127.0.0.1:$((port + 1))"
				echo "-device virtio-net-pci,netdev=h${host}u$k,mac=$mac"
			else
				echo "-netdev socket,id=l$k,udp=127.0.0.1:$((port + 1)),localaddr=127.0.0.1:$port"
				echo "-device virtio-net-pci,netdev=l$k,mac=$(vm_link_mac "$host" "$k")"
			fi
		done
	done
}

# Print the qemu command line (one argument per line) for a VM.
#   vm_qemu_args NAME INDEX SHARE_DIR NLINKS PORT_BASE MODE CONSOLE
# SHARE_DIR is the per-test rw dir (mounted at /stellar in the guest),
# MODE is test|shell|idle, CONSOLE is a file for the serial log or
# "stdio" for an interactive console.
vm_qemu_args() {
	local name=$1 index=$2 share=$3 nlinks=$4 port_base=$5 mode=$6
	local console=$7 kver initrd cmdline

	kver=$(vm_kernel_version)
	initrd=$(vm_initramfs "$kver") || exit 2
	cmdline="console=ttyS0 quiet loglevel=5 panic=-1 panic_on_warn=0"
	cmdline="$cmdline hung_task_panic=0 softlockup_panic=0"
	# On a loaded host the emulated timer can miss the IO-APIC check's
	# few ticks and the guest panics at boot ("IO-APIC + timer doesn't
	# work"); virtual machines skip that check.
	cmdline="$cmdline no_timer_check"
	# PCI interrupt routing through ACPI took 2 s per device class under
	# TCG (4 s of a 12 s boot); the BIOS tables route them as well.
	cmdline="$cmdline pci=noacpi"
	# make kasan's kernel with five-level paging met an early-boot KASAN
	# report (wild access at an LA57 address from the IRQ code during
	# CPU identification) under TCG's "-cpu max"; four levels avoid it.
	case "$kver" in
	*kasan*) cmdline="$cmdline no5lvl" ;;
	esac
	# The memory debugging Debian's kernel has (no KASAN/KFENCE there):
	# SLUB red zones, poisoning and free-pointer checks, pages poisoned
	# and zeroed when freed.  A report fails the test (KLOG_BAD_PATTERNS).
	# Under TCG it makes every allocation several times dearer, which
	# skews the link-share and rate checks of a few tests: those say
	# memdebug=off in their header, and STELLAR_MEMDEBUG=1 overrides it.
	# SLUB's user tracking (U: a stack walk on every allocation and
	# free) finds nothing the other flags do not, it only names the
	# last allocator and freer in a report, and it cost verbs_faults a
	# third of its time (223 s against 149): it is left to
	# STELLAR_SLUB_DEBUG=FZPU, to rerun a test whose report needs them.
	[ "${VM_MEMDEBUG:-on}" = on ] &&
		cmdline="$cmdline slub_debug=$VM_SLUB_DEBUG init_on_free=1 page_poison=1"
	cmdline="$cmdline rdinit=/init stellarvm.repo=$REPO"
	cmdline="$cmdline stellarvm.name=$name stellarvm.mode=$mode"
	printf '%s\n' qemu-system-x86_64 -accel "$VM_ACCEL" -cpu "$VM_CPU" \
		-m "$VM_MEM" -smp "$VM_SMP" -nodefaults -no-reboot \
		-display none -vga none \
		-kernel "/boot/vmlinuz-$kver" -initrd "$initrd" \
		-append "$cmdline" \
		-fsdev "local,id=root,path=/,security_model=none,readonly=on,multidevs=remap" \
		-device virtio-9p-pci,fsdev=root,mount_tag=hostroot \
		-fsdev "local,id=share,path=$share,security_model=none,multidevs=remap" \
		-device virtio-9p-pci,fsdev=share,mount_tag=stellar
	[ -z "$VM_ICOUNT" ] || printf '%s\n' -icount "$VM_ICOUNT"
	if [ "$console" = stdio ]; then
		printf '%s\n' -serial mon:stdio
	else
		printf '%s\n' -serial "file:$console" -monitor none
	fi
	if [ "${FABRIC_UPLINKS:-0}" -gt 0 ]; then
		vm_fabric_link_args "$index" "$FABRIC_UPLINKS" "$FABRIC_HOSTS" \
			"$port_base"
	else
		vm_link_args "$index" "$nlinks" "$port_base"
	fi | tr ' ' '\n'
}

# Start a VM in the background; its PID is appended to VM_PIDS.
vm_start() {
	local args prio=()

	mapfile -t args < <(vm_qemu_args "$@")
	[ "${#args[@]}" -gt 10 ] || die "could not build the qemu command line"
	# The router VM of a fabric stands for its switches, which hosts
	# cannot starve; but the hosts' perftests poll busily, and there are
	# more VMs than CPUs.  The host VMs yield to it.
	[ "${FABRIC_UPLINKS:-0}" -gt 0 ] && [ "$1" != fabric ] &&
		prio=(nice -n "${STELLAR_FABRIC_HOST_NICE:-5}")
	# The VM dies with the runner, even if the runner is SIGKILLed.
	setpriv --pdeathsig KILL -- "${prio[@]}" "${args[@]}" </dev/null \
		>"$3/vm-$1/qemu.log" 2>&1 &
	VM_PIDS+=($!)
}

# Kill every VM this shell started (used on timeout and from traps).
vm_kill_all() {
	local pid

	for pid in "${VM_PIDS[@]}"; do
		kill -TERM "$pid" 2>/dev/null
	done
	sleep 1
	for pid in "${VM_PIDS[@]}"; do
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	VM_PIDS=()
}

# vm_unbooted TESTDIR: the roles of TESTDIR's VMs whose init never
# started (it writes boot_seconds first).
vm_unbooted() {
	local dir

	for dir in "$1"/vm-*; do
		[ -e "$dir/boot_seconds" ] || echo "${dir##*/vm-}"
	done
}

# Wait for all VMs until DEADLINE (epoch seconds).  Returns 1 (after
# killing them) if the deadline passed.  With BOOT_DEADLINE and TESTDIR,
# returns 2 (after killing them) if by BOOT_DEADLINE a VM of TESTDIR had
# not reached its init: a boot that stalled (debug kernels on a loaded
# host can hang in timer calibration), not a test that failed.  With
# STOP_CHECK, a command run with TESTDIR every 5 s, returns 3 (after
# killing them) once it prints something.
vm_wait_all() {
	local deadline=$1 boot_deadline=${2:-} testdir=${3:-} stop_check=${4:-}
	local pid alive now next_check=0

	while :; do
		alive=0
		for pid in "${VM_PIDS[@]}"; do
			kill -0 "$pid" 2>/dev/null && alive=1
		done
		[ "$alive" = 0 ] && break
		now=$(date +%s)
		if [ "$now" -ge "$deadline" ]; then
			vm_kill_all
			return 1
		fi
		if [ -n "$boot_deadline" ] && [ "$now" -ge "$boot_deadline" ]; then
			if [ -n "$(vm_unbooted "$testdir")" ]; then
				vm_kill_all
				return 2
			fi
			boot_deadline=''
		fi
		if [ -n "$stop_check" ] && [ "$now" -ge "$next_check" ]; then
			next_check=$((now + 5))
			if [ -n "$("$stop_check" "$testdir")" ]; then
				vm_kill_all
				return 3
			fi
		fi
		sleep 0.5
	done
	for pid in "${VM_PIDS[@]}"; do
		wait "$pid" 2>/dev/null
	done
	VM_PIDS=()
	return 0
}

# Print kernel-log lines of FILE... that match a bad pattern, each as
# "file: line".
klog_bad_lines() {
	local args=() pattern

	for pattern in "${KLOG_BAD_PATTERNS[@]}"; do
		args+=(-e "$pattern")
	done
	grep -a -H -F "${args[@]}" "$@" 2>/dev/null
}

# Write the guest's config file for VM NAME (role) of a test.  ROLES
# (the host VMs' roles) and, on a fabric, FABRIC_UPLINKS, FABRIC_LEAVES,
# FABRIC_SPINES and FABRIC_RATE come from the caller's variables.
#   vm_write_config DIR NAME INDEX VMS LINKS TIMEOUT SCRIPT ARGS...
vm_write_config() {
	local dir=$1 name=$2 index=$3 vms=$4 links=$5 timeout=$6 script=$7

	shift 7
	{
		printf 'STELLAR_ROLE=%q\n' "$name"
		printf 'STELLAR_VM_INDEX=%q\n' "$index"
		printf 'STELLAR_VMS=%q\n' "$vms"
		printf 'STELLAR_LINKS=%q\n' "$links"
		printf 'STELLAR_ROLES=%q\n' "${ROLES:-$name}"
		printf 'STELLAR_FABRIC=%q\n' "${FABRIC_UPLINKS:-0}"
		printf 'STELLAR_FABRIC_LEAVES=%q\n' "${FABRIC_LEAVES:-0}"
		printf 'STELLAR_FABRIC_SPINES=%q\n' "${FABRIC_SPINES:-0}"
		printf 'STELLAR_FABRIC_RATE=%q\n' "${FABRIC_RATE:-}"
		printf 'STELLAR_FABRIC_RED=%q\n' "${STELLAR_FABRIC_RED:-}"
		printf 'STELLAR_FABRIC_CC=%q\n' "${STELLAR_FABRIC_CC:-}"
		printf 'STELLAR_TIMEOUT=%q\n' "$timeout"
		printf 'STELLAR_TIMEOUT_SCALE=%q\n' "${TIMEOUT_SCALE:-1}"
		printf 'STELLAR_LONG=%q\n' "${LONG:-1}"
		printf 'STELLAR_SCRIPT=%q\n' "$script"
		[ -z "${STELLAR_KO:-}" ] || printf 'STELLAR_KO=%q\n' "$STELLAR_KO"
		[ -z "${STELLAR_RACE_KO:-}" ] ||
			printf 'STELLAR_RACE_KO=%q\n' "$STELLAR_RACE_KO"
		# (printf with no arguments would still print one empty word)
		if [ $# -gt 0 ]; then
			printf 'STELLAR_ARGS=(%s)\n' "$(printf '%q ' "$@")"
		else
			printf 'STELLAR_ARGS=()\n'
		fi
	} >"$dir/vm-$name/config.env"
}
