/* SPDX-License-Identifier: GPL-2.0 */
/*
 * virtio-stellar: the interface between the verbs layer (queues, MRs,
 * AHs) and the RoCEv2 transport (requester, responder, completer).
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#ifndef STELLAR_TRANSPORT_H
#define STELLAR_TRANSPORT_H

#include <linux/skbuff.h>

#include "stellar.h"
#include "stellar_wire.h"

/*
 * Provided by the transport (stellar_req.c, stellar_resp.c, stellar_comp.c,
 * stellar_tx.c).  All may sleep unless noted.
 */

/* Module load/unload (after every device is gone). */
int stellar_xport_init(void);
void stellar_xport_exit(void);

/* Allocate/free qp->xport at create_qp/destroy_qp. */
int stellar_xport_create(struct stellar_qp *qp);
void stellar_xport_destroy(struct stellar_qp *qp);

/* modify_qp, before any attribute changes: allocate what @new_state needs. */
int stellar_xport_prepare(struct stellar_qp *qp, enum ib_qp_state new_state);

/*
 * Called by modify_qp with qp->state_lock held after qp->attr was updated
 * to the new attributes (@mask as given by the consumer).  Moving to ERR
 * must flush the send queue: every posted, uncompleted send WQE completes
 * with IB_WC_WR_FLUSH_ERR (the verbs layer flushes the receive queue).
 */
void stellar_xport_modify(struct stellar_qp *qp, int mask,
			  enum ib_qp_state old_state);

/* New send WQEs were published on qp->sq: schedule the requester. */
void stellar_xport_kick(struct stellar_qp *qp);
/* A process rang the doorbell: send now if the requester is idle. */
void stellar_xport_kick_inline(struct stellar_qp *qp);

/* destroy_qp: a UD QP sends what was posted before it goes to ERR. */
void stellar_xport_drain(struct stellar_qp *qp);

/*
 * A validated packet (BTH parsed into @pkt, ICRC checked) for the device.
 * Context: softirq, RCU held.  Takes ownership of @skb (skb->data points
 * at the BTH, skb->len covers the BTH up to and including the ICRC).
 */
void stellar_xport_rcv(struct stellar_dev *sdev, struct sk_buff *skb,
		       const struct stellar_pkt *pkt);

/*
 * Queue a packet for a QP the caller holds a reference on, or drop it.
 * Context: softirq or BH disabled.  Takes ownership of @skb.
 */
void stellar_xport_enqueue(struct stellar_qp *qp, struct sk_buff *skb,
			   const struct stellar_pkt *pkt);

/*
 * stellar_mcast.c: a packet with destination QPN STELLAR_MCAST_QPN, for
 * every QP attached to its multicast group.  Context as stellar_xport_rcv().
 */
void stellar_mcast_rcv(struct stellar_dev *sdev, struct sk_buff *skb,
		       const struct stellar_pkt *pkt);

/* stellar_net.c: the device a packet for this host is for (RCU held). */
struct stellar_dev *stellar_rx_dev_rcu(struct sk_buff *skb);

struct seq_file;
/* Print the QP's transport counters (one "name: value" per line). */
void stellar_xport_show(struct seq_file *m, struct stellar_qp *qp);
/* Receives one named counter; a non-zero return stops the walk. */
typedef int (*stellar_stat_fn)(void *arg, const char *name, u64 value);
int stellar_xport_walk_stats(struct stellar_qp *qp, stellar_stat_fn fn,
				void *arg);

/*
 * Provided by the verbs layer for the transport.
 */

/* Look a QP up by number and take a reference; NULL if there is none. */
struct stellar_qp *stellar_qp_get(struct stellar_dev *sdev, u32 qpn);
struct stellar_qp *stellar_qp_get_next(struct stellar_dev *sdev,
				       unsigned long *index);
void stellar_qp_put(struct stellar_qp *qp);
void stellar_qp_event(struct stellar_qp *qp, enum ib_event_type type);
bool stellar_qp_error_if(struct stellar_qp *qp,
			 bool (*still_wanted)(struct stellar_qp *qp));

/* A READ or atomic: its response lands in the WQE's SGEs. */
static inline bool stellar_wr_is_rd_atomic(u8 opcode)
{
	return opcode == IB_WR_RDMA_READ ||
	       opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
	       opcode == IB_WR_ATOMIC_FETCH_AND_ADD;
}

/**
 * stellar_sq_fetch() - copy a send WQE out of the send ring
 * @qp: the QP
 * @index: free-running index, between qp->sq_consumer and the producer
 * @wqe: receives the fixed part followed by its SGEs or inline data
 *	 (qp->sq.entry_size bytes of room)
 *
 * Validates the copy of what a process may have written: opcode allowed
 * for the QP type (and only kernel QPs may post IB_WR_REG_MR and
 * IB_WR_LOCAL_INV), num_sge, inline length, no inline READ or atomic.  The ring entry may change at
 * any time: the caller fetches each WQE once and then uses only its copy.
 *
 * Return: 0, -ENOENT if @index is not published yet, -EINVAL if the WQE
 * is malformed (complete it with IB_WC_LOC_QP_OP_ERR; @wqe->wr_id and
 * @wqe->opcode are copied all the same).
 */
int stellar_sq_fetch(struct stellar_qp *qp, u32 index,
		     struct stellar_sq_wqe *wqe);

/* Send WQEs published and not yet retired: producer - qp->sq_consumer. */
u32 stellar_sq_pending(struct stellar_qp *qp);

/* Retire the oldest @count send WQEs (after their completions). */
void stellar_sq_retire(struct stellar_qp *qp, u32 count);

/**
 * stellar_rq_take() - take the next receive WQE (QP's RQ or its SRQ)
 * @qp: the QP
 * @wqe: receives a validated copy
 *
 * Return: 0, -ENOENT if none is posted (RNR), -EINVAL if malformed.
 */
int stellar_rq_take(struct stellar_qp *qp, struct stellar_recv_wqe *wqe);

/**
 * stellar_cq_post() - add a completion to a CQ and signal its consumer
 * @cq: the CQ
 * @cqe: the completion (for kernel CQs, reserved1 is set to the QP)
 * @solicited: the message carried the solicited-event bit
 *
 * Context: any.
 */
void stellar_cq_post(struct stellar_cq *cq, struct stellar_cqe *cqe,
		     bool solicited);
bool stellar_cq_post_quiet(struct stellar_cq *cq, struct stellar_cqe *cqe,
			   bool solicited);
void stellar_cq_signal(struct stellar_cq *cq);

/* Direction of a memory copy, seen from the MR. */
enum stellar_copy_dir {
	STELLAR_COPY_FROM_MR,	/* MR memory -> buffer */
	STELLAR_COPY_TO_MR,	/* buffer -> MR memory */
};

/**
 * stellar_mr_copy() - copy between a buffer and a registered region
 * @pd: the PD the key must belong to
 * @key: lkey, or rkey of a region or a memory window
 * @remote: the QP a peer's request came in on (@key is an rkey; check
 *	    remote access rights), or NULL for a local access
 * @iova: first address in the region
 * @buf: kernel buffer
 * @len: bytes
 * @dir: direction
 * @access: IB_ACCESS_* rights required (0 for local reads)
 *
 * Return: 0, -EACCES (unknown key, wrong PD, missing rights, invalidated)
 * or -EFAULT (range outside the region).  Context: may sleep.
 */
int stellar_mr_copy(struct stellar_pd *pd, u32 key,
		    const struct stellar_qp *remote, u64 iova, void *buf,
		    u32 len, enum stellar_copy_dir dir, int access);

/**
 * stellar_mr_check_remote() - may a peer access a range of a region now
 * @pd: the PD the request's keys belong to: its QP's, or for an XRC
 *	target QP that of the XRC SRQ the request names
 * @qp: the QP the request came in on
 * @rkey: the R_Key
 * @iova: first address
 * @len: bytes (0: always allowed)
 * @access: IB_ACCESS_REMOTE_* rights required
 *
 * Return: 0, -EACCES or -EFAULT as stellar_mr_copy() would.
 */
int stellar_mr_check_remote(struct stellar_pd *pd, const struct stellar_qp *qp,
			    u32 rkey, u64 iova, u32 len, int access);

/**
 * stellar_sgl_copy() - copy between a buffer and part of an SGE list
 * @pd: the PD of the QP
 * @sge: the list
 * @num_sge: its length
 * @offset: first byte of the list's concatenated buffers
 * @buf: kernel buffer
 * @len: bytes
 * @dir: direction
 *
 * SGEs use lkeys; copying into them needs IB_ACCESS_LOCAL_WRITE.
 *
 * Return: 0, -EACCES, -EFAULT, or -EMSGSIZE if the list is too short.
 */
int stellar_sgl_copy(struct stellar_pd *pd, const struct stellar_sge *sge,
		     u32 num_sge, u64 offset, void *buf, u32 len,
		     enum stellar_copy_dir dir);

/* Total bytes of an SGE list (u64: cannot overflow). */
u64 stellar_sgl_length(const struct stellar_sge *sge, u32 num_sge);

/**
 * stellar_mr_atomic() - an 8-byte remote atomic on a registered region
 * @pd: the PD the request's key belongs to (stellar_mr_check_remote())
 * @qp: the QP the request came in on
 * @rkey: remote key (needs IB_ACCESS_REMOTE_ATOMIC)
 * @iova: 8-byte aligned address
 * @is_cmp_swap: compare-and-swap, else fetch-and-add
 * @compare_add: compare value or addend
 * @swap: swap value
 * @orig: receives the original value
 *
 * Return: 0, -EACCES, -EFAULT, or -EINVAL for misalignment.
 */
int stellar_mr_atomic(struct stellar_pd *pd, const struct stellar_qp *qp,
		      u32 rkey, u64 iova, bool is_cmp_swap, u64 compare_add,
		      u64 swap, u64 *orig);
int stellar_mr_atomic_write(struct stellar_pd *pd, const struct stellar_qp *qp,
			    u32 rkey, u64 iova, u64 value);

/* Fast registration (kernel QPs only) and invalidation. */
int stellar_mr_fast_reg(struct stellar_pd *pd, struct ib_mr *ibmr, u32 key,
			int access);
int stellar_mr_invalidate(struct stellar_pd *pd, u32 key,
			  const struct stellar_qp *remote);

/**
 * stellar_mw_bind() - bind, rebind or unbind a memory window
 * @qp: the QP whose send queue held the bind
 * @wqe: the kernel's copy of the WQE (u.bind)
 *
 * Return: 0, -EINVAL (not a window of the QP's PD, a bad key, a bad
 * range or rights) or -EACCES (the region does not allow it).
 * Context: process, may sleep.
 */
int stellar_mw_bind(struct stellar_qp *qp, const struct stellar_sq_wqe *wqe);

/**
 * stellar_ah_av() - the address vector of an AH, for a UD send
 * @qp: the sending QP; the AH must belong to its PD
 * @handle: stellar_sq_wqe.u.ud.ah_handle
 * @av: receives a copy
 *
 * Return: 0 or -EINVAL (no such AH for this QP).
 */
int stellar_ah_av(struct stellar_qp *qp, u32 handle, struct stellar_av *av);

#endif /* STELLAR_TRANSPORT_H */
