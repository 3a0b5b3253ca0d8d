// SPDX-License-Identifier: GPL-2.0
/*
 * virtio-stellar: memory regions and their keys.
 *
 * A key is (index << 8) | variant: the index names the region in the
 * device's MR table, the low byte is what fast registration will rotate.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <linux/slab.h>
#include <rdma/ib_umem.h>

#include "stellar.h"

#define STELLAR_MR_INDEX_MAX	(STELLAR_MAX_MR - 1)

static int stellar_mr_publish(struct stellar_dev *sdev, struct stellar_mr *mr)
{
	u32 index;
	int ret;

	ret = xa_alloc_irq(&sdev->mrs, &index, mr,
			   XA_LIMIT(1, STELLAR_MR_INDEX_MAX), GFP_KERNEL);
	if (ret)
		return ret == -EBUSY ? -ENOMEM : ret;
	mr->ibmr.lkey = index << 8;
	mr->ibmr.rkey = index << 8;
	return 0;
}

static struct stellar_mr *stellar_mr_alloc(struct ib_pd *ibpd, int access)
{
	struct stellar_mr *mr = kzalloc(sizeof(*mr), GFP_KERNEL);

	if (!mr)
		return NULL;
	mr->access = access;
	mr->ibmr.pd = ibpd;
	return mr;
}

struct ib_mr *stellar_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct stellar_mr *mr = stellar_mr_alloc(ibpd, access);
	int ret;

	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->length = U64_MAX;
	ret = stellar_mr_publish(to_sdev(ibpd->device), mr);
	if (ret) {
		kfree(mr);
		return ERR_PTR(ret);
	}
	return &mr->ibmr;
}

struct ib_mr *stellar_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				  u64 iova, int access, struct ib_udata *udata)
{
	struct stellar_mr *mr;
	int ret;

	if (!length || length > STELLAR_MAX_MR_SIZE)
		return ERR_PTR(-EINVAL);
	mr = stellar_mr_alloc(ibpd, access);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->umem = ib_umem_get(ibpd->device, start, length, access);
	if (IS_ERR(mr->umem)) {
		ret = PTR_ERR(mr->umem);
		goto err_free;
	}
	mr->iova = iova;
	mr->length = length;
	mr->ibmr.iova = iova;
	mr->ibmr.length = length;
	ret = stellar_mr_publish(to_sdev(ibpd->device), mr);
	if (ret)
		goto err_release;
	return &mr->ibmr;

err_release:
	ib_umem_release(mr->umem);
err_free:
	kfree(mr);
	return ERR_PTR(ret);
}

int stellar_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct stellar_mr *mr = to_smr(ibmr);

	xa_erase_irq(&to_sdev(ibmr->device)->mrs, ibmr->lkey >> 8);
	ib_umem_release(mr->umem);
	kfree(mr);
	return 0;
}
