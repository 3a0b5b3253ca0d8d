#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
"""Markdown tables from bench/profile-guest.sh's perf reports.

Usage: profile-report.py GUEST_LOG DRIVER...

GUEST_LOG holds vm-a/ and vm-b/ with DRIVER.{a,b}.{flat,comm}.txt and
vm-b/profile_DRIVER.log (the perftest client's output).
"""

import os
import re
import sys

LINE = re.compile(r'^\s*([\d.]+)%\s+(\S+)\s+(\S+)\s+\[(.)\]\s+(\S+)')

# The kinds of work, in the report's order.  A sample is of the first
# kind whose pattern its function's name matches; user space and
# virtio_net are told by where the function lives.  cpu-clock samples
# are taken by a timer interrupt, so the time a CPU runs with interrupts
# off is charged to the place where they come back on: the irqs-off kind.
IDLE = 'idle'
USER = 'process (user space)'
NET = 'network stack and NIC driver'
OTHER = 'other kernel'
SYMBOL_KINDS = [
    (IDLE, r'(safe_halt|default_idle|cpuidle|do_idle|^poll_idle)'),
    ('driver (virtio_stellar, rdma_rxe)', r'^(stellar_|rxe_|__rxe_)'),
    ('RDMA core (ib_core, ib_uverbs)', r'^(ib_|rdma_|uverbs|__ib_)'),
    ('irqs-off sections (charged where irqs come back on)',
     r'^_raw_spin_unlock_irq'),
    ('copies, checksums, zeroing',
     r'(mem(cpy|move|set)|copy_|clear_page|crc32|csum|'
     r'rep_movs|rep_stos|_copy$|^loop_(16|64)$)'),
    ('memory allocation',
     r'(kmem_cache|kmalloc|kfree|kvfree|kvmalloc|slab|alloc_pages|'
     r'free_pages|free_unref|page_frag|get_page_from_freelist|rmqueue|'
     r'__alloc_skb|skb_release|skb_free_head|consume_skb|kfree_skb|'
     r'build_skb|napi_alloc|__napi_alloc|skb_attempt_defer|page_pool)'),
    (NET,
     r'^(ip_|ip6_|udp|__udp|__ip|dev_|__dev_|sch_|net_|'
     r'__netif|netif|napi|virtnet|virtqueue|vp_|start_xmit|'
     r'skb_|__skb|neigh|fib|dst_|__ip_|rt_|inet|eth_|'
     r'receive_buf|page_to_skb|detach_buf|free_old_xmit|'
     r'validate_xmit|raw_|icmp|tcp_|__tcp|'
     r'packet_|__dev|process_backlog|gro_|__napi|'
     r'iptunnel|setup_udp|udp_tunnel)'),
    ('system calls and interrupts',
     r'(syscall|^__x64_sys|^__x86|entry_|^do_sys|^ksys_|irq|'
     r'^asm_|^sysvec|^common_interrupt|^handle_edge|^apic)'),
    ('scheduling, work queues, softirq',
     r'(schedule|finish_task_switch|pick_next|enqueue|dequeue|'
     r'wake_up|try_to_wake|ttwu|queue_work|process_one_work|'
     r'worker_thread|kthread|update_curr|update_load|softirq|'
     r'hrtimer|tick_|switch_to|__switch|context_switch|'
     r'select_task|set_next|put_prev|check_preempt|'
     r'rcu_|_raw_spin_lock|mutex_|__mutex|ktime_get)'),
]
SYMBOL_KINDS = [(k, re.compile(p)) for k, p in SYMBOL_KINDS]
KIND_NAMES = [IDLE, USER] + [k for k, _ in SYMBOL_KINDS[1:]] + [OTHER]


def kind_of(dso, user, sym):
    if SYMBOL_KINDS[0][1].search(sym):
        return IDLE
    if user:
        return USER
    if dso == '[virtio_net]':
        return NET
    for name, pattern in SYMBOL_KINDS[1:]:
        if pattern.search(sym):
            return name
    return OTHER


def read_flat(path):
    """[(percent, comm, dso, user, symbol)] of a --sort comm,dso,sym
    report."""
    rows = []
    if not os.path.exists(path):
        return rows
    with open(path, encoding='utf-8', errors='replace') as f:
        for line in f:
            m = LINE.match(line)
            if m:
                rows.append((float(m.group(1)), m.group(2), m.group(3),
                             m.group(4) == '.', m.group(5)))
    return rows


def read_comm(path):
    rows = []
    if not os.path.exists(path):
        return rows
    with open(path, encoding='utf-8', errors='replace') as f:
        for line in f:
            m = re.match(r'^\s*([\d.]+)%\s+(.+?)\s*$', line)
            if m and not line.startswith('#'):
                rows.append((float(m.group(1)), m.group(2)))
    return rows


def perftest_line(path):
    if not os.path.exists(path):
        return 'no perftest log'
    hdr = False
    with open(path, encoding='utf-8', errors='replace') as f:
        for line in f:
            if '#bytes' in line:
                hdr = True
                continue
            fields = line.split()
            if hdr and len(fields) >= 4 and fields[0].isdigit():
                return ' '.join(fields)
    return 'no result line'


def kinds_table(log, drivers):
    cols = [(d, 'b') for d in drivers]
    sums = {}
    for d, vm in cols:
        acc = {}
        for pct, comm, dso, user, sym in read_flat(
                os.path.join(log, 'vm-' + vm, '%s.%s.flat.txt' % (d, vm))):
            k = kind_of(dso, user, sym)
            acc[k] = acc.get(k, 0.0) + pct
        sums[(d, vm)] = acc
    names = KIND_NAMES
    print('Share of the VM\'s CPU samples, percent (perf lists functions'
          ' with 0.02% or more; the rest is the last row):')
    print()
    print('| Work | ' + ' | '.join('%s, VM %s' % c for c in cols) + ' |')
    print('|---|' + '---:|' * len(cols))
    for k in names:
        print('| %s | ' % k + ' | '.join(
            '%.1f' % sums[c].get(k, 0.0) for c in cols) + ' |')
    print('| functions under 0.02% | ' + ' | '.join(
        '%.1f' % max(0.0, 100.0 - sum(sums[c].values())) for c in cols)
          + ' |')
    print('| busy (not idle) | ' + ' | '.join(
        '%.1f' % (100.0 - sums[c].get(IDLE, 0.0))
        for c in cols) + ' |')
    print()


def top_table(log, driver, vm, count=15):
    rows = read_flat(os.path.join(log, 'vm-' + vm,
                                  '%s.%s.flat.txt' % (driver, vm)))
    rows = [r for r in rows if kind_of(*r[2:]) != IDLE]
    comms = read_comm(os.path.join(log, 'vm-' + vm,
                                   '%s.%s.comm.txt' % (driver, vm)))
    print('%s, VM %s: busiest functions; by task: %s' % (
        driver, vm, ', '.join('%s %.1f%%' % (c, p)
                              for p, c in comms[:5])))
    print()
    print('| % | Function | Task | Where | Work |')
    print('|---:|---|---|---|---|')
    for pct, comm, dso, user, sym in rows[:count]:
        print('| %.1f | `%s` | %s | %s | %s |' % (
            pct, sym, comm, dso, kind_of(dso, user, sym)))
    print()


def main():
    log = sys.argv[1]
    drivers = sys.argv[2:]
    print('VM a serves, VM b runs the perftest client under perf;'
          ' perftest\'s result line:')
    print()
    for d in drivers:
        print('- %s: `%s`' % (d, perftest_line(
            os.path.join(log, 'vm-b', 'profile_%s.log' % d))))
    print()
    for d in drivers:
        path = os.path.join(log, 'vm-b', '%s.b.flat.txt' % d)
        if not read_flat(path):
            sys.exit('profile-report.py: no samples in %s' % path)
    kinds_table(log, drivers)
    for d in drivers:
        top_table(log, d, 'b', 25)


if __name__ == '__main__':
    main()
