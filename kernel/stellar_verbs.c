// SPDX-License-Identifier: GPL-2.0
/*
 * virtio-stellar: device, port, context and PD verbs and the ops table.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <linux/ethtool.h>
#include <linux/rtnetlink.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_mad.h>
#include <rdma/uverbs_ioctl.h>

#define UVERBS_MODULE_NAME stellar_ib
#include <rdma/uverbs_named_ioctl.h>

#include "stellar.h"

/*
 * Every transport operation works on memory pinned on demand (PVDMA), and
 * an on-demand MR may cover the whole address space (implicit ODP).
 */
static void stellar_query_odp(struct ib_device_attr *attr)
{
	u32 rc = IB_ODP_SUPPORT_SEND | IB_ODP_SUPPORT_RECV |
		 IB_ODP_SUPPORT_WRITE | IB_ODP_SUPPORT_READ |
		 IB_ODP_SUPPORT_ATOMIC;

	attr->kernel_cap_flags |= IBK_ON_DEMAND_PAGING;
	attr->odp_caps.general_caps = IB_ODP_SUPPORT | IB_ODP_SUPPORT_IMPLICIT;
	attr->odp_caps.per_transport_caps.rc_odp_caps = rc;
	attr->odp_caps.per_transport_caps.uc_odp_caps =
		IB_ODP_SUPPORT_SEND | IB_ODP_SUPPORT_RECV | IB_ODP_SUPPORT_WRITE;
	attr->odp_caps.per_transport_caps.ud_odp_caps =
		IB_ODP_SUPPORT_SEND | IB_ODP_SUPPORT_RECV;
}

static int stellar_query_device(struct ib_device *ibdev,
				struct ib_device_attr *attr,
				struct ib_udata *udata)
{
	if (udata->inlen || udata->outlen)
		return -EINVAL;

	memset(attr, 0, sizeof(*attr));
	attr->fw_ver = STELLAR_FW_VERSION;
	attr->vendor_id = STELLAR_VENDOR_ID;
	attr->sys_image_guid = ibdev->node_guid;
	attr->max_mr_size = STELLAR_MAX_MR_SIZE;
	attr->page_size_cap = PAGE_SIZE;
	attr->max_qp = stellar_limit_max_qp(to_sdev(ibdev));
	attr->max_qp_wr = STELLAR_MAX_QP_WR;
	attr->device_cap_flags = IB_DEVICE_RC_RNR_NAK_GEN |
				 IB_DEVICE_SYS_IMAGE_GUID |
				 IB_DEVICE_PORT_ACTIVE_EVENT |
				 IB_DEVICE_MEM_MGT_EXTENSIONS |
				 IB_DEVICE_MEM_WINDOW |
				 IB_DEVICE_MEM_WINDOW_TYPE_2B |
				 IB_DEVICE_XRC;
	attr->kernel_cap_flags = IBK_ALLOW_USER_UNREG;
	attr->max_send_sge = STELLAR_MAX_SGE;
	attr->max_recv_sge = STELLAR_MAX_SGE;
	attr->max_sge_rd = STELLAR_MAX_SGE_RD;
	attr->max_cq = STELLAR_MAX_CQ;
	attr->max_cqe = STELLAR_MAX_CQE;
	/* CQE timestamps count CLOCK_MONOTONIC nanoseconds. */
	attr->hca_core_clock = STELLAR_CORE_CLOCK_KHZ;
	attr->timestamp_mask = U64_MAX;
	attr->max_mr = stellar_limit_max_mr(to_sdev(ibdev));
	/* Windows share the key table, and its limit, with regions. */
	attr->max_mw = attr->max_mr;
	attr->max_pd = STELLAR_MAX_PD;
	attr->max_qp_rd_atom = STELLAR_MAX_RD_ATOM;
	attr->max_qp_init_rd_atom = STELLAR_MAX_RD_ATOM;
	attr->max_res_rd_atom = STELLAR_MAX_RD_ATOM * attr->max_qp;
	attr->atomic_cap = IB_ATOMIC_HCA;
	attr->max_ah = STELLAR_MAX_AH;
	attr->max_srq = STELLAR_MAX_SRQ;
	attr->max_srq_wr = STELLAR_MAX_SRQ_WR;
	attr->max_srq_sge = STELLAR_MAX_SGE;
	attr->max_pkeys = STELLAR_PKEY_TBL_LEN;
	attr->local_ca_ack_delay = STELLAR_LOCAL_ACK_DELAY;
	attr->max_fast_reg_page_list_len = STELLAR_MAX_FAST_REG_PAGES;
	attr->max_mcast_grp = STELLAR_MAX_MCAST_GRP;
	attr->max_mcast_qp_attach = STELLAR_MAX_MCAST_QP_ATTACH;
	attr->max_total_mcast_qp_attach = STELLAR_MAX_TOTAL_MCAST_QP_ATTACH;
	stellar_query_odp(attr);
	return 0;
}

/*
 * IB speed and width pairs, slowest first, by the data rate they signal
 * in Mb/s: a port reports the fastest one its netdev's speed reaches.
 */
static const struct {
	u32 mbps;
	u16 speed;
	u8 width;
} stellar_rates[] = {
	{ 2500, IB_SPEED_SDR, IB_WIDTH_1X },
	{ 5000, IB_SPEED_DDR, IB_WIDTH_1X },
	{ 10000, IB_SPEED_QDR, IB_WIDTH_1X },
	{ 14000, IB_SPEED_FDR, IB_WIDTH_1X },
	{ 20000, IB_SPEED_DDR, IB_WIDTH_4X },
	{ 25000, IB_SPEED_EDR, IB_WIDTH_1X },
	{ 40000, IB_SPEED_QDR, IB_WIDTH_4X },
	{ 50000, IB_SPEED_HDR, IB_WIDTH_1X },
	{ 56000, IB_SPEED_FDR, IB_WIDTH_4X },
	{ 100000, IB_SPEED_EDR, IB_WIDTH_4X },
	{ 200000, IB_SPEED_HDR, IB_WIDTH_4X },
	{ 400000, IB_SPEED_NDR, IB_WIDTH_4X },
	{ 800000, IB_SPEED_NDR, IB_WIDTH_8X },
};

/* The netdev's link speed in Mb/s, or 0 if it has none (or is going). */
static u32 stellar_ndev_speed(struct net_device *ndev)
{
	struct ethtool_link_ksettings ks;
	u32 speed = 0;

	rtnl_lock();
	if (ndev->reg_state == NETREG_REGISTERED &&
	    !__ethtool_get_link_ksettings(ndev, &ks) &&
	    ks.base.speed != (u32)SPEED_UNKNOWN)
		speed = ks.base.speed;
	rtnl_unlock();
	return speed;
}

/**
 * stellar_port_speed() - the speed and width a port reports
 * @sdev: device
 * @speed: set to an IB_SPEED_*
 * @width: set to an IB_WIDTH_*
 *
 * The fastest pair whose rate the netdev's speed reaches (ethtool link
 * settings: veth reports 10000 Mb/s, a bond the sum of its active
 * links).  A netdev that knows no speed (virtio-net without
 * VIRTIO_NET_F_SPEED_DUPLEX, and any netdev going away) counts as
 * STELLAR_DEFAULT_SPEED Mb/s: a paravirtual link has no physical rate,
 * and that is what veth reports and a software RoCE path reaches.
 */
static void stellar_port_speed(struct stellar_dev *sdev, u16 *speed,
			       u8 *width)
{
	u32 mbps = stellar_ndev_speed(sdev->ndev) ?: STELLAR_DEFAULT_SPEED;
	int i;

	*speed = stellar_rates[0].speed;
	*width = stellar_rates[0].width;
	for (i = 1; i < ARRAY_SIZE(stellar_rates); i++) {
		if (mbps < stellar_rates[i].mbps)
			break;
		*speed = stellar_rates[i].speed;
		*width = stellar_rates[i].width;
	}
}

static int stellar_query_port(struct ib_device *ibdev, u32 port_num,
			      struct ib_port_attr *attr)
{
	struct stellar_dev *sdev = to_sdev(ibdev);

	/* The core zeroes *attr before calling. */
	attr->state = stellar_port_state(sdev);
	if (attr->state == IB_PORT_ACTIVE)
		attr->phys_state = IB_PORT_PHYS_STATE_LINK_UP;
	else if (netif_running(sdev->ndev))
		attr->phys_state = IB_PORT_PHYS_STATE_POLLING;
	else
		attr->phys_state = IB_PORT_PHYS_STATE_DISABLED;
	attr->max_mtu = IB_MTU_4096;
	attr->active_mtu = iboe_get_mtu(READ_ONCE(sdev->ndev->mtu));
	attr->gid_tbl_len = STELLAR_GID_TBL_LEN;
	attr->port_cap_flags = IB_PORT_CM_SUP;
	attr->max_msg_sz = STELLAR_MAX_MSG_SIZE;
	attr->pkey_tbl_len = STELLAR_PKEY_TBL_LEN;
	attr->max_vl_num = 1;
	attr->ip_gids = true;
	stellar_port_speed(sdev, &attr->active_speed, &attr->active_width);
	return 0;
}

static int stellar_query_pkey(struct ib_device *ibdev, u32 port_num,
			      u16 index, u16 *pkey)
{
	if (index >= STELLAR_PKEY_TBL_LEN)
		return -EINVAL;
	*pkey = STELLAR_DEFAULT_PKEY;
	return 0;
}

static int stellar_get_port_immutable(struct ib_device *ibdev, u32 port_num,
				      struct ib_port_immutable *immutable)
{
	immutable->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	immutable->pkey_tbl_len = STELLAR_PKEY_TBL_LEN;
	immutable->gid_tbl_len = STELLAR_GID_TBL_LEN;
	immutable->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

static enum rdma_link_layer stellar_get_link_layer(struct ib_device *ibdev,
						   u32 port_num)
{
	return IB_LINK_LAYER_ETHERNET;
}

static const struct stellar_alloc_ucontext_resp stellar_ucontext_resp = {
	.abi_version = STELLAR_UVERBS_ABI_VERSION,
	.max_inline_data = STELLAR_MAX_INLINE_DATA,
	.caps = STELLAR_UCTX_CAP_MMAP_QUEUES,
};

static int stellar_alloc_ucontext(struct ib_ucontext *ibuc,
				  struct ib_udata *udata)
{
	struct stellar_alloc_ucontext_resp resp = stellar_ucontext_resp;

	return ib_copy_to_udata(udata, &resp,
				min_t(size_t, udata->outlen, sizeof(resp)));
}

/*
 * UVERBS_METHOD_QUERY_CONTEXT: what alloc_ucontext said, for a process
 * that imports the context (ibv_import_device()) from another one.
 */
static int stellar_query_ucontext(struct ib_ucontext *ibuc,
				  struct uverbs_attr_bundle *attrs)
{
	int ret = uverbs_copy_to(attrs, STELLAR_ATTR_QUERY_CONTEXT_RESP_UCTX,
				 &stellar_ucontext_resp,
				 sizeof(stellar_ucontext_resp));

	return IS_UVERBS_COPY_ERR(ret) ? ret : 0;
}

/* STELLAR_METHOD_PD_QUERY: the number of a PD given by its handle. */
static int UVERBS_HANDLER(STELLAR_METHOD_PD_QUERY)(
	struct uverbs_attr_bundle *attrs)
{
	struct ib_pd *pd = uverbs_attr_get_obj(attrs,
					       STELLAR_ATTR_QUERY_PD_HANDLE);
	u32 pdn;

	if (IS_ERR(pd))
		return PTR_ERR(pd);
	pdn = to_spd(pd)->pdn;
	return uverbs_copy_to(attrs, STELLAR_ATTR_QUERY_PD_RESP_PDN, &pdn,
			      sizeof(pdn));
}

DECLARE_UVERBS_NAMED_METHOD(
	STELLAR_METHOD_PD_QUERY,
	UVERBS_ATTR_IDR(STELLAR_ATTR_QUERY_PD_HANDLE, UVERBS_OBJECT_PD,
			UVERBS_ACCESS_READ, UA_MANDATORY),
	UVERBS_ATTR_PTR_OUT(STELLAR_ATTR_QUERY_PD_RESP_PDN,
			    UVERBS_ATTR_TYPE(u32), UA_MANDATORY));

ADD_UVERBS_METHODS(stellar_pd_methods, UVERBS_OBJECT_PD,
		   &UVERBS_METHOD(STELLAR_METHOD_PD_QUERY));

ADD_UVERBS_ATTRIBUTES_SIMPLE(
	stellar_query_context_attrs,
	UVERBS_OBJECT_DEVICE,
	UVERBS_METHOD_QUERY_CONTEXT,
	UVERBS_ATTR_PTR_OUT(STELLAR_ATTR_QUERY_CONTEXT_RESP_UCTX,
			    UVERBS_ATTR_STRUCT(struct stellar_alloc_ucontext_resp,
					       reserved),
			    UA_OPTIONAL));

/* The driver's ioctl methods and attributes (include/uapi/stellar-abi.h). */
static const struct uapi_definition stellar_uapi_defs[] = {
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_DEVICE,
				&stellar_query_context_attrs),
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_PD, &stellar_pd_methods),
	{},
};

/**
 * stellar_verbs_set_uapi() - give a device the driver's ioctl definitions
 * @ibdev: the device, before it is registered
 */
void stellar_verbs_set_uapi(struct ib_device *ibdev)
{
	ibdev->driver_def = stellar_uapi_defs;
}

static void stellar_dealloc_ucontext(struct ib_ucontext *ibuc)
{
}

/**
 * stellar_disassociate_ucontext() - cut a live process off the device
 * @ibuc: the process's context
 *
 * The RDMA core calls this when it takes the device away from processes
 * that still use it: moving the device to another network namespace
 * ("rdma dev set NAME netns NS", exclusive mode), the namespace's exit,
 * unregistration.  Having the op is what lets the core do that; by the
 * time it runs the core has destroyed every object of the context with
 * the driver's destroy verbs (QPs off the doorbell poller and idle, MRs
 * unpinned and their PVDMA state dropped) and zapped every ring mapping
 * (stellar_mmap() registers them with its tracking).  The context owns
 * nothing else the kernel could still reach, so nothing is left to do.
 */
static void stellar_disassociate_ucontext(struct ib_ucontext *ibuc)
{
}

static int stellar_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct stellar_dev *sdev = to_sdev(ibpd->device);
	struct stellar_alloc_pd_resp resp = {};
	int ret;

	ret = stellar_obj_count_get(&sdev->num_pds, STELLAR_MAX_PD);
	if (ret)
		return ret;
	to_spd(ibpd)->pdn = atomic_inc_return(&sdev->pd_serial);
	if (!udata)
		return 0;
	resp.pdn = to_spd(ibpd)->pdn;
	ret = ib_copy_to_udata(udata, &resp,
			       min_t(size_t, udata->outlen, sizeof(resp)));
	if (ret)
		atomic_dec(&sdev->num_pds);
	return ret;
}

static int stellar_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	atomic_dec(&to_sdev(ibpd->device)->num_pds);
	return 0;
}

/*
 * An XRC domain holds nothing in the driver: it is what an XRC SRQ and
 * the XRC target QPs that may use it have in common.  Domains count
 * against max_pd, as the verbs advertise no limit of their own.
 */
static int stellar_alloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata)
{
	return stellar_obj_count_get(&to_sdev(ibxrcd->device)->num_pds,
				     STELLAR_MAX_PD);
}

static int stellar_dealloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata)
{
	atomic_dec(&to_sdev(ibxrcd->device)->num_pds);
	return 0;
}

static void stellar_get_dev_fw_str(struct ib_device *ibdev, char *str)
{
	snprintf(str, IB_FW_VERSION_NAME_MAX, "%u.%u.%u",
		 STELLAR_FW_MAJOR(STELLAR_FW_VERSION),
		 STELLAR_FW_MINOR(STELLAR_FW_VERSION),
		 STELLAR_FW_SUB(STELLAR_FW_VERSION));
}

const struct ib_device_ops stellar_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_UNKNOWN,
	.uverbs_abi_ver = STELLAR_UVERBS_ABI_VERSION,

	.advise_mr = stellar_advise_mr,
	.alloc_hw_device_stats = stellar_alloc_hw_device_stats,
	.alloc_hw_port_stats = stellar_alloc_hw_port_stats,
	.alloc_mr = stellar_alloc_mr,
	.alloc_mw = stellar_alloc_mw,
	.alloc_pd = stellar_alloc_pd,
	.alloc_ucontext = stellar_alloc_ucontext,
	.alloc_xrcd = stellar_alloc_xrcd,
	.attach_mcast = stellar_attach_mcast,
	.create_ah = stellar_create_ah,
	.create_cq = stellar_create_cq,
	.create_qp = stellar_create_qp,
	.create_srq = stellar_create_srq,
	.create_user_ah = stellar_create_ah,
	.dealloc_driver = stellar_dealloc_driver,
	.dealloc_mw = stellar_dealloc_mw,
	.dealloc_pd = stellar_dealloc_pd,
	.dealloc_ucontext = stellar_dealloc_ucontext,
	.dealloc_xrcd = stellar_dealloc_xrcd,
	.dereg_mr = stellar_dereg_mr,
	.disassociate_ucontext = stellar_disassociate_ucontext,
	.destroy_ah = stellar_destroy_ah,
	.destroy_cq = stellar_destroy_cq,
	.destroy_qp = stellar_destroy_qp,
	.destroy_srq = stellar_destroy_srq,
	.detach_mcast = stellar_detach_mcast,
	.fill_res_cq_entry = stellar_fill_res_cq_entry,
	.fill_res_mr_entry = stellar_fill_res_mr_entry,
	.fill_res_qp_entry = stellar_fill_res_qp_entry,
	.get_dev_fw_str = stellar_get_dev_fw_str,
	.get_hw_stats = stellar_get_hw_stats,
	.get_dma_mr = stellar_get_dma_mr,
	.get_link_layer = stellar_get_link_layer,
	.get_port_immutable = stellar_get_port_immutable,
	.map_mr_sg = stellar_map_mr_sg,
	.mmap = stellar_mmap,
	.mmap_free = stellar_mmap_free,
	.modify_qp = stellar_modify_qp,
	.modify_srq = stellar_modify_srq,
	.poll_cq = stellar_poll_cq,
	.post_recv = stellar_post_recv,
	.post_send = stellar_post_send,
	.post_srq_recv = stellar_post_srq_recv,
	.query_device = stellar_query_device,
	.query_pkey = stellar_query_pkey,
	.query_port = stellar_query_port,
	.query_qp = stellar_query_qp,
	.query_srq = stellar_query_srq,
	.query_ucontext = stellar_query_ucontext,
	.reg_user_mr = stellar_reg_user_mr,
	.req_notify_cq = stellar_req_notify_cq,
	.rereg_user_mr = stellar_rereg_user_mr,
	.resize_cq = stellar_resize_cq,

	INIT_RDMA_OBJ_SIZE(ib_ah, stellar_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_cq, stellar_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_mw, stellar_mw, ibmw),
	INIT_RDMA_OBJ_SIZE(ib_pd, stellar_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, stellar_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_srq, stellar_srq, ibsrq),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, stellar_ucontext, ibuc),
	INIT_RDMA_OBJ_SIZE(ib_xrcd, stellar_xrcd, ibxrcd),
};
