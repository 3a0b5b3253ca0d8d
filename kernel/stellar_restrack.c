// SPDX-License-Identifier: GPL-2.0
/*
 * virtio-stellar: driver detail for "rdma resource show qp|cq|mr -dd".
 *
 * The RDMA core's nldev asks the driver to add attributes to each QP, CQ
 * and MR it reports (ib_device_ops fill_res_*_entry) but tells it nothing
 * about the requester.  It runs in the requester's context, though (a
 * doit in its sendmsg, a dump in its sendmsg or recvmsg), so the
 * credentials of current are the requester's: QP detail that helps inject
 * packets into a connection (PSNs, the peer's QPN, source ports) and the
 * QP's counters go only to CAP_NET_ADMIN in the device's network
 * namespace, as for /proc/stellar/<dev>/qps (Documentation/threat-model.rst).
 * stellar_query_qp() hides the same from the core's own attributes.
 *
 * Nothing here takes a lock of the data path: every field is read once.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <linux/capability.h>
#include <rdma/restrack.h>
#include <rdma/rdma_netlink.h>

#include "stellar_mem.h"
#include "stellar_transport.h"
#include "stellar_xport.h"

/**
 * stellar_may_see_qp_detail() - may the current task see per-QP detail?
 * @sdev: the device
 *
 * Return: true for CAP_NET_ADMIN in the user namespace owning the network
 * namespace of @sdev's netdev.
 */
bool stellar_may_see_qp_detail(struct stellar_dev *sdev)
{
	return ns_capable_noaudit(dev_net(sdev->ndev)->user_ns, CAP_NET_ADMIN);
}

/* What anyone who may list the QP may see. */
static int stellar_res_qp_public(struct sk_buff *msg, struct stellar_qp *qp)
{
	struct stellar_qp_xport *xp = qp->xport;
	u32 paths = stellar_xport_spray_paths(xp);

	if (rdma_nl_put_driver_string(msg, "state",
				      stellar_qp_state_name(READ_ONCE(qp->attr.qp_state))) ||
	    rdma_nl_put_driver_u32(msg, "spray_paths", paths) ||
	    rdma_nl_put_driver_u32(msg, "wire_ext", READ_ONCE(xp->x_on)) ||
	    rdma_nl_put_driver_u32(msg, "srtt_us",
				   stellar_peek(xp->srtt_us)) ||
	    rdma_nl_put_driver_u32(msg, "rttvar_us",
				   stellar_peek(xp->rttvar_us)))
		return -EMSGSIZE;
	return 0;
}

static int stellar_res_put_counter(void *arg, const char *name, u64 value)
{
	return rdma_nl_put_driver_u64(arg, name, value);
}

/* PSNs, the peer's QPN and the QP's counters: CAP_NET_ADMIN only. */
static int stellar_res_qp_private(struct sk_buff *msg, struct stellar_qp *qp)
{
	struct stellar_qp_xport *xp = qp->xport;

	if (rdma_nl_put_driver_u32(msg, "dest_qpn",
				   READ_ONCE(qp->attr.dest_qp_num)) ||
	    rdma_nl_put_driver_u32(msg, "sq_psn",
				   stellar_peek(xp->sq_psn)) ||
	    rdma_nl_put_driver_u32(msg, "una_psn",
				   stellar_peek(xp->una_psn)) ||
	    rdma_nl_put_driver_u32(msg, "epsn",
				   stellar_peek(xp->win.epsn)))
		return -EMSGSIZE;
	return stellar_xport_walk_stats(qp, stellar_res_put_counter, msg);
}

/**
 * stellar_fill_res_qp_entry() - driver attributes of a QP (restrack)
 * @msg: the nldev message
 * @ibqp: the QP
 *
 * Return: 0 or -EMSGSIZE.
 */
int stellar_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp)
{
	struct stellar_qp *qp = to_sqp(ibqp);
	struct nlattr *nest;

	if (!qp->xport)
		return 0;
	nest = nla_nest_start_noflag(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!nest)
		return -EMSGSIZE;
	if (stellar_res_qp_public(msg, qp) ||
	    (stellar_may_see_qp_detail(to_sdev(ibqp->device)) &&
	     stellar_res_qp_private(msg, qp))) {
		nla_nest_cancel(msg, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, nest);
	return 0;
}

/**
 * stellar_fill_res_cq_entry() - driver attributes of a CQ (restrack)
 * @msg: the nldev message
 * @ibcq: the CQ
 *
 * Return: 0 or -EMSGSIZE.
 */
int stellar_fill_res_cq_entry(struct sk_buff *msg, struct ib_cq *ibcq)
{
	struct stellar_cq *cq = to_scq(ibcq);
	struct nlattr *nest;

	nest = nla_nest_start_noflag(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!nest)
		return -EMSGSIZE;
	if (rdma_nl_put_driver_u32(msg, "ring_entries", cq->queue.num_entries) ||
	    rdma_nl_put_driver_u32(msg, "producer",
				   stellar_peek(cq->producer)) ||
	    rdma_nl_put_driver_u32(msg, "overflowed",
				   stellar_peek(cq->overflowed)) ||
	    rdma_nl_put_driver_u32(msg, "user", cq->is_user)) {
		nla_nest_cancel(msg, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, nest);
	return 0;
}

/**
 * stellar_fill_res_mr_entry() - driver attributes of an MR (restrack)
 * @msg: the nldev message
 * @ibmr: the MR
 *
 * User MRs (PVDMA) report the bytes pinned now and the chunks pinned on
 * first access; DMA and fast-registration MRs pin nothing of their own.
 *
 * Return: 0 or -EMSGSIZE.
 */
int stellar_fill_res_mr_entry(struct sk_buff *msg, struct ib_mr *ibmr)
{
	struct stellar_mr *mr = to_smr(ibmr);
	struct stellar_pvdma_mr *pm = mr->pvdma;
	const char *kind = pm ? "pvdma" : mr->is_dma ? "dma" : "fast_reg";
	struct nlattr *nest;

	nest = nla_nest_start_noflag(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!nest)
		return -EMSGSIZE;
	if (rdma_nl_put_driver_string(msg, "kind", kind) ||
	    (pm && (rdma_nl_put_driver_u64(msg, "pinned_bytes",
					   (u64)READ_ONCE(pm->pinned_pages) << PAGE_SHIFT) ||
		    rdma_nl_put_driver_u64(msg, "faults",
					   READ_ONCE(pm->faults))))) {
		nla_nest_cancel(msg, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, nest);
	return 0;
}
