#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# Boot test VMs for debugging.
#
#   tests/vm/shell.sh [--vms 1|2] [--links N] [-c COMMAND]
#   tests/vm/shell.sh --vms N --fabric K -c COMMAND
#
# Without -c: an interactive root shell on VM a's serial console (needs
# a terminal; Ctrl-A x quits qemu, "exit" powers off).  With --vms 2, VM b
# boots alongside, links configured, idle until VM a powers off.  In the
# shell, ". $STELLAR_REPO/tests/vm/lib.sh" gives the test helpers.
# With -c: run COMMAND (bash, with lib.sh sourced) in the VM(s) like a
# test and print its output.  With --fabric K, N hosts (2-8) with K
# uplinks each sit on a leaf-spine fabric (tests/vm/README.md); fabric.sh
# is sourced too and the fabric is up when COMMAND starts.

set -u

# shellcheck source=tests/vm/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

vms=1 links='' fabric=0 command=''
while [ $# -gt 0 ]; do
	case "$1" in
	--vms) vms=$2; shift ;;
	--links) links=$2; shift ;;
	--fabric) fabric=$2; shift ;;
	-c) command=$2; shift ;;
	-h | --help) sed -n '6,19p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
	*) die "unknown argument: $1" ;;
	esac
	shift
done
if [ "$fabric" != 0 ]; then
	[ -n "$command" ] || die "a fabric needs -c COMMAND (no interactive shell)"
	links=$fabric
else
	case "$vms" in
	1) links=0 ;;
	2) links=${links:-1} ;;
	*) die "--vms must be 1 or 2 (more on a fabric: --fabric K)" ;;
	esac
fi
[ "$(id -u)" = 0 ] || die "run as root"

if [ -n "$command" ]; then
	mkdir -p "$VM_BUILD"
	script=$(mktemp "$VM_BUILD/shell-cmd.XXXXXX")
	trap 'rm -f "$script"' EXIT
	{
		printf '#!/bin/bash\n. "$STELLAR_REPO/tests/vm/lib.sh"\n'
		[ "$fabric" = 0 ] ||
			printf '. "$STELLAR_REPO/tests/vm/fabric.sh"\nfabric_up\n'
		printf '%s\n' "$command"
	} >"$script"
	"$VM_DIR/run-tests.sh" --verbose --vms "$vms" --links "$links" \
		--fabric "$fabric" --timeout "${STELLAR_SHELL_TIMEOUT:-600}" \
		"$script"
	exit
fi

[ -t 0 ] || die "interactive mode needs a terminal; use -c COMMAND"
dir=$VM_BUILD/shell/$(date +%Y%m%d-%H%M%S)-$$
mkdir -p "$dir/shared"
port_base=0
[ "$links" -gt 0 ] && port_base=$(vm_port_base "$links")
trap vm_kill_all EXIT
vm_initramfs "$(vm_kernel_version)" >/dev/null || exit 2
echo "logs: $dir"
# barrier and get_val wait for every role in STELLAR_ROLES
ROLES=$([ "$vms" = 2 ] && echo "a b" || echo a)
for role in a b; do
	index=$([ "$role" = a ] && echo 1 || echo 2)
	[ "$index" -le "$vms" ] || break
	mkdir -p "$dir/vm-$role"
	vm_write_config "$dir" "$role" "$index" "$vms" "$links" 0 ""
done
if [ "$vms" = 2 ]; then
	vm_start b 2 "$dir" "$links" "$port_base" idle "$dir/vm-b/serial.log"
fi
mapfile -t args < <(vm_qemu_args a 1 "$dir" "$links" "$port_base" shell stdio)
"${args[@]}"
