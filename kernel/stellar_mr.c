// SPDX-License-Identifier: GPL-2.0
/*
 * virtio-stellar: memory regions, their keys, and copies to and from them.
 *
 * A key is (index << 8) | variant: the index names the region in the
 * device's MR table, the low byte is random at registration and is what
 * fast registration rotates.  A key is valid only while the region's
 * current key equals it, so a peer that guesses an index still has to
 * guess the byte.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <linux/bitfield.h>
#include <linux/highmem.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/wait_bit.h>

#include "stellar.h"
#include "stellar_mem.h"
#include "stellar_mr.h"
#include "stellar_transport.h"

#define STELLAR_MR_INDEX_MAX	STELLAR_MAX_MR

/* Tries of an atomic on an on-demand MR whose target is invalidated. */
#define STELLAR_ATOMIC_TRIES	4

#define STELLAR_KEY_INDEX	GENMASK(31, 8)
#define STELLAR_KEY_VARIANT	GENMASK(7, 0)

/* Every MR index fits in the key. */
static_assert(STELLAR_MR_INDEX_MAX <= (STELLAR_KEY_INDEX >> 8));

u32 stellar_key_index(u32 key)
{
	return FIELD_GET(STELLAR_KEY_INDEX, key);
}

/* A fresh key for MR table slot @index, with an unpredictable low byte. */
static u32 stellar_key_new(u32 index)
{
	return FIELD_PREP(STELLAR_KEY_INDEX, index) |
	       FIELD_PREP(STELLAR_KEY_VARIANT, get_random_u8());
}

/*
 * Give @mr a key and make it visible.  The index is reserved first so
 * that everything a copy may use is set before the MR can be found.
 * Return: 0, or -ENOMEM beyond the device's max_mr.
 */
int stellar_mr_publish(struct stellar_dev *sdev, struct stellar_mr *mr)
{
	u32 index;
	int ret;

	ret = stellar_limit_mr_get(sdev);
	if (ret)
		return ret;
	ret = xa_alloc_irq(&sdev->mrs, &index, NULL,
			   XA_LIMIT(1, STELLAR_MR_INDEX_MAX), GFP_KERNEL);
	if (ret) {
		stellar_limit_mr_put(sdev);
		return ret == -EBUSY ? -ENOMEM : ret;
	}
	mr->ibmr.lkey = stellar_key_new(index);
	mr->ibmr.rkey = mr->ibmr.lkey;
	mr->serial = atomic64_inc_return(&sdev->mem->next_serial);
	if (mr->pvdma)
		stellar_pvdma_set_owner(mr->pvdma, mr->ibmr.lkey, mr->ibmr.pd,
					mr->access, mr->iova);
	ret = xa_err(xa_store_irq(&sdev->mrs, index, mr, GFP_KERNEL));
	if (ret) {
		xa_erase_irq(&sdev->mrs, index);
		stellar_limit_mr_put(sdev);
	}
	return ret;
}

struct stellar_mr *stellar_mr_alloc(struct ib_pd *ibpd, int access)
{
	struct stellar_mr *mr = kzalloc(sizeof(*mr), STELLAR_GFP_USER);

	if (!mr)
		return NULL;
	mr->access = access;
	mr->ibmr.pd = ibpd;
	refcount_set(&mr->ref, 1);
	init_completion(&mr->released);
	return mr;
}

struct ib_mr *stellar_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct stellar_mr *mr = stellar_mr_alloc(ibpd, access);
	int ret;

	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->is_dma = true;
	mr->valid = true;
	mr->length = U64_MAX;
	ret = stellar_mr_publish(to_sdev(ibpd->device), mr);
	if (ret) {
		kfree(mr);
		return ERR_PTR(ret);
	}
	return &mr->ibmr;
}

/* ON_DEMAND registrations are always pinned on demand. */
static bool stellar_mr_pin_eagerly(struct stellar_dev *sdev, int access)
{
	return !(access & IB_ACCESS_ON_DEMAND) &&
	       READ_ONCE(sdev->settings.pin_mode) == STELLAR_PIN_EAGER;
}

/*
 * Implicit ODP, as ibv_reg_mr(pd, NULL, SIZE_MAX, IBV_ACCESS_ON_DEMAND | ...)
 * asks for it: the whole address space of the caller, iova = address.
 */
static bool stellar_mr_is_implicit(u64 start, u64 length, u64 iova,
				   int access)
{
	return (access & IB_ACCESS_ON_DEMAND) && !start && !iova &&
	       length == U64_MAX;
}

struct ib_mr *stellar_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				  u64 iova, int access, struct ib_udata *udata)
{
	struct stellar_dev *sdev = to_sdev(ibpd->device);
	bool implicit = stellar_mr_is_implicit(start, length, iova, access);
	struct stellar_mr *mr;
	int ret;

	if (!length || (length > STELLAR_MAX_MR_SIZE && !implicit))
		return ERR_PTR(-EINVAL);
	mr = stellar_mr_alloc(ibpd, access);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	if (implicit)
		mr->pvdma = stellar_pvdma_reg_implicit(sdev, access);
	else
		mr->pvdma = stellar_pvdma_reg(sdev, start, length, access);
	if (IS_ERR(mr->pvdma)) {
		ret = PTR_ERR(mr->pvdma);
		mr->pvdma = NULL;
		goto err_free;
	}
	/* What an implicit MR covers: the user address space. */
	length = mr->pvdma->length;
	if (stellar_mr_pin_eagerly(sdev, access)) {
		ret = stellar_pvdma_pin_all(sdev, mr->pvdma);
		if (ret)
			goto err_free;
	}
	mr->iova = iova;
	mr->length = length;
	mr->valid = true;
	mr->ibmr.iova = iova;
	mr->ibmr.length = length;
	ret = stellar_mr_publish(sdev, mr);
	if (ret)
		goto err_free;
	return &mr->ibmr;

err_free:
	if (mr->pvdma)
		stellar_pvdma_dereg(sdev, mr->pvdma);
	kfree(mr);
	return ERR_PTR(ret);
}

/**
 * stellar_rereg_user_mr() - change a user MR's translation, access or PD
 * @ibmr: the registered MR
 * @flags: IB_MR_REREG_TRANS, IB_MR_REREG_PD and/or IB_MR_REREG_ACCESS
 * @start: new user address (IB_MR_REREG_TRANS)
 * @length: new length (IB_MR_REREG_TRANS)
 * @iova: new first iova (IB_MR_REREG_TRANS)
 * @access: new IB_ACCESS_* flags (IB_MR_REREG_ACCESS)
 * @ibpd: the PD the MR is to be in (the old one unless IB_MR_REREG_PD)
 * @udata: the caller's driver data
 *
 * A registration is never changed in place: a copy that already passed
 * the old key check may still be moving data, and the eMTT may hold the
 * old translation.  Instead a new registration with the merged attributes
 * is made; the RDMA core puts it in the old one's handle and deregisters
 * the old one, which waits for those copies.  The keys change, as the
 * verbs allow.  On any error the old registration is left as it was.
 * The new MR counts against max_mr until the old one is gone, so a
 * process at that limit gets -ENOMEM.
 *
 * Return: the new MR, or an ERR_PTR: -EINVAL for an MR that is not a user
 * registration, or any error of stellar_reg_user_mr().
 */
struct ib_mr *stellar_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				    u64 length, u64 iova, int access,
				    struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct stellar_mr *mr = to_smr(ibmr);

	if (!mr->pvdma)
		return ERR_PTR(-EINVAL);
	if (atomic_read(&mr->mw_binds))
		return ERR_PTR(-EBUSY);
	if (!(flags & IB_MR_REREG_TRANS)) {
		start = mr->pvdma->start;
		length = mr->pvdma->implicit ? U64_MAX : mr->length;
		iova = mr->iova;
	}
	if (!(flags & IB_MR_REREG_ACCESS))
		access = mr->access;
	return stellar_reg_user_mr(ibpd, start, length, iova, access, udata);
}

struct ib_mr *stellar_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			       u32 max_num_sg)
{
	struct stellar_mr *mr;
	int ret;

	if (type != IB_MR_TYPE_MEM_REG)
		return ERR_PTR(-EOPNOTSUPP);
	if (max_num_sg > STELLAR_MAX_FAST_REG_PAGES)
		return ERR_PTR(-EINVAL);
	mr = stellar_mr_alloc(ibpd, 0);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->pages = kcalloc(max_num_sg, sizeof(*mr->pages), GFP_KERNEL);
	if (!mr->pages) {
		ret = -ENOMEM;
		goto err_free;
	}
	mr->max_pages = max_num_sg;
	ret = stellar_mr_publish(to_sdev(ibpd->device), mr);
	if (ret)
		goto err_free;
	return &mr->ibmr;

err_free:
	kfree(mr->pages);
	kfree(mr);
	return ERR_PTR(ret);
}

static int stellar_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct stellar_mr *mr = to_smr(ibmr);

	if (mr->npages == mr->max_pages)
		return -ENOMEM;
	mr->pages[mr->npages++] = addr;
	return 0;
}

int stellar_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg,
		      int sg_nents, unsigned int *sg_offset)
{
	to_smr(ibmr)->npages = 0;
	return ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, stellar_set_page);
}

/*
 * The key stops resolving at once, but its index stays reserved until the
 * MR's eMTT entries are gone and no reader can still see one: a new MR
 * that gets the same key must never be answered by an old entry.
 */
int stellar_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct stellar_dev *sdev = to_sdev(ibmr->device);
	struct stellar_mr *mr = to_smr(ibmr);

	/* A window bound to it would open freed memory (IBTA: EBUSY). */
	if (atomic_read(&mr->mw_binds))
		return -EBUSY;
	stellar_mr_unpublish(sdev, mr);
	if (mr->pvdma)
		stellar_pvdma_dereg(sdev, mr->pvdma);
	stellar_mr_free(sdev, mr);
	return 0;
}

/**
 * stellar_mr_unpublish() - make a key stop resolving and wait for its users
 * @sdev: the device
 * @mr: the region or window key entry
 *
 * Its index stays reserved until stellar_mr_free(): a new key with the
 * same index must not appear while eMTT entries of this one may exist.
 * Context: process, may sleep.
 */
void stellar_mr_unpublish(struct stellar_dev *sdev, struct stellar_mr *mr)
{
	xa_store_irq(&sdev->mrs, stellar_key_index(mr->ibmr.rkey), NULL,
		     GFP_KERNEL);
	if (refcount_dec_and_test(&mr->ref))
		complete(&mr->released);
	wait_for_completion(&mr->released);
}

/* Release @mr's index and its memory after stellar_mr_unpublish(). */
void stellar_mr_free(struct stellar_dev *sdev, struct stellar_mr *mr)
{
	xa_erase_irq(&sdev->mrs, stellar_key_index(mr->ibmr.rkey));
	stellar_limit_mr_put(sdev);
	kfree(mr->pages);
	/* stellar_mr_get() may still be looking at ref under RCU. */
	kfree_rcu(mr, rcu);
}

struct stellar_mr *stellar_mr_get(struct stellar_pd *pd, u32 key)
{
	struct stellar_dev *sdev = to_sdev(pd->ibpd.device);
	struct stellar_mr *mr;

	rcu_read_lock();
	mr = xa_load(&sdev->mrs, stellar_key_index(key));
	if (mr && !refcount_inc_not_zero(&mr->ref))
		mr = NULL;
	rcu_read_unlock();
	return mr;
}

void stellar_mr_put(struct stellar_mr *mr)
{
	if (refcount_dec_and_test(&mr->ref))
		complete(&mr->released);
}

/* Is [iova, iova + len) inside the region, with wrap-around excluded? */
bool stellar_mr_in_range(const struct stellar_mr *mr, u64 iova, u64 len)
{
	if (mr->is_dma)
		return true;
	return iova >= mr->iova && len <= mr->length &&
	       iova - mr->iova <= mr->length - len;
}

/*
 * A copy starts to use @mr: from here on until stellar_mr_copy_end() an
 * invalidation waits for it, or the copy sees the MR invalid.
 */
void stellar_mr_copy_begin(struct stellar_mr *mr)
{
	atomic_inc(&mr->copies);
	/* Pairs with the barrier in stellar_mr_fence(). */
	smp_mb__after_atomic();
}

void stellar_mr_copy_end(struct stellar_mr *mr)
{
	if (atomic_dec_and_test(&mr->copies))
		wake_up_var(&mr->copies);
}

/*
 * Make @mr invalid and wait for the copies that found it valid: once this
 * returns no byte lands in or leaves its memory through the old key.
 * Context: process, may sleep.
 */
void stellar_mr_fence(struct stellar_mr *mr)
{
	might_sleep();
	WRITE_ONCE(mr->valid, false);
	/* Pairs with stellar_mr_copy_begin(). */
	smp_mb();
	wait_var_event(&mr->copies, !atomic_read(&mr->copies));
}

/* Call between stellar_mr_copy_begin() and stellar_mr_copy_end(). */
int stellar_mr_check(struct stellar_mr *mr, struct stellar_pd *pd, u32 key,
		     bool remote, u64 iova, u64 len, int access)
{
	u32 cur_key = remote ? mr->ibmr.rkey : mr->ibmr.lkey;

	/* Acquire: the fields stellar_mr_fast_reg() set before it. */
	if (!smp_load_acquire(&mr->valid) || cur_key != key ||
	    mr->ibmr.pd != &pd->ibpd)
		return -EACCES;
	if ((mr->access & access) != access)
		return -EACCES;
	return stellar_mr_in_range(mr, iova, len) ? 0 : -EFAULT;
}

/* Kernel virtual address of byte @iova of a fast-registration region. */
static void *stellar_frmr_addr(struct stellar_mr *mr, u64 iova, u32 *room)
{
	u64 page_size = mr->ibmr.page_size;
	u64 off = iova - mr->iova + (mr->iova & (page_size - 1));
	u64 index = off / page_size;

	if (index >= mr->npages)
		return NULL;
	*room = page_size - (off & (page_size - 1));
	return (void *)(uintptr_t)(mr->pages[index] + (off & (page_size - 1)));
}

/*
 * Every byte that moves into or out of a DMA or fast-registration MR moves
 * here.  Kept out of line so that tests/kmod/stellar_race.ko can slow one
 * copy down with a kprobe whatever the compiler would inline.
 */
static noinline void stellar_copy_chunk(void *mem, void *buf, u32 len,
					enum stellar_copy_dir dir)
{
	if (dir == STELLAR_COPY_TO_MR)
		memcpy(mem, buf, len);
	else
		memcpy(buf, mem, len);
}

static int stellar_frmr_copy(struct stellar_mr *mr, u64 iova, u8 *buf,
			     u32 len, enum stellar_copy_dir dir)
{
	while (len) {
		u32 room, chunk;
		void *addr = stellar_frmr_addr(mr, iova, &room);

		if (!addr)
			return -EFAULT;
		chunk = min(len, room);
		stellar_copy_chunk(addr, buf, chunk, dir);
		iova += chunk;
		buf += chunk;
		len -= chunk;
	}
	return 0;
}

/*
 * @may_pin: user memory may be pinned now (sleeps); without it a copy
 * into a chunk not pinned yet fails with -EFAULT.
 */
static int stellar_mr_do_copy(struct stellar_mr *mr, u64 iova, void *buf,
			      u32 len, enum stellar_copy_dir dir, bool may_pin)
{
	if (mr->is_dma) {
		stellar_copy_chunk((void *)(uintptr_t)iova, buf, len, dir);
		return 0;
	}
	if (mr->pvdma)
		return stellar_pvdma_copy(to_sdev(mr->ibmr.device), mr->pvdma,
					  iova - mr->iova, buf, len,
					  dir == STELLAR_COPY_TO_MR, may_pin);
	return stellar_frmr_copy(mr, iova, buf, len, dir);
}

/* Is @mr still the registration the eMTT copied @serial's pages of? */
static bool stellar_mr_is_registration(const struct stellar_mr *mr, u64 serial)
{
	return mr->pvdma && mr->pvdma->owner.serial == serial;
}

/*
 * The eMTT answers what it can without looking the MR up (every check is
 * in its entries); a miss, or any doubt, takes the MR table and a
 * reference for the rest.
 */
/**
 * stellar_key_enter() - find the region an access through a key uses
 * @pd: the PD the key must belong to
 * @remote: the QP a peer's request came in on, NULL for a local access
 * @key: the L_Key (local) or R_Key (remote)
 * @iova: first address
 * @len: bytes
 * @access: IB_ACCESS_* rights required
 * @use: receives the region (and the window, if @key names one)
 *
 * A window's rights are checked on the window, then the region it opens
 * is entered as the window's owner would use it locally.  On success the
 * caller holds a reference and a copy section on each; stellar_key_exit()
 * drops them.
 *
 * Return: 0, -EACCES or -EFAULT.
 */
int stellar_key_enter(struct stellar_pd *pd, const struct stellar_qp *remote,
		      u32 key, u64 iova, u64 len, int access,
		      struct stellar_key_use *use)
{
	struct stellar_mr *mr = stellar_mr_get(pd, key);
	int ret;

	use->mw = NULL;
	use->mr = mr;
	if (!mr)
		return -EACCES;
	stellar_mr_copy_begin(mr);
	ret = stellar_mr_check(mr, pd, key, !!remote, iova, len, access);
	if (!ret && mr->mw.type)
		ret = stellar_mw_enter(use, pd, remote, iova, len, access);
	if (ret)
		stellar_key_exit(use);
	return ret;
}

void stellar_key_exit(struct stellar_key_use *use)
{
	if (use->mr) {
		stellar_mr_copy_end(use->mr);
		stellar_mr_put(use->mr);
	}
	if (use->mw) {
		stellar_mr_copy_end(use->mw);
		stellar_mr_put(use->mw);
	}
}

/*
 * The eMTT answers what it can without looking the MR up (every check is
 * in its entries, which only regions' own keys fill); a miss, or any
 * doubt, takes the key table and a reference for the rest.
 */
int stellar_mr_copy(struct stellar_pd *pd, u32 key,
		    const struct stellar_qp *remote, u64 iova, void *buf,
		    u32 len, enum stellar_copy_dir dir, int access)
{
	struct stellar_emtt_req req = {
		.pd = &pd->ibpd, .key = key, .access = access,
	};
	struct stellar_key_use use;
	u64 serial;
	u32 done;
	int ret;

	if (!len)
		return 0;
	done = stellar_emtt_copy(to_sdev(pd->ibpd.device), &req, iova, buf,
				 len, dir == STELLAR_COPY_TO_MR, &serial);
	if (done == len)
		return 0;
	ret = stellar_key_enter(pd, remote, key, iova, len, access, &use);
	if (ret)
		return ret;
	if (done && (use.mw || !stellar_mr_is_registration(use.mr, serial)))
		ret = -EACCES;
	if (!ret)
		ret = stellar_mr_do_copy(use.mr, iova + done, (u8 *)buf + done,
					 len - done, dir, true);
	stellar_key_exit(&use);
	return ret;
}

int stellar_mr_check_remote(struct stellar_pd *pd, const struct stellar_qp *qp,
			    u32 rkey, u64 iova, u32 len, int access)
{
	struct stellar_key_use use;
	int ret;

	if (!len)
		return 0;
	ret = stellar_key_enter(pd, qp, rkey, iova, len, access, &use);
	if (!ret)
		stellar_key_exit(&use);
	return ret;
}

u64 stellar_sgl_length(const struct stellar_sge *sge, u32 num_sge)
{
	u64 total = 0;
	u32 i;

	for (i = 0; i < num_sge; i++)
		total += sge[i].length;
	return total;
}

int stellar_sgl_copy(struct stellar_pd *pd, const struct stellar_sge *sge,
		     u32 num_sge, u64 offset, void *buf, u32 len,
		     enum stellar_copy_dir dir)
{
	int access = dir == STELLAR_COPY_TO_MR ? IB_ACCESS_LOCAL_WRITE : 0;
	u8 *cursor = buf;
	u32 i;
	int ret;

	for (i = 0; i < num_sge && len; i++) {
		u32 chunk;

		if (offset >= sge[i].length) {
			offset -= sge[i].length;
			continue;
		}
		chunk = min_t(u64, len, sge[i].length - offset);
		ret = stellar_mr_copy(pd, sge[i].lkey, NULL,
				      sge[i].addr + offset, cursor, chunk, dir,
				      access);
		if (ret)
			return ret;
		cursor += chunk;
		len -= chunk;
		offset = 0;
	}
	return len ? -EMSGSIZE : 0;
}

enum stellar_atomic_op {
	STELLAR_ATOMIC_FETCH_ADD,
	STELLAR_ATOMIC_CMP_SWAP,
	STELLAR_ATOMIC_WRITE,
};

static u64 stellar_atomic_apply(u64 *target, enum stellar_atomic_op op,
				u64 compare_add, u64 swap)
{
	u64 orig = *target;

	switch (op) {
	case STELLAR_ATOMIC_CMP_SWAP:
		if (orig == compare_add)
			*target = swap;
		break;
	case STELLAR_ATOMIC_FETCH_ADD:
		*target = orig + compare_add;
		break;
	case STELLAR_ATOMIC_WRITE:
		*target = compare_add;
		break;
	}
	return orig;
}

/*
 * Read, modify and write the aligned 8 bytes at @iova of @rkey's MR under
 * the device's atomic lock, so that remote atomics of every QP on the
 * device are atomic with respect to each other.  An ATOMIC WRITE needs
 * remote write access, the others remote atomic access.
 */
static int stellar_mr_rmw(struct stellar_pd *pd, const struct stellar_qp *qp,
			  u32 rkey, u64 iova, enum stellar_atomic_op op,
			  u64 compare_add, u64 swap, u64 *orig)
{
	struct stellar_dev *sdev = to_sdev(qp->ibqp.device);
	int access = op == STELLAR_ATOMIC_WRITE ? IB_ACCESS_REMOTE_WRITE :
						  IB_ACCESS_REMOTE_ATOMIC;
	struct stellar_key_use use;
	struct stellar_mr *mr;
	int tries, ret;
	u64 value;

	if (iova & 7)
		return -EINVAL;
	ret = stellar_key_enter(pd, qp, rkey, iova, sizeof(u64), access, &use);
	if (ret)
		return ret;
	mr = use.mr;
	for (tries = 0; tries < STELLAR_ATOMIC_TRIES; tries++) {
		/* Pin the target now: nothing may sleep under the lock. */
		if (mr->pvdma) {
			ret = stellar_pvdma_fault_in(sdev, mr->pvdma,
						     iova - mr->iova,
						     sizeof(value));
			if (ret)
				goto out;
		}
		/* Read, modify and write back under the atomic lock. */
		spin_lock_bh(&sdev->atomic_lock);
		ret = stellar_mr_do_copy(mr, iova, &value, sizeof(value),
					 STELLAR_COPY_FROM_MR, false);
		if (!ret) {
			*orig = stellar_atomic_apply(&value, op, compare_add,
						     swap);
			ret = stellar_mr_do_copy(mr, iova, &value,
						 sizeof(value),
						 STELLAR_COPY_TO_MR, false);
		}
		spin_unlock_bh(&sdev->atomic_lock);
		/*
		 * An on-demand MR's chunk can be invalidated between the pin
		 * and the lock; then nothing was written: pin it again.
		 */
		if (ret != -EFAULT || !mr->pvdma || !mr->pvdma->odp)
			break;
	}
out:
	stellar_key_exit(&use);
	return ret;
}

int stellar_mr_atomic(struct stellar_pd *pd, const struct stellar_qp *qp,
		      u32 rkey, u64 iova, bool is_cmp_swap, u64 compare_add,
		      u64 swap, u64 *orig)
{
	return stellar_mr_rmw(pd, qp, rkey, iova,
			      is_cmp_swap ? STELLAR_ATOMIC_CMP_SWAP :
					    STELLAR_ATOMIC_FETCH_ADD,
			      compare_add, swap, orig);
}

/**
 * stellar_mr_atomic_write() - an ATOMIC WRITE's store
 * @pd: the PD the request's key belongs to (stellar_mr_check_remote())
 * @qp: the responder QP
 * @rkey: the R_Key of the request
 * @iova: the target, 8-byte aligned
 * @value: the bytes to store, in memory order
 *
 * Return: 0, -EINVAL if @iova is not aligned, -EACCES or a copy's error if
 * the key, range or access does not allow it.
 */
int stellar_mr_atomic_write(struct stellar_pd *pd, const struct stellar_qp *qp,
			    u32 rkey, u64 iova, u64 value)
{
	u64 orig;

	return stellar_mr_rmw(pd, qp, rkey, iova, STELLAR_ATOMIC_WRITE, value,
			      0, &orig);
}

int stellar_mr_fast_reg(struct stellar_pd *pd, struct ib_mr *ibmr, u32 key,
			int access)
{
	struct stellar_mr *mr = to_smr(ibmr);

	if (mr->pvdma || mr->is_dma || ibmr->pd != &pd->ibpd ||
	    stellar_key_index(key) != stellar_key_index(ibmr->lkey))
		return -EINVAL;
	stellar_mr_fence(mr);
	mr->access = access;
	mr->iova = ibmr->iova;
	mr->length = ibmr->length;
	ibmr->lkey = key;
	ibmr->rkey = key;
	/* Release: a copy that sees it valid sees the fields above. */
	smp_store_release(&mr->valid, true);
	return 0;
}

/**
 * stellar_mr_invalidate() - LOCAL_INV, or a SEND_WITH_INV's invalidation
 * @pd: the QP's PD
 * @key: a fast-registration region's key or a type 2 window's R_Key
 * @remote: the QP a SEND_WITH_INV came in on, NULL for LOCAL_INV
 *
 * Return: 0, or -EINVAL if @key names nothing that may be invalidated so.
 * Context: process, may sleep.
 */
int stellar_mr_invalidate(struct stellar_pd *pd, u32 key,
			  const struct stellar_qp *remote)
{
	struct stellar_mr *mr = stellar_mr_get(pd, key);
	int ret = -EINVAL;

	if (!mr)
		return ret;
	if (mr->mw.type) {
		ret = stellar_mw_invalidate(mr, pd, key, remote);
	} else if (!mr->pvdma && !mr->is_dma && mr->ibmr.rkey == key &&
		   mr->ibmr.pd == &pd->ibpd) {
		stellar_mr_fence(mr);
		ret = 0;
	}
	stellar_mr_put(mr);
	return ret;
}

static bool stellar_advice_supported(enum ib_uverbs_advise_mr_advice advice)
{
	return advice == IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH ||
	       advice == IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE ||
	       advice == IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT;
}

/* Pin the chunks under one SGE of an advise_mr call. */
static int stellar_advise_sge(struct stellar_pd *pd, const struct ib_sge *sge,
			      int access)
{
	struct stellar_mr *mr = stellar_mr_get(pd, sge->lkey);
	int ret;

	if (!mr)
		return -EINVAL;
	stellar_mr_copy_begin(mr);
	ret = stellar_mr_check(mr, pd, sge->lkey, false, sge->addr,
			       sge->length, access);
	stellar_mr_copy_end(mr);
	if (!ret && !mr->pvdma)
		ret = -EINVAL;
	if (!ret)
		ret = stellar_pvdma_prefetch(to_sdev(pd->ibpd.device),
					     mr->pvdma, sge->addr - mr->iova,
					     sge->length);
	stellar_mr_put(mr);
	return ret;
}

/**
 * stellar_advise_mr() - ibv_advise_mr(): pin parts of user MRs ahead
 * @ibpd: the PD of the MRs
 * @advice: PREFETCH, PREFETCH_WRITE or PREFETCH_NO_FAULT
 * @flags: IB_UVERBS_ADVISE_MR_FLAG_FLUSH (the work is always synchronous)
 * @sg_list: ranges, by lkey and address
 * @num_sge: entries in @sg_list
 * @attrs: unused
 *
 * PREFETCH_NO_FAULT asks for no page faults; as pinning faults pages in,
 * it is accepted and does nothing (it is a hint).
 *
 * Return: 0, -EOPNOTSUPP for other advice, -EINVAL for a bad lkey, range
 * or rights, or a pin's error (-EFAULT, -ENOMEM).
 */
int stellar_advise_mr(struct ib_pd *ibpd,
		      enum ib_uverbs_advise_mr_advice advice, u32 flags,
		      struct ib_sge *sg_list, u32 num_sge,
		      struct uverbs_attr_bundle *attrs)
{
	int access = advice == IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE ?
		     IB_ACCESS_LOCAL_WRITE : 0;
	u32 i;
	int ret;

	if (!stellar_advice_supported(advice))
		return -EOPNOTSUPP;
	if (advice == IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT)
		return 0;
	for (i = 0; i < num_sge; i++) {
		ret = stellar_advise_sge(to_spd(ibpd), &sg_list[i], access);
		if (ret == -EACCES)
			ret = -EINVAL;
		if (ret)
			return ret;
	}
	return 0;
}
