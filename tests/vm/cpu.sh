# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# cpu_sampler OUT PID: until killed or process PID ends, every half
# second a line "seconds busy" to OUT: the clock, and the share (0..1) of
# all CPUs that were busy over the half second before (/proc/stat).
# run-tests.sh runs it on the host for fabric tests (the shared dir's
# host-cpu), the fabric's router VM in itself (router-cpu); guests read
# them with cpu_busy (tests/vm/fabric.sh).  Every emulator shares the
# host's CPUs, and perftest's busy polling keeps them all busy, so
# host-cpu is near 100% whenever a rate is measured; the router's own
# share says whether the fabric's switches had the CPU time they needed.
cpu_sampler() {
	local out=$1 parent=$2 line prev_busy=0 prev_total=0 busy total v i

	: >"$out"
	while sleep 0.5 && kill -0 "$parent" 2>/dev/null; do
		read -r line </proc/stat
		busy=0 total=0 i=0
		# user nice system idle iowait irq softirq steal (guest time
		# is in user already)
		for v in ${line#cpu }; do
			i=$((i + 1))
			[ "$i" -le 8 ] || break
			total=$((total + v))
			[ "$i" = 4 ] || [ "$i" = 5 ] || busy=$((busy + v))
		done
		[ "$prev_total" = 0 ] || [ "$total" = "$prev_total" ] ||
			printf '%s %s\n' "$(date +%s.%N)" \
				"$(awk -v b=$((busy - prev_busy)) -v t=$((total - prev_total)) 'BEGIN { printf "%.3f", b / t }')" >>"$out"
		prev_busy=$busy prev_total=$total
	done
}
