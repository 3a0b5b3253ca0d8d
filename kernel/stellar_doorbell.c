// SPDX-License-Identifier: GPL-2.0
/*
 * virtio-stellar: the doorbell poller.
 *
 * With db_poll_interval > 0 a per-device thread watches the send rings of
 * user QPs every db_poll_interval microseconds and kicks the requester when
 * a producer counter moved, so a process can post sends without a system
 * call.  While it watches a ring it sets STELLAR_RING_POLLED in the ring's
 * flags; after STELLAR_DB_IDLE_POLLS empty passes it clears the flags and
 * sleeps until the next system-call doorbell, so an idle device costs no
 * CPU.
 *
 * Polling only pays when the poller has a CPU to itself: on a single-CPU
 * machine it would have to preempt the application (which usually spins
 * in poll_cq) before it saw a doorbell, adding a scheduler tick to every
 * send.  There the poller stays asleep and processes ring the system-call
 * doorbell, whatever db_poll_interval says.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/kthread.h>

#include "stellar.h"
#include "stellar_transport.h"

/* Empty passes before the poller goes to sleep. */
#define STELLAR_DB_IDLE_POLLS	2000

static bool stellar_db_watched(struct stellar_qp *qp)
{
	return qp->is_user && READ_ONCE(qp->attr.qp_state) == IB_QPS_RTS;
}

/* One pass over the user QPs; returns true if any send ring moved. */
static bool stellar_db_scan(struct stellar_dev *sdev, bool polled)
{
	struct stellar_qp *qp;
	unsigned long index;
	bool moved = false;
	u32 producer;

	for (index = 0; (qp = stellar_qp_get_next(sdev, &index)); index++) {
		if (!stellar_db_watched(qp)) {
			stellar_qp_put(qp);
			continue;
		}
		WRITE_ONCE(qp->sq.ring->flags, polled ? STELLAR_RING_POLLED : 0);
		/* order the flag store before re-reading the producer */
		smp_mb();
		producer = stellar_queue_producer(&qp->sq);
		if (producer != qp->db_seen) {
			qp->db_seen = producer;
			stellar_xport_kick(qp);
			moved = true;
		}
		stellar_qp_put(qp);
	}
	return moved;
}

/* The poll period in microseconds, 0 if the device must not poll. */
static u32 stellar_db_interval(struct stellar_dev *sdev)
{
	if (num_online_cpus() < 2)
		return 0;
	return READ_ONCE(sdev->settings.db_poll_interval);
}

static bool stellar_db_should_wake(struct stellar_dev *sdev)
{
	return kthread_should_stop() ||
	       (stellar_db_interval(sdev) && READ_ONCE(sdev->db_wake));
}

/* Stop watching; returns false if a ring moved meanwhile. */
static bool stellar_db_sleep(struct stellar_dev *sdev)
{
	if (stellar_db_scan(sdev, false))
		return false;
	wait_event_interruptible(sdev->db_wait, stellar_db_should_wake(sdev));
	WRITE_ONCE(sdev->db_wake, false);
	return true;
}

static int stellar_db_thread(void *data)
{
	struct stellar_dev *sdev = data;
	unsigned int idle = 0;
	u32 interval;

	while (!kthread_should_stop()) {
		interval = stellar_db_interval(sdev);
		if (!interval || idle >= STELLAR_DB_IDLE_POLLS) {
			stellar_db_sleep(sdev);
			idle = 0;
			continue;
		}
		if (stellar_db_scan(sdev, true))
			idle = 0;
		else
			idle++;
		usleep_range(interval, interval + interval / 4 + 1);
	}
	stellar_db_scan(sdev, false);
	return 0;
}

/**
 * stellar_db_wake() - a system-call doorbell rang: resume polling
 * @sdev: device
 */
void stellar_db_wake(struct stellar_dev *sdev)
{
	if (!stellar_db_interval(sdev) || !sdev->db_thread)
		return;
	WRITE_ONCE(sdev->db_wake, true);
	wake_up(&sdev->db_wait);
}

/**
 * stellar_db_start() - start a device's doorbell poller (asleep)
 * @sdev: device
 * @name: the device's name, for the thread's
 *
 * Return: 0 or a negative errno.
 */
int stellar_db_start(struct stellar_dev *sdev, const char *name)
{
	struct task_struct *thread;

	init_waitqueue_head(&sdev->db_wait);
	thread = kthread_run(stellar_db_thread, sdev, "stellar_db/%s", name);
	if (IS_ERR(thread))
		return PTR_ERR(thread);
	sdev->db_thread = thread;
	return 0;
}

void stellar_db_stop(struct stellar_dev *sdev)
{
	if (sdev->db_thread)
		kthread_stop(sdev->db_thread);
	sdev->db_thread = NULL;
}
