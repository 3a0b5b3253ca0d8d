#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# Run one script (inside or outside the repo) in a VM or a VM pair and
# show its output as it runs; the verdict follows as with run-tests.sh
# (kernel log checks included).
#
#   tests/vm/run-vm.sh [--vms N] [--links N] [--timeout S] SCRIPT [ARGS...]
#
# The script runs as root in the guest with the harness environment
# (STELLAR_REPO, STELLAR_ROLE, ...); it may source tests/vm/lib.sh.
# Options default to the script's "# stellar-test:" header, else one VM
# and a 300 s timeout.

set -u

opts=()
while [ $# -gt 0 ]; do
	case "$1" in
	--vms | --links | --timeout | --results) opts+=("$1" "$2"); shift 2 ;;
	-h | --help) sed -n '6,15p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
	*) break ;;
	esac
done
[ $# -ge 1 ] || { echo "usage: $0 [--vms N] [--links N] [--timeout S] SCRIPT [ARGS...]" >&2; exit 2; }
script=$1
shift
exec "$(dirname "${BASH_SOURCE[0]}")/run-tests.sh" --verbose "${opts[@]}" \
	"$script" -- "$@"
