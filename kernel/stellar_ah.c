// SPDX-License-Identifier: GPL-2.0
/*
 * virtio-stellar: address handles and address vectors.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <rdma/ib_cache.h>
#include <rdma/uverbs_ioctl.h>

#include "stellar.h"
#include "stellar_transport.h"

/**
 * stellar_av_from_ah_attr() - resolve an address into what transmit needs
 * @attr: a RoCE address (GRH with a source GID entry, destination MAC)
 * @av: filled in
 *
 * Return: 0, or -EINVAL for addresses that are not RoCEv2.
 */
int stellar_av_from_ah_attr(const struct rdma_ah_attr *attr,
			    struct stellar_av *av)
{
	const struct ib_global_route *grh;
	enum rdma_network_type type;

	if (!(rdma_ah_get_ah_flags(attr) & IB_AH_GRH))
		return -EINVAL;
	grh = rdma_ah_read_grh(attr);
	if (!grh->sgid_attr)
		return -EINVAL;
	type = rdma_gid_attr_network_type(grh->sgid_attr);
	if (type != RDMA_NETWORK_IPV4 && type != RDMA_NETWORK_IPV6)
		return -EINVAL;

	memset(av, 0, sizeof(*av));
	av->sgid = grh->sgid_attr->gid;
	av->dgid = grh->dgid;
	ether_addr_copy(av->dmac, attr->roce.dmac);
	av->network_type = type;
	av->hop_limit = grh->hop_limit;
	av->traffic_class = grh->traffic_class;
	av->flow_label = grh->flow_label;
	av->valid = true;
	return 0;
}

int stellar_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		      struct ib_udata *udata)
{
	struct stellar_dev *sdev = to_sdev(ibah->device);
	struct stellar_create_ah_resp resp = {};
	struct stellar_ah *ah = to_sah(ibah);
	gfp_t gfp = init->flags & RDMA_CREATE_AH_SLEEPABLE ? GFP_KERNEL :
							     GFP_ATOMIC;
	int ret;

	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;
	ret = stellar_av_from_ah_attr(init->ah_attr, &ah->av);
	if (ret)
		return ret;
	ret = xa_alloc_irq(&sdev->ahs, &ah->handle, ah,
			   XA_LIMIT(1, STELLAR_MAX_AH), gfp);
	if (ret)
		return ret == -EBUSY ? -ENOMEM : ret;
	if (udata) {
		resp.ah_handle = ah->handle;
		ret = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (ret) {
			xa_erase_irq(&sdev->ahs, ah->handle);
			return ret;
		}
	}
	return 0;
}

/*
 * A process may post datagrams and destroy their address handle at once:
 * mckey's sender does, since a NIC has copied the address into its WQEs
 * by then.  Here the requester reads the handle when it sends, so before
 * a process's AH goes, the UD QPs of its PD send what they have posted
 * (stellar_xport_drain(): at most one round per ring slot).  This walks
 * the device's QPs: destroying a user AH costs O(QPs), which UD users,
 * who keep an AH per peer, do rarely.
 */
static void stellar_ah_drain_users(struct stellar_ah *ah)
{
	struct stellar_dev *sdev = to_sdev(ah->ibah.device);
	unsigned long index = 0;
	struct stellar_qp *qp;

	while ((qp = stellar_qp_get_next(sdev, &index))) {
		if (qp->ibqp.pd == ah->ibah.pd &&
		    qp->ibqp.qp_type == IB_QPT_UD) {
			mutex_lock(&qp->state_lock);
			stellar_xport_drain(qp);
			mutex_unlock(&qp->state_lock);
		}
		stellar_qp_put(qp);
		index++;
	}
}

int stellar_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	struct stellar_ah *ah = to_sah(ibah);
	unsigned long irqflags;

	if (ibah->uobject && (flags & RDMA_DESTROY_AH_SLEEPABLE))
		stellar_ah_drain_users(ah);
	xa_lock_irqsave(&to_sdev(ibah->device)->ahs, irqflags);
	__xa_erase(&to_sdev(ibah->device)->ahs, ah->handle);
	xa_unlock_irqrestore(&to_sdev(ibah->device)->ahs, irqflags);
	return 0;
}

int stellar_ah_av(struct stellar_qp *qp, u32 handle, struct stellar_av *av)
{
	struct stellar_dev *sdev = to_sdev(qp->ibqp.device);
	struct stellar_ah *ah;
	unsigned long flags;
	int ret = -EINVAL;

	xa_lock_irqsave(&sdev->ahs, flags);
	ah = xa_load(&sdev->ahs, handle);
	if (ah && ah->ibah.pd == qp->ibqp.pd) {
		*av = ah->av;
		ret = 0;
	}
	xa_unlock_irqrestore(&sdev->ahs, flags);
	return ret;
}
