// SPDX-License-Identifier: GPL-2.0
/*
 * virtio-stellar: ring memory for work and completion queues.
 *
 * A user ring is a set of pages charged to the creating process's memory
 * cgroup, mapped contiguously for the kernel with vmap() and owned by an
 * rdma_user_mmap_entry: it is freed by the entry's mmap_free callback once
 * the queue was destroyed and the last mapping of it is gone.  Rings are
 * mapped as PFN maps registered with the RDMA core's VMA tracking, so when
 * the device is disassociated from the process (namespace change, removal)
 * the core zaps them and the process sees a zeroed dummy page instead: the
 * kernel never shares a ring with a process after that.  Kernel rings are
 * plain vzalloc() memory.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/vmalloc.h>
#include <rdma/uverbs_ioctl.h>

#include "stellar.h"

/**
 * struct stellar_mmap_entry - a user ring, as the mmap machinery sees it
 * @rdma: core entry (offset, length, reference count)
 * @buf: the ring memory, @pages mapped contiguously
 * @pages: the ring's pages
 * @npages: number of @pages
 */
struct stellar_mmap_entry {
	struct rdma_user_mmap_entry rdma;
	void *buf;
	struct page **pages;
	unsigned int npages;
};

static struct stellar_mmap_entry *
to_smmap(struct rdma_user_mmap_entry *rdma)
{
	return container_of(rdma, struct stellar_mmap_entry, rdma);
}

static void stellar_ring_free(struct stellar_mmap_entry *entry)
{
	unsigned int i;

	vunmap(entry->buf);
	for (i = 0; i < entry->npages; i++)
		__free_page(entry->pages[i]);
	kvfree(entry->pages);
	kfree(entry);
}

/*
 * A zeroed ring of @size bytes for a process.  vmalloc_user() cannot
 * charge a memory cgroup, so the pages are allocated one by one and
 * mapped with vmap(); stellar_mmap() inserts the same pages.
 */
static struct stellar_mmap_entry *stellar_ring_alloc(size_t size)
{
	unsigned int npages = size >> PAGE_SHIFT;
	struct stellar_mmap_entry *entry;

	entry = kzalloc(sizeof(*entry), STELLAR_GFP_USER);
	if (!entry)
		return NULL;
	entry->pages = kvcalloc(npages, sizeof(*entry->pages),
				STELLAR_GFP_USER);
	if (!entry->pages)
		goto err;
	for (; entry->npages < npages; entry->npages++) {
		entry->pages[entry->npages] =
			alloc_page(STELLAR_GFP_USER | __GFP_ZERO);
		if (!entry->pages[entry->npages])
			goto err;
	}
	entry->buf = vmap(entry->pages, npages, VM_MAP, PAGE_KERNEL);
	if (!entry->buf)
		goto err;
	return entry;

err:
	stellar_ring_free(entry);
	return NULL;
}

static int stellar_queue_map_user(struct stellar_queue *q,
				  struct ib_udata *udata,
				  struct stellar_ring_info *info)
{
	struct stellar_ucontext *uctx = rdma_udata_to_drv_context(udata,
			struct stellar_ucontext, ibuc);
	struct stellar_mmap_entry *entry;
	int ret;

	entry = stellar_ring_alloc(q->size);
	if (!entry)
		return -ENOMEM;
	ret = rdma_user_mmap_entry_insert(&uctx->ibuc, &entry->rdma, q->size);
	if (ret) {
		stellar_ring_free(entry);
		return ret;
	}
	q->ring = entry->buf;
	q->mmap_entry = &entry->rdma;
	info->mmap_offset = rdma_user_mmap_get_offset(&entry->rdma);
	info->mmap_size = q->size;
	return 0;
}

/**
 * stellar_queue_init() - allocate a ring
 * @q: the queue
 * @udata: the creating process's data, NULL for a kernel queue
 * @min_entries: entries needed (rounded up to a power of two)
 * @entry_size: bytes per entry (rounded up to a power of two)
 * @info: for user queues, filled with what the process needs to map it
 *
 * Return: 0 or a negative errno.
 */
int stellar_queue_init(struct stellar_queue *q, struct ib_udata *udata,
		       u32 min_entries, u32 entry_size,
		       struct stellar_ring_info *info)
{
	memset(q, 0, sizeof(*q));
	spin_lock_init(&q->lock);
	q->num_entries = roundup_pow_of_two(max_t(u32, min_entries, 1));
	q->entry_size = roundup_pow_of_two(entry_size);
	q->size = PAGE_ALIGN(STELLAR_RING_HDR_SIZE +
			     (size_t)q->num_entries * q->entry_size);
	if (udata) {
		info->num_entries = q->num_entries;
		info->entry_size = q->entry_size;
		return stellar_queue_map_user(q, udata, info);
	}
	q->ring = vzalloc(q->size);
	return q->ring ? 0 : -ENOMEM;
}

/**
 * stellar_queue_free() - release a ring
 * @q: the queue
 *
 * A user ring lives on until the last mmap() of it has finished; the
 * process can no longer map it after this returns.
 */
void stellar_queue_free(struct stellar_queue *q)
{
	if (q->mmap_entry)
		rdma_user_mmap_entry_remove(q->mmap_entry);
	else
		vfree(q->ring);
	q->ring = NULL;
	q->mmap_entry = NULL;
}

/*
 * Map @npages of @entry as a PFN map: the core's zap_vma_ptes() only
 * works on those, and the entry (not the page tables) keeps the pages.
 */
static int stellar_mmap_pages(struct vm_area_struct *vma,
			      struct stellar_mmap_entry *entry,
			      unsigned long npages)
{
	unsigned long i;
	int ret;

	for (i = 0; i < npages; i++) {
		ret = remap_pfn_range(vma, vma->vm_start + i * PAGE_SIZE,
				      page_to_pfn(entry->pages[i]), PAGE_SIZE,
				      vma->vm_page_prot);
		if (ret)
			return ret;
	}
	return 0;
}

/**
 * stellar_mmap() - ib_device_ops.mmap: map a ring into the process
 * @ibuc: the process's context
 * @vma: a shared mapping of at most the ring's size at the ring's offset
 *
 * The VMA is handed to the core's tracking, which takes its own reference
 * on the entry until the VMA is closed or zapped.
 *
 * Return: 0 or a negative errno.
 */
int stellar_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma)
{
	size_t len = vma->vm_end - vma->vm_start;
	struct rdma_user_mmap_entry *rdma;
	struct rdma_umap_priv *priv;
	int ret = -EINVAL;

	rdma = rdma_user_mmap_entry_get(ibuc, vma);
	if (!rdma)
		return -EINVAL;
	/* a private writable PFN map would be copy-on-write */
	if (!(vma->vm_flags & VM_SHARED) || len > rdma->npages * PAGE_SIZE)
		goto out;
	priv = kzalloc(sizeof(*priv), STELLAR_GFP_USER);
	if (!priv) {
		ret = -ENOMEM;
		goto out;
	}
	/* as remap_vmalloc_range(): the ring cannot grow or be dumped */
	vma->vm_flags |= VM_DONTEXPAND | VM_DONTDUMP;
	ret = stellar_mmap_pages(vma, to_smmap(rdma), len >> PAGE_SHIFT);
	if (ret) {
		/* mmap() fails and unmaps what was mapped */
		kfree(priv);
		goto out;
	}
	rdma_umap_priv_init(priv, vma, rdma);
out:
	rdma_user_mmap_entry_put(rdma);
	return ret;
}

/* ib_device_ops.mmap_free: the last reference to a user ring is gone. */
void stellar_mmap_free(struct rdma_user_mmap_entry *rdma)
{
	stellar_ring_free(to_smmap(rdma));
}

/**
 * stellar_queue_swap_ring() - exchange the rings of two queues
 * @q: a queue in use; the caller holds its lock
 * @other: a queue from stellar_queue_init() that no one else can see
 *
 * The locks stay where they are: @q keeps serialising its (new) ring,
 * and @other ends up holding the old ring, for stellar_queue_free().
 */
void stellar_queue_swap_ring(struct stellar_queue *q,
			     struct stellar_queue *other)
{
	swap(q->ring, other->ring);
	swap(q->num_entries, other->num_entries);
	swap(q->entry_size, other->entry_size);
	swap(q->size, other->size);
	swap(q->mmap_entry, other->mmap_entry);
}
