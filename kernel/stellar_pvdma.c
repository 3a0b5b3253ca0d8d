// SPDX-License-Identifier: GPL-2.0
/*
 * virtio-stellar: PVDMA - user memory registrations pin nothing up front.
 *
 * Registration checks that the range is mapped and remembers the owner's
 * address space.  The first access to a 2 MB-aligned chunk of the MR pins
 * that chunk (pin_user_pages_remote(), FOLL_LONGTERM) from the transport's
 * process context, charging the owner's pinned memory against its
 * RLIMIT_MEMLOCK; a chunk that is one large folio keeps a single pin.
 * Chunks stay pinned until the MR is deregistered.  Copies on the slow
 * path hold a reference on the MR; copies through the eMTT run under RCU,
 * so deregistration unpins only once no copy of either kind can still use
 * the pages.
 *
 * An IB_ACCESS_ON_DEMAND registration follows its address space instead:
 * an MMU interval notifier unpins the chunks of a range that is unmapped,
 * remapped, write-protected for fork and so on, and the next access pins
 * whatever is mapped there then.  Its copies hold the chunk they use, and
 * it bypasses the eMTT, whose hit path holds nothing.  An implicit one
 * (address 0, length U64_MAX) covers the whole address space, where a 2 MB
 * window may hold unmapped pages beside a buffer: its chunks are single
 * pages.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/highmem.h>
#include <linux/ktime.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>

#include "stellar_emtt_index.h"
#include "stellar_mem.h"

u64 stellar_pvdma_read(struct stellar_dev *sdev, enum stellar_pvdma_stat stat)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += READ_ONCE(per_cpu_ptr(sdev->mem->counters, cpu)->pvdma[stat]);
	return sum;
}

/*
 * Pins of an on-demand chunk that invalidations undo before use are
 * retried: at least this many times...
 */
#define STELLAR_PVDMA_ODP_TRIES		8
/* ...and then for as long as this, in ms, yielding the CPU between. */
#define STELLAR_PVDMA_ODP_RETRY_MS	250

static const struct mmu_interval_notifier_ops stellar_pvdma_odp_ops;

/* ---- registration ------------------------------------------------------ */

/* Is every byte of [start, end) mapped by VMAs whose pages can be pinned? */
static int stellar_pvdma_check_vmas(struct mm_struct *mm, unsigned long start,
				    unsigned long end, bool writable)
{
	unsigned long addr = start;
	int ret = 0;

	mmap_read_lock(mm);
	while (addr < end) {
		struct vm_area_struct *vma = vma_lookup(mm, addr);

		if (!vma || (vma->vm_flags & (VM_IO | VM_PFNMAP)) ||
		    (writable && !(vma->vm_flags & VM_WRITE))) {
			ret = -EFAULT;
			break;
		}
		addr = vma->vm_end;
	}
	mmap_read_unlock(mm);
	return ret;
}

static unsigned long stellar_pvdma_lock_limit(void)
{
	if (capable(CAP_IPC_LOCK))
		return ULONG_MAX;
	return rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
}

/*
 * A registration of [@start, @start + @length) of the current process's
 * address space in chunks of 2^@chunk_shift bytes; on-demand ones get
 * their MMU notifier.
 */
static struct stellar_pvdma_mr *
stellar_pvdma_new(struct stellar_dev *sdev, u64 start, u64 length, int access,
		  unsigned int chunk_shift)
{
	struct stellar_pvdma_mr *pm;
	int ret;

	pm = kzalloc(sizeof(*pm), STELLAR_GFP_USER);
	if (!pm)
		return ERR_PTR(-ENOMEM);
	mmgrab(current->mm);
	pm->mm = current->mm;
	pm->memcg = get_mem_cgroup_from_mm(current->mm);
	pm->start = start;
	pm->length = length;
	pm->owner.serial = atomic64_inc_return(&sdev->mem->next_serial);
	pm->lock_limit = stellar_pvdma_lock_limit();
	pm->writable = ib_access_writable(access);
	pm->chunk_shift = chunk_shift;
	pm->sdev = sdev;
	pm->odp = access & IB_ACCESS_ON_DEMAND;
	xa_init_flags(&pm->chunks, XA_FLAGS_ACCOUNT);
	mutex_init(&pm->pin_lock);
	spin_lock_init(&pm->odp_lock);
	if (pm->odp) {
		ret = mmu_interval_notifier_insert(&pm->notifier, current->mm,
						   start, length,
						   &stellar_pvdma_odp_ops);
		if (ret) {
			mem_cgroup_put(pm->memcg);
			mmdrop(pm->mm);
			kfree(pm);
			return ERR_PTR(ret);
		}
	}
	return pm;
}

/**
 * stellar_pvdma_reg() - a user memory registration that pins nothing yet
 * @sdev: the device
 * @start: user address of the first byte (the caller's address space)
 * @length: bytes, not 0
 * @access: IB_ACCESS_* flags
 *
 * Context: the registering process.
 *
 * Return: the registration or an ERR_PTR: -EFAULT if part of the range is
 * not mapped (or not writable when @access needs writes), -ENOMEM.
 */
struct stellar_pvdma_mr *stellar_pvdma_reg(struct stellar_dev *sdev,
					   u64 start, u64 length, int access)
{
	int ret;

	if (!current->mm || start + length < start ||
	    !access_ok((void __user *)(uintptr_t)start, length))
		return ERR_PTR(-EFAULT);
	ret = stellar_pvdma_check_vmas(current->mm, start, start + length,
				       ib_access_writable(access));
	if (ret)
		return ERR_PTR(ret);
	return stellar_pvdma_new(sdev, start, length, access,
				 STELLAR_PVDMA_CHUNK_SHIFT);
}

/**
 * stellar_pvdma_reg_implicit() - an on-demand registration of the whole
 * user address space of the current process (implicit ODP)
 * @sdev: the device
 * @access: IB_ACCESS_* flags, with IB_ACCESS_ON_DEMAND
 *
 * Nothing needs to be mapped now; an access to what is not mapped then
 * fails as for any on-demand registration.  Chunks are single pages.
 *
 * Context: the registering process.
 *
 * Return: the registration (its length: TASK_SIZE) or an ERR_PTR.
 */
struct stellar_pvdma_mr *stellar_pvdma_reg_implicit(struct stellar_dev *sdev,
						    int access)
{
	struct stellar_pvdma_mr *pm;

	if (!current->mm || !(access & IB_ACCESS_ON_DEMAND))
		return ERR_PTR(-EINVAL);
	pm = stellar_pvdma_new(sdev, 0, TASK_SIZE, access, PAGE_SHIFT);
	if (!IS_ERR(pm))
		pm->implicit = true;
	return pm;
}

/**
 * stellar_pvdma_set_owner() - tell the eMTT which MR this registration is
 * @pm: the registration
 * @key: the MR's key (lkey and rkey)
 * @pd: the MR's ib_pd
 * @access: the MR's IB_ACCESS_* flags
 * @iova: the MR's first iova
 *
 * Context: before the MR can be looked up, so before any copy.
 */
void stellar_pvdma_set_owner(struct stellar_pvdma_mr *pm, u32 key,
			     const void *pd, int access, u64 iova)
{
	pm->owner.iova = iova;
	pm->owner.length = pm->length;
	pm->owner.pd = pd;
	pm->owner.key = key;
	pm->owner.access = access;
	pm->emtt_ok = !pm->odp &&
		      stellar_emtt_mr_eligible(&pm->owner, pm->start,
					       PAGE_SHIFT);
}

/* ---- pinning ----------------------------------------------------------- */

static unsigned long stellar_pvdma_chunk_no(const struct stellar_pvdma_mr *pm,
					    unsigned long addr)
{
	return (addr >> pm->chunk_shift) - (pm->start >> pm->chunk_shift);
}

/* The pages of chunk @chunk_no that lie inside the MR. */
static void stellar_pvdma_chunk_span(const struct stellar_pvdma_mr *pm,
				     unsigned long chunk_no,
				     unsigned long *first, u32 *npages)
{
	unsigned long size = 1UL << pm->chunk_shift;
	unsigned long base = (pm->start & ~(size - 1)) +
			     (chunk_no << pm->chunk_shift);
	unsigned long lo = max(base, pm->start & PAGE_MASK);
	unsigned long hi = min(base + size,
			       PAGE_ALIGN(pm->start + pm->length));

	*first = lo;
	*npages = (hi - lo) >> PAGE_SHIFT;
}

static int stellar_pvdma_charge(struct stellar_pvdma_mr *pm, u32 npages)
{
	u64 total = atomic64_add_return(npages, &pm->mm->pinned_vm);

	if (total <= pm->lock_limit)
		return 0;
	atomic64_sub(npages, &pm->mm->pinned_vm);
	pr_warn_ratelimited("pinning %u KiB more would exceed the registering process's RLIMIT_MEMLOCK (%lu KiB)\n",
			    npages << (PAGE_SHIFT - 10),
			    pm->lock_limit << (PAGE_SHIFT - 10));
	return -ENOMEM;
}

/*
 * Pin @npages pages from @addr of @pm's address space into @pages.
 * @mm_locked: the caller holds a reference to the mm and its mmap lock
 * for reading.
 */
static int stellar_pvdma_pin_range(struct stellar_pvdma_mr *pm,
				   unsigned long addr, u32 npages,
				   unsigned int gup_flags, struct page **pages,
				   bool mm_locked)
{
	u32 done = 0;
	long ret = 0;

	if (!mm_locked) {
		if (!mmget_not_zero(pm->mm))
			return -EFAULT;
		mmap_read_lock(pm->mm);
	}
	while (done < npages) {
		ret = pin_user_pages_remote(pm->mm, addr + done * PAGE_SIZE,
					    npages - done,
					    gup_flags | FOLL_LONGTERM,
					    pages + done, NULL, NULL);
		if (ret <= 0)
			break;
		done += ret;
	}
	if (!mm_locked) {
		mmap_read_unlock(pm->mm);
		mmput(pm->mm);
	}
	if (done == npages)
		return 0;
	unpin_user_pages(pages, done);
	return ret < 0 ? ret : -EFAULT;
}

/*
 * Read-only registrations are pinned for writing too where the mapping
 * allows it: a read pin of never-written anonymous memory could return the
 * shared zero page, which the process's first write would replace.
 */
static int stellar_pvdma_pin_pages(struct stellar_pvdma_mr *pm,
				   unsigned long addr, u32 npages,
				   struct page **pages, bool mm_locked)
{
	int ret = stellar_pvdma_pin_range(pm, addr, npages, FOLL_WRITE, pages,
					  mm_locked);

	if (ret && !pm->writable)
		ret = stellar_pvdma_pin_range(pm, addr, npages, 0, pages,
					      mm_locked);
	return ret;
}

/* Are @pages consecutive pages of one large folio? */
static bool stellar_pages_in_one_folio(struct page **pages, u32 npages)
{
	struct folio *folio = page_folio(pages[0]);
	u32 i;

	if (npages < 2 || !folio_test_large(folio))
		return false;
	for (i = 1; i < npages; i++)
		if (pages[i] != nth_page(pages[0], i) ||
		    page_folio(pages[i]) != folio)
			return false;
	return true;
}

static void stellar_pvdma_account_latency(struct stellar_dev *sdev, u64 ns)
{
	enum stellar_pvdma_stat bucket;

	if (ns < 10 * NSEC_PER_USEC)
		bucket = STELLAR_PVDMA_PIN_LAT_10US;
	else if (ns < 100 * NSEC_PER_USEC)
		bucket = STELLAR_PVDMA_PIN_LAT_100US;
	else if (ns < NSEC_PER_MSEC)
		bucket = STELLAR_PVDMA_PIN_LAT_1MS;
	else if (ns < 10 * NSEC_PER_MSEC)
		bucket = STELLAR_PVDMA_PIN_LAT_10MS;
	else
		bucket = STELLAR_PVDMA_PIN_LAT_SLOW;
	stellar_mem_count(sdev, bucket, 1);
}

/*
 * Pin the pages of a chunk and describe them; charged to the owner's
 * RLIMIT_MEMLOCK and to the device's max_pinned, the description to the
 * active memory cgroup (stellar_pvdma_get_chunk() makes it the owner's).
 * @mm_locked: as for stellar_pvdma_pin_range().
 */
static struct stellar_pvdma_chunk *
stellar_pvdma_new_chunk(struct stellar_dev *sdev, struct stellar_pvdma_mr *pm,
			unsigned long chunk_no, bool mm_locked)
{
	struct stellar_pvdma_chunk *chunk;
	struct page **pages;
	int ret = -ENOMEM;

	chunk = kzalloc(sizeof(*chunk), STELLAR_GFP_USER);
	if (!chunk)
		return ERR_PTR(-ENOMEM);
	stellar_pvdma_chunk_span(pm, chunk_no, &chunk->first_addr,
				 &chunk->npages);
	pages = kvmalloc_array(chunk->npages, sizeof(*pages), STELLAR_GFP_USER);
	if (!pages)
		goto err_chunk;
	ret = stellar_limit_pin(sdev, (u64)chunk->npages << PAGE_SHIFT);
	if (ret)
		goto err_pages;
	ret = stellar_pvdma_charge(pm, chunk->npages);
	if (ret)
		goto err_unlimit;
	ret = stellar_pvdma_pin_pages(pm, chunk->first_addr, chunk->npages,
				      pages, mm_locked);
	if (ret)
		goto err_uncharge;
	chunk->first = pages[0];
	refcount_set(&chunk->users, 1);
	if (stellar_pages_in_one_folio(pages, chunk->npages)) {
		/* The first page's pin keeps the whole folio pinned. */
		unpin_user_pages(pages + 1, chunk->npages - 1);
		kvfree(pages);
	} else {
		chunk->pages = pages;
	}
	return chunk;

err_uncharge:
	atomic64_sub(chunk->npages, &pm->mm->pinned_vm);
err_unlimit:
	stellar_limit_unpin(sdev, (u64)chunk->npages << PAGE_SHIFT);
err_pages:
	kvfree(pages);
err_chunk:
	kfree(chunk);
	return ERR_PTR(ret);
}

static void stellar_pvdma_release_chunk(struct stellar_dev *sdev,
					struct stellar_pvdma_mr *pm,
					struct stellar_pvdma_chunk *chunk)
{
	stellar_limit_unpin(sdev, (u64)chunk->npages << PAGE_SHIFT);
	if (chunk->pages) {
		unpin_user_pages_dirty_lock(chunk->pages, chunk->npages,
					    pm->writable);
		kvfree(chunk->pages);
	} else {
		unpin_user_pages_dirty_lock(&chunk->first, 1, pm->writable);
	}
	atomic64_sub(chunk->npages, &pm->mm->pinned_vm);
	kfree_rcu(chunk, rcu);
}

static int stellar_pvdma_publish(struct stellar_dev *sdev,
				 struct stellar_pvdma_mr *pm,
				 unsigned long chunk_no,
				 struct stellar_pvdma_chunk *chunk, gfp_t gfp)
{
	int ret = xa_err(xa_store(&pm->chunks, chunk_no, chunk, gfp));

	if (ret)
		return ret;
	WRITE_ONCE(pm->pinned_pages, pm->pinned_pages + chunk->npages);
	stellar_mem_count(sdev, STELLAR_PVDMA_ACTIVE_MAPPINGS, 1);
	stellar_mem_count(sdev, STELLAR_PVDMA_PINNED_BYTES,
			  (s64)chunk->npages << PAGE_SHIFT);
	if (!chunk->pages)
		stellar_mem_count(sdev, STELLAR_PVDMA_HUGE_CHUNKS, 1);
	return 0;
}

static void stellar_pvdma_count_unpublished(struct stellar_dev *sdev,
					    const struct stellar_pvdma_chunk *chunk)
{
	stellar_mem_count(sdev, STELLAR_PVDMA_ACTIVE_MAPPINGS, -1);
	stellar_mem_count(sdev, STELLAR_PVDMA_PINNED_BYTES,
			  -((s64)chunk->npages << PAGE_SHIFT));
}

/* ---- on-demand registrations -------------------------------------------- */

/*
 * A chunk of @pm to copy from or to; for an on-demand MR held against
 * invalidation until stellar_pvdma_chunk_put().  NULL if not pinned.
 */
static struct stellar_pvdma_chunk *
stellar_pvdma_find_chunk(struct stellar_pvdma_mr *pm, unsigned long chunk_no)
{
	struct stellar_pvdma_chunk *chunk;

	if (!pm->odp)
		return xa_load(&pm->chunks, chunk_no);
	rcu_read_lock();
	chunk = xa_load(&pm->chunks, chunk_no);
	if (chunk && !refcount_inc_not_zero(&chunk->users))
		chunk = NULL;
	rcu_read_unlock();
	return chunk;
}

static void stellar_pvdma_chunk_put(struct stellar_pvdma_chunk *chunk)
{
	/* Only an invalidation that took the chunk out can be waiting. */
	if (refcount_dec_and_test(&chunk->users))
		wake_up_var(&chunk->users);
}

/* Unpin a chunk an invalidation took out, once no copy uses it. */
static void stellar_pvdma_retire_chunk(struct stellar_pvdma_mr *pm,
				       struct stellar_pvdma_chunk *chunk)
{
	if (!refcount_dec_and_test(&chunk->users))
		wait_var_event(&chunk->users, !refcount_read(&chunk->users));
	stellar_pvdma_count_unpublished(pm->sdev, chunk);
	stellar_mem_count(pm->sdev, STELLAR_PVDMA_ODP_INVALIDATIONS, 1);
	stellar_pvdma_release_chunk(pm->sdev, pm, chunk);
}

/*
 * The address space changed under [@range->start, @range->end): unpin
 * the chunks of an on-demand MR that overlap it.  A copy in flight keeps
 * its chunk until it is done; the next access pins what is mapped then.
 * Nothing here may sleep for a non-blockable range (the OOM reaper),
 * which is refused instead, as the MMU notifier API allows.
 */
static bool stellar_pvdma_invalidate(struct mmu_interval_notifier *notifier,
				     const struct mmu_notifier_range *range,
				     unsigned long cur_seq)
{
	struct stellar_pvdma_mr *pm =
		container_of(notifier, struct stellar_pvdma_mr, notifier);
	unsigned long start = max(range->start, pm->start);
	unsigned long end = min_t(u64, range->end, pm->start + pm->length);
	struct stellar_pvdma_chunk *chunk, *next;
	unsigned long index;
	LIST_HEAD(retired);

	if (!mmu_notifier_range_blockable(range))
		return false;
	spin_lock(&pm->odp_lock);
	mmu_interval_set_seq(notifier, cur_seq);
	if (start < end) {
		xa_for_each_range(&pm->chunks, index, chunk,
				  stellar_pvdma_chunk_no(pm, start),
				  stellar_pvdma_chunk_no(pm, end - 1)) {
			xa_erase(&pm->chunks, index);
			WRITE_ONCE(pm->pinned_pages,
				   pm->pinned_pages - chunk->npages);
			list_add(&chunk->retired, &retired);
		}
	}
	spin_unlock(&pm->odp_lock);
	list_for_each_entry_safe(chunk, next, &retired, retired)
		stellar_pvdma_retire_chunk(pm, chunk);
	return true;
}

static const struct mmu_interval_notifier_ops stellar_pvdma_odp_ops = {
	.invalidate = stellar_pvdma_invalidate,
};

static void stellar_pvdma_pin_failed(struct stellar_dev *sdev, int err)
{
	stellar_mem_count(sdev, err == -ENOMEM ? STELLAR_PVDMA_MEMLOCK_ERRORS :
						 STELLAR_PVDMA_PIN_ERRORS, 1);
	if (err != -ENOMEM)
		pr_warn_ratelimited("%s: cannot pin registered memory (%d): not mapped any more?\n",
				    dev_name(&sdev->ibdev.dev), err);
}

/* Pin chunk @chunk_no of a registration that does not follow its mm. */
static int stellar_pvdma_pin_chunk(struct stellar_dev *sdev,
				   struct stellar_pvdma_mr *pm,
				   unsigned long chunk_no,
				   struct stellar_pvdma_chunk **chunk)
{
	int ret;

	*chunk = stellar_pvdma_new_chunk(sdev, pm, chunk_no, false);
	if (IS_ERR(*chunk))
		return PTR_ERR(*chunk);
	ret = stellar_pvdma_publish(sdev, pm, chunk_no, *chunk, GFP_KERNEL);
	if (ret)
		stellar_pvdma_release_chunk(sdev, pm, *chunk);
	return ret;
}

/*
 * May an on-demand pin undone by an invalidation be tried again?  A
 * process that remaps a range in a loop undoes pins all the time; on a
 * slow machine eight tries were not always enough for a transfer to the
 * range to get through.  After those, retries go on for a while, each
 * after a cond_resched(), and then the access fails.
 */
static bool stellar_pvdma_odp_retry(int tries, unsigned long started)
{
	if (tries < STELLAR_PVDMA_ODP_TRIES)
		return true;
	cond_resched();
	return time_before(jiffies, started +
			   msecs_to_jiffies(STELLAR_PVDMA_ODP_RETRY_MS));
}

/*
 * One try of stellar_pvdma_odp_pin_chunk(), under the mmap lock: munmap,
 * mmap over the range and mprotect (which take it for writing) cannot
 * invalidate the pages between their pin and their publication, however
 * often the process remaps the range; what invalidates without it
 * (reclaim, migration, MADV_DONTNEED, the pin's own copy-on-write break)
 * still can, and then the try returns -EAGAIN.
 */
static int stellar_pvdma_odp_try_pin(struct stellar_dev *sdev,
				     struct stellar_pvdma_mr *pm,
				     unsigned long chunk_no,
				     struct stellar_pvdma_chunk **chunk)
{
	unsigned long seq;
	int ret = -EAGAIN;

	mmap_read_lock(pm->mm);
	seq = mmu_interval_read_begin(&pm->notifier);
	*chunk = stellar_pvdma_new_chunk(sdev, pm, chunk_no, true);
	if (IS_ERR(*chunk)) {
		mmap_read_unlock(pm->mm);
		return PTR_ERR(*chunk);
	}
	spin_lock(&pm->odp_lock);
	if (!mmu_interval_read_retry(&pm->notifier, seq))
		ret = stellar_pvdma_publish(sdev, pm, chunk_no, *chunk,
					    GFP_ATOMIC);
	spin_unlock(&pm->odp_lock);
	mmap_read_unlock(pm->mm);
	if (ret)
		stellar_pvdma_release_chunk(sdev, pm, *chunk);
	return ret;
}

/*
 * Pin chunk @chunk_no of an on-demand registration.  An invalidation of
 * the range while the pages were being pinned makes them stale: they are
 * dropped and pinned again.  The slot is reserved first, so that
 * publishing under @pm->odp_lock allocates nothing.
 */
static int stellar_pvdma_odp_pin_chunk(struct stellar_dev *sdev,
				       struct stellar_pvdma_mr *pm,
				       unsigned long chunk_no,
				       struct stellar_pvdma_chunk **chunk)
{
	unsigned long started = jiffies;
	int tries, ret;

	ret = xa_reserve(&pm->chunks, chunk_no, GFP_KERNEL);
	if (ret)
		return ret;
	if (!mmget_not_zero(pm->mm)) {
		xa_release(&pm->chunks, chunk_no);
		return -EFAULT;
	}
	for (tries = 0; stellar_pvdma_odp_retry(tries, started); tries++) {
		ret = stellar_pvdma_odp_try_pin(sdev, pm, chunk_no, chunk);
		if (ret != -EAGAIN)
			break;
	}
	mmput(pm->mm);
	if (ret)
		xa_release(&pm->chunks, chunk_no);
	return ret;
}

/**
 * stellar_pvdma_get_chunk() - a chunk of an MR, pinned now if need be
 * @sdev: the device
 * @pm: the registration (the caller holds the MR)
 * @chunk_no: chunk number relative to the MR's first chunk
 * @why: the counter a new pin adds to (FAULTS, PREFETCHES, EAGER_PINS)
 * @chunk: receives the chunk
 *
 * Context: process context, may sleep.  Only this QP's work waits for a
 * pin; other chunks already pinned stay usable meanwhile.  For an
 * on-demand MR the chunk may be invalidated as soon as this returns: the
 * caller looks it up again with stellar_pvdma_find_chunk().
 *
 * Return: 0, -ENOMEM (RLIMIT_MEMLOCK or memory), -EFAULT (not mapped),
 * -EAGAIN (on-demand: invalidated again and again while being pinned).
 */
static int stellar_pvdma_get_chunk(struct stellar_dev *sdev,
				   struct stellar_pvdma_mr *pm,
				   unsigned long chunk_no,
				   enum stellar_pvdma_stat why,
				   struct stellar_pvdma_chunk **chunk)
{
	struct mem_cgroup *old_memcg;
	u64 t0;
	int ret = 0;

	*chunk = xa_load(&pm->chunks, chunk_no);
	if (*chunk)
		return 0;
	mutex_lock(&pm->pin_lock);
	*chunk = xa_load(&pm->chunks, chunk_no);
	if (*chunk)
		goto out;
	t0 = ktime_get_ns();
	/*
	 * Pins happen in the transport's worker: what they allocate is
	 * charged to the registering process's memory cgroup, not the
	 * worker's.
	 */
	old_memcg = set_active_memcg(pm->memcg);
	if (pm->odp)
		ret = stellar_pvdma_odp_pin_chunk(sdev, pm, chunk_no, chunk);
	else
		ret = stellar_pvdma_pin_chunk(sdev, pm, chunk_no, chunk);
	set_active_memcg(old_memcg);
	if (ret) {
		stellar_pvdma_pin_failed(sdev, ret);
		goto out;
	}
	stellar_pvdma_account_latency(sdev, ktime_get_ns() - t0);
	stellar_mem_count(sdev, why, 1);
	if (why == STELLAR_PVDMA_FAULTS)
		WRITE_ONCE(pm->faults, pm->faults + 1);
out:
	mutex_unlock(&pm->pin_lock);
	return ret;
}

/**
 * stellar_pvdma_pin_span() - pin the chunks of part of an MR now
 * @sdev: the device
 * @pm: the registration (the caller holds the MR)
 * @offset: first byte, relative to the MR's start
 * @len: bytes (@offset + @len within the MR)
 * @why: counter of the new pins (PREFETCHES or EAGER_PINS)
 *
 * Return: 0 or the first pin's error.
 */
static int stellar_pvdma_pin_span(struct stellar_dev *sdev,
				  struct stellar_pvdma_mr *pm, u64 offset,
				  u64 len, enum stellar_pvdma_stat why)
{
	unsigned long first, last, i;
	struct stellar_pvdma_chunk *chunk;
	int ret;

	if (!len)
		return 0;
	first = stellar_pvdma_chunk_no(pm, pm->start + offset);
	last = stellar_pvdma_chunk_no(pm, pm->start + offset + len - 1);
	for (i = first; i <= last; i++) {
		ret = stellar_pvdma_get_chunk(sdev, pm, i, why, &chunk);
		if (ret)
			return ret;
		cond_resched();
	}
	return 0;
}

/* advise_mr: pin [@offset, @offset + @len) of the MR ahead of use. */
int stellar_pvdma_prefetch(struct stellar_dev *sdev,
			   struct stellar_pvdma_mr *pm, u64 offset, u64 len)
{
	return stellar_pvdma_pin_span(sdev, pm, offset, len,
				      STELLAR_PVDMA_PREFETCHES);
}

/* Pin the chunks under [@offset, @offset + @len) as a first access would. */
int stellar_pvdma_fault_in(struct stellar_dev *sdev,
			   struct stellar_pvdma_mr *pm, u64 offset, u64 len)
{
	return stellar_pvdma_pin_span(sdev, pm, offset, len,
				      STELLAR_PVDMA_FAULTS);
}

/* Eager mode: pin the whole MR at registration. */
int stellar_pvdma_pin_all(struct stellar_dev *sdev,
			  struct stellar_pvdma_mr *pm)
{
	return stellar_pvdma_pin_span(sdev, pm, 0, pm->length,
				      STELLAR_PVDMA_EAGER_PINS);
}

/**
 * stellar_pvdma_dereg() - unpin everything and free the registration
 * @sdev: the device
 * @pm: the registration; its key can no longer be looked up and no copy
 *	holds it
 *
 * A copy through the eMTT holds nothing: once the MR's entries are
 * cleared, an RCU grace period makes sure that no such copy still uses a
 * page.  It is waited for here, so that nothing moves to or from the
 * memory after ibv_dereg_mr() returns, and expedited: a normal grace
 * period made deregistration about 40 times slower.  Registrations that
 * never had an entry (eMTT off, never touched, not eligible) skip it.
 */
void stellar_pvdma_dereg(struct stellar_dev *sdev,
			 struct stellar_pvdma_mr *pm)
{
	struct stellar_pvdma_chunk *chunk;
	unsigned long index;

	/* Waits for an invalidation in progress; none starts after it. */
	if (pm->odp)
		mmu_interval_notifier_remove(&pm->notifier);
	stellar_emtt_invalidate(sdev, pm);
	if (pm->emtt_filled)
		synchronize_rcu_expedited();
	xa_for_each(&pm->chunks, index, chunk) {
		stellar_pvdma_count_unpublished(sdev, chunk);
		stellar_pvdma_release_chunk(sdev, pm, chunk);
		cond_resched();
	}
	xa_destroy(&pm->chunks);
	mem_cgroup_put(pm->memcg);
	mmdrop(pm->mm);
	kfree(pm);
}

/* ---- translation and copies ------------------------------------------- */

static struct page *stellar_chunk_page(const struct stellar_pvdma_chunk *chunk,
				       unsigned long addr)
{
	unsigned long i = (addr - chunk->first_addr) >> PAGE_SHIFT;

	return chunk->pages ? chunk->pages[i] : nth_page(chunk->first, i);
}

/*
 * The page behind user address @addr of @pm: from the eMTT, else from the
 * MR's chunk table (pinning the chunk first if @may_pin), filling the
 * eMTT on the way.  *@held is the chunk to put when the copy is done
 * (on-demand MRs), or NULL.
 */
static int stellar_pvdma_translate(struct stellar_dev *sdev,
				   struct stellar_pvdma_mr *pm,
				   unsigned long addr, bool may_pin,
				   struct page **page,
				   struct stellar_pvdma_chunk **held)
{
	u64 iova_page = stellar_emtt_iova_page(&pm->owner, pm->start, addr,
					       PAGE_SHIFT);
	unsigned long chunk_no = stellar_pvdma_chunk_no(pm, addr);
	unsigned long started = jiffies;
	struct stellar_pvdma_chunk *chunk;
	u32 mem_type;
	int tries, ret;

	*held = NULL;
	stellar_mem_count(sdev, STELLAR_PVDMA_LOOKUPS, 1);
	if (pm->emtt_ok &&
	    stellar_emtt_lookup(sdev, pm, iova_page, page, &mem_type))
		return mem_type == STELLAR_MEM_HOST ? 0 : -EOPNOTSUPP;
	for (tries = 0; ; tries++) {
		chunk = stellar_pvdma_find_chunk(pm, chunk_no);
		if (chunk)
			break;
		if (!may_pin || !stellar_pvdma_odp_retry(tries, started))
			return -EFAULT;
		ret = stellar_pvdma_get_chunk(sdev, pm, chunk_no,
					      STELLAR_PVDMA_FAULTS, &chunk);
		if (ret)
			return ret;
		if (!pm->odp)
			break;
	}
	if (pm->odp)
		*held = chunk;
	*page = stellar_chunk_page(chunk, addr);
	if (pm->emtt_ok)
		stellar_emtt_fill(sdev, pm, iova_page, *page, STELLAR_MEM_HOST);
	return 0;
}

/**
 * stellar_pvdma_copy() - copy between a buffer and an MR's user memory
 * @sdev: the device
 * @pm: the registration (the caller holds the MR and checked the range)
 * @offset: first byte, relative to the MR's start
 * @buf: kernel buffer
 * @len: bytes
 * @to_mr: copy from @buf into the MR
 * @may_pin: may sleep to pin a chunk; if false, an unpinned chunk fails
 *
 * Return: 0, or a pin's error (-EFAULT, -ENOMEM).
 */
int stellar_pvdma_copy(struct stellar_dev *sdev, struct stellar_pvdma_mr *pm,
		       u64 offset, u8 *buf, u32 len, bool to_mr, bool may_pin)
{
	unsigned long addr = pm->start + offset;

	while (len) {
		u32 in_page = offset_in_page(addr);
		u32 n = min_t(u32, len, PAGE_SIZE - in_page);
		struct stellar_pvdma_chunk *held;
		struct page *page;
		void *kaddr;
		int ret;

		ret = stellar_pvdma_translate(sdev, pm, addr, may_pin, &page,
					      &held);
		if (ret)
			return ret;
		kaddr = kmap_local_page(page);
		if (to_mr)
			memcpy(kaddr + in_page, buf, n);
		else
			memcpy(buf, kaddr + in_page, n);
		kunmap_local(kaddr);
		if (held)
			stellar_pvdma_chunk_put(held);
		addr += n;
		buf += n;
		len -= n;
	}
	return 0;
}

/* ---- device life cycle ------------------------------------------------- */

/**
 * stellar_mem_dev_init() - a new device's PVDMA and eMTT state
 * @sdev: the device, settings already filled in
 *
 * Return: 0 or -ENOMEM.
 */
int stellar_mem_dev_init(struct stellar_dev *sdev)
{
	struct stellar_mem *mem = kzalloc(sizeof(*mem), GFP_KERNEL);

	if (!mem)
		return -ENOMEM;
	mem->counters = alloc_percpu(struct stellar_mem_counters);
	if (!mem->counters) {
		kfree(mem);
		return -ENOMEM;
	}
	mutex_init(&mem->emtt_lock);
	sdev->mem = mem;
	if (stellar_emtt_resize(sdev)) {
		stellar_mem_dev_fini(sdev);
		return -ENOMEM;
	}
	return 0;
}

/* Every MR is gone: free the device's memory state. */
void stellar_mem_dev_fini(struct stellar_dev *sdev)
{
	if (!sdev->mem)
		return;
	stellar_emtt_free(sdev);
	free_percpu(sdev->mem->counters);
	kfree(sdev->mem);
	sdev->mem = NULL;
}
