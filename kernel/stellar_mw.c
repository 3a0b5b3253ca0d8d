// SPDX-License-Identifier: GPL-2.0
/*
 * virtio-stellar: memory windows, type 1 and type 2.
 *
 * A window is an R_Key that opens part of a region for remote access with
 * rights of its own.  Its key entry sits in the device's key table beside
 * the regions' (stellar_mr.h), so that a peer's R_Key finds either; an
 * access through a window is checked against the window (rights, range,
 * and for type 2 the QP it is bound to) and then made to the region as its
 * owner would make it locally.
 *
 * Binds come from the send queue (IB_WR_BIND_MW: ibv_bind_mw() for type
 * 1, ibv_post_send() for type 2), in order with the QP's other work.  A
 * bind, an invalidation or freeing the window first fences its entry:
 * when it returns, no byte moves through the old binding.  The window
 * names its region by L_Key and registration serial, holding no reference:
 * the region refuses to go while windows are bound to it, and a window
 * whose region went anyway (a racing bind) opens nothing.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <rdma/uverbs_ioctl.h>

#include "stellar.h"
#include "stellar_mr.h"
#include "stellar_transport.h"

/* Rights a window can grant. */
#define STELLAR_MW_ACCESS	(IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE | \
				 IB_ACCESS_REMOTE_ATOMIC)
/* Rights that write into the region. */
#define STELLAR_MW_WRITES	(IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)

static_assert(sizeof_field(struct stellar_sq_wqe, u.bind) ==
	      sizeof_field(struct stellar_sq_wqe, u.raw));

int stellar_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct stellar_mw *mw = to_smw(ibmw);
	struct stellar_mr *key;
	int ret;

	if (ibmw->type != IB_MW_TYPE_1 && ibmw->type != IB_MW_TYPE_2)
		return -EINVAL;
	key = stellar_mr_alloc(ibmw->pd, 0);
	if (!key)
		return -ENOMEM;
	key->mw.type = ibmw->type;
	/* Unbound: the entry resolves but grants nothing. */
	ret = stellar_mr_publish(to_sdev(ibmw->device), key);
	if (ret) {
		kfree(key);
		return ret;
	}
	/* A window has no L_Key: no local access can name it. */
	key->ibmr.lkey = 0;
	ibmw->rkey = key->ibmr.rkey;
	mw->key = key;
	return 0;
}

/*
 * Forget the region @mw opens, if any; the region may have gone.
 * Context: sdev->mw_lock held, the window fenced.
 */
static void stellar_mw_unlink(struct stellar_mr *mw)
{
	struct stellar_mr *mr;

	if (!mw->mw.parent_key)
		return;
	mr = stellar_mr_get(to_spd(mw->ibmr.pd), mw->mw.parent_key);
	if (mr) {
		if (mr->serial == mw->mw.parent_serial)
			atomic_dec(&mr->mw_binds);
		stellar_mr_put(mr);
	}
	mw->mw.parent_key = 0;
	mw->mw.parent_serial = 0;
}

int stellar_dealloc_mw(struct ib_mw *ibmw)
{
	struct stellar_dev *sdev = to_sdev(ibmw->device);
	struct stellar_mr *key = to_smw(ibmw)->key;

	stellar_mr_unpublish(sdev, key);
	mutex_lock(&sdev->mw_lock);
	stellar_mw_unlink(key);
	mutex_unlock(&sdev->mw_lock);
	stellar_mr_free(sdev, key);
	return 0;
}

/* Is type 2 window @mw bound to @qp (not to an earlier QP of its QPN)? */
static bool stellar_mw_bound_to(const struct stellar_mr *mw,
				const struct stellar_qp *qp)
{
	return READ_ONCE(mw->mw.qpn) == qp->ibqp.qp_num &&
	       READ_ONCE(mw->mw.qp_serial) == qp->serial;
}

int stellar_mw_enter(struct stellar_key_use *use, struct stellar_pd *pd,
		     const struct stellar_qp *remote, u64 iova, u64 len,
		     int access)
{
	struct stellar_mr *mw = use->mr;
	int local = access & STELLAR_MW_WRITES ? IB_ACCESS_LOCAL_WRITE : 0;
	struct stellar_mr *mr;
	int ret;

	use->mw = mw;
	use->mr = NULL;
	if (mw->mw.type == IB_MW_TYPE_2 && !stellar_mw_bound_to(mw, remote))
		return -EACCES;
	mr = stellar_mr_get(pd, mw->mw.parent_key);
	if (!mr)
		return -EACCES;
	use->mr = mr;
	stellar_mr_copy_begin(mr);
	if (mr->mw.type || mr->serial != mw->mw.parent_serial)
		return -EACCES;
	ret = stellar_mr_check(mr, pd, mw->mw.parent_key, false, iova, len,
			       local);
	return ret;
}

/*
 * Is a bind of window @mw, posted on @qp, well formed?  The region is
 * checked separately.
 */
static int stellar_mw_bind_ok(struct stellar_mr *mw, struct stellar_qp *qp,
			      u32 mw_rkey, u32 new_rkey, u64 length,
			      u32 access)
{
	/* The index names the window; its PD is what protects it. */
	if (!mw->mw.type || mw->ibmr.pd != qp->ibqp.pd ||
	    stellar_key_index(new_rkey) != stellar_key_index(mw_rkey))
		return -EINVAL;
	if (access & ~STELLAR_MW_ACCESS)
		return -EINVAL;
	if (mw->mw.type == IB_MW_TYPE_2) {
		/* A bound type 2 window is invalidated before a new bind. */
		if (READ_ONCE(mw->valid) || !length)
			return -EINVAL;
	}
	return 0;
}

/* May window rights @access open [@addr, @addr + @length) of @mr? */
static int stellar_mw_region_ok(struct stellar_mr *mr, struct stellar_pd *pd,
				u32 lkey, u64 addr, u64 length, u32 access)
{
	if (mr->mw.type || mr->is_dma)
		return -EINVAL;
	if (stellar_mr_check(mr, pd, lkey, false, addr, length,
			     IB_ACCESS_MW_BIND))
		return -EACCES;
	if ((access & STELLAR_MW_WRITES) &&
	    !(mr->access & IB_ACCESS_LOCAL_WRITE))
		return -EACCES;
	return 0;
}

/* Make @mw grant @access to @mr's [@addr, @addr + @length) via @rkey. */
static void stellar_mw_set(struct stellar_mr *mw, struct stellar_mr *mr,
			   const struct stellar_qp *qp, u32 rkey, u64 addr,
			   u64 length, u32 access)
{
	stellar_mr_fence(mw);
	stellar_mw_unlink(mw);
	mw->ibmr.rkey = rkey;
	if (!mr)
		return;
	mw->iova = addr;
	mw->length = length;
	mw->access = access;
	mw->mw.qpn = mw->mw.type == IB_MW_TYPE_2 ? qp->ibqp.qp_num : 0;
	mw->mw.qp_serial = mw->mw.type == IB_MW_TYPE_2 ? qp->serial : 0;
	mw->mw.parent_key = mr->ibmr.lkey;
	mw->mw.parent_serial = mr->serial;
	atomic_inc(&mr->mw_binds);
	/* Release: an access that sees it valid sees the fields above. */
	smp_store_release(&mw->valid, true);
}

int stellar_mw_bind(struct stellar_qp *qp, const struct stellar_sq_wqe *wqe)
{
	struct stellar_dev *sdev = to_sdev(qp->ibqp.device);
	struct stellar_pd *pd = to_spd(qp->ibqp.pd);
	u32 mw_rkey = wqe->u.bind.mw_rkey, new_rkey = wqe->u.bind.new_rkey;
	u64 addr = wqe->u.bind.addr, length = wqe->u.bind.length;
	u32 access = wqe->u.bind.access;
	struct stellar_mr *mw, *mr = NULL;
	int ret;

	mw = stellar_mr_get(pd, mw_rkey);
	if (!mw)
		return -EINVAL;
	mutex_lock(&sdev->mw_lock);
	ret = stellar_mw_bind_ok(mw, qp, mw_rkey, new_rkey, length, access);
	if (ret || !length)
		goto out;
	mr = stellar_mr_get(pd, wqe->u.bind.mr_lkey);
	if (!mr) {
		ret = -EINVAL;
		goto out;
	}
	stellar_mr_copy_begin(mr);
	ret = stellar_mw_region_ok(mr, pd, wqe->u.bind.mr_lkey, addr, length,
				   access);
	stellar_mr_copy_end(mr);
out:
	/* A zero-length bind of a type 1 window unbinds it. */
	if (!ret)
		stellar_mw_set(mw, mr, qp, new_rkey, addr, length, access);
	mutex_unlock(&sdev->mw_lock);
	if (mr)
		stellar_mr_put(mr);
	stellar_mr_put(mw);
	return ret;
}

int stellar_mw_invalidate(struct stellar_mr *mw, struct stellar_pd *pd,
			  u32 rkey, const struct stellar_qp *remote)
{
	struct stellar_dev *sdev = to_sdev(pd->ibpd.device);
	int ret = -EINVAL;

	mutex_lock(&sdev->mw_lock);
	/* Only type 2 windows are invalidated; type 1 ones are unbound. */
	if (mw->mw.type == IB_MW_TYPE_2 && mw->ibmr.rkey == rkey &&
	    mw->ibmr.pd == &pd->ibpd && READ_ONCE(mw->valid) &&
	    (!remote || stellar_mw_bound_to(mw, remote))) {
		stellar_mr_fence(mw);
		stellar_mw_unlink(mw);
		ret = 0;
	}
	mutex_unlock(&sdev->mw_lock);
	return ret;
}
