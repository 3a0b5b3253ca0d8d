// SPDX-License-Identifier: GPL-2.0
/*
 * virtio-stellar: the eMTT, one translation cache per device from
 * (MR key, iova page) straight to the pinned page.
 *
 * The table is direct-mapped and fixed in size (emtt_cache_size thousand
 * entries).  An entry carries everything the MR lookup would check (key,
 * PD, access flags, which bytes of the page are in the MR) and the
 * registration's serial number, so a copy that hits needs neither the MR
 * table nor a reference on the MR (stellar_emtt_copy()).  Readers take no
 * lock: an entry's sequence count makes them retry while a writer changes
 * it, and they copy inside their RCU read-side section.  Deregistration
 * clears the MR's entries and then waits for an RCU grace period before
 * its pages are unpinned and before its key index can be reused, so no
 * reader can reach an unpinned page or see an old entry under a new MR.
 * A replaced table is freed after a grace period.  See
 * Documentation/memory.rst.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <linux/highmem.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "stellar_emtt_index.h"
#include "stellar_mem.h"

u64 stellar_emtt_read(struct stellar_dev *sdev, enum stellar_emtt_stat stat)
{
	struct stellar_emtt_table *table;
	u64 sum = 0;
	int cpu;

	if (stat == STELLAR_EMTT_ENTRIES) {
		rcu_read_lock();
		table = rcu_dereference(sdev->mem->emtt);
		sum = table ? table->nslots : 0;
		rcu_read_unlock();
		return sum;
	}
	for_each_possible_cpu(cpu)
		sum += READ_ONCE(per_cpu_ptr(sdev->mem->counters, cpu)->emtt[stat]);
	return sum;
}

static struct stellar_emtt_table *stellar_emtt_alloc(u32 nslots)
{
	struct stellar_emtt_table *table;
	u32 i;

	table = kvzalloc(struct_size(table, slots, nslots), GFP_KERNEL);
	if (!table)
		return NULL;
	spin_lock_init(&table->lock);
	table->nslots = nslots;
	for (i = 0; i < nslots; i++)
		seqcount_init(&table->slots[i].seq);
	return table;
}

/**
 * stellar_emtt_resize() - make the table match settings.emtt_cache_size
 * @sdev: the device
 *
 * The new table starts empty; translations refill it on demand.
 *
 * Return: 0 or -ENOMEM (the old table stays).
 */
int stellar_emtt_resize(struct stellar_dev *sdev)
{
	struct stellar_mem *mem = sdev->mem;
	struct stellar_emtt_table *table = NULL, *old;
	u32 nslots;

	mutex_lock(&mem->emtt_lock);
	nslots = stellar_emtt_nslots(READ_ONCE(sdev->settings.emtt_cache_size));
	old = rcu_dereference_protected(mem->emtt,
					lockdep_is_held(&mem->emtt_lock));
	if ((old ? old->nslots : 0) == nslots) {
		mutex_unlock(&mem->emtt_lock);
		return 0;
	}
	if (nslots) {
		table = stellar_emtt_alloc(nslots);
		if (!table) {
			mutex_unlock(&mem->emtt_lock);
			return -ENOMEM;
		}
	}
	rcu_assign_pointer(mem->emtt, table);
	mutex_unlock(&mem->emtt_lock);
	if (old)
		kvfree_rcu(old, rcu);
	return 0;
}

/* The device is going away: no reader can be left. */
void stellar_emtt_free(struct stellar_dev *sdev)
{
	kvfree(rcu_dereference_protected(sdev->mem->emtt, true));
	RCU_INIT_POINTER(sdev->mem->emtt, NULL);
}

static struct stellar_emtt_slot *
stellar_emtt_slot_of(struct stellar_emtt_table *table, u32 key, u64 iova_page)
{
	return &table->slots[stellar_emtt_index(key, iova_page, table->nslots)];
}

/* A consistent copy of @slot's contents. */
static void stellar_emtt_snapshot(struct stellar_emtt_slot *slot,
				  struct stellar_emtt_tag *tag,
				  struct page **page, u32 *mem_type)
{
	unsigned int seq;

	do {
		seq = read_seqcount_begin(&slot->seq);
		tag->serial = READ_ONCE(slot->tag.serial);
		tag->iova_page = READ_ONCE(slot->tag.iova_page);
		tag->pd = READ_ONCE(slot->tag.pd);
		tag->key = READ_ONCE(slot->tag.key);
		tag->access = READ_ONCE(slot->tag.access);
		tag->valid_first = READ_ONCE(slot->tag.valid_first);
		tag->valid_end = READ_ONCE(slot->tag.valid_end);
		*page = READ_ONCE(slot->page);
		*mem_type = READ_ONCE(slot->mem_type);
	} while (read_seqcount_retry(&slot->seq, seq));
}

/*
 * Does the entry of @iova's page answer for [@iova, @iova + @n), all in
 * that page, of registration *@serial (any registration if 0)?  On yes,
 * *@serial and *@page are the entry's.  Under rcu_read_lock(): the page
 * stays pinned until the caller's read-side section ends.
 */
static bool stellar_emtt_answer(struct stellar_emtt_table *table,
				const struct stellar_emtt_req *req, u64 iova,
				u32 n, u64 *serial, struct page **page)
{
	struct stellar_emtt_slot *slot;
	struct stellar_emtt_tag tag;
	u32 mem_type;

	slot = stellar_emtt_slot_of(table, req->key, iova >> PAGE_SHIFT);
	stellar_emtt_snapshot(slot, &tag, page, &mem_type);
	if (!stellar_emtt_tag_allows(&tag, req, iova, n, PAGE_SHIFT) ||
	    mem_type != STELLAR_MEM_HOST || (*serial && tag.serial != *serial))
		return false;
	*serial = tag.serial;
	return true;
}

static void stellar_emtt_memcpy(struct page *page, u64 iova, u8 *buf, u32 n,
				bool to_mr)
{
	void *kaddr = kmap_local_page(page);

	if (to_mr)
		memcpy(kaddr + offset_in_page(iova), buf, n);
	else
		memcpy(buf, kaddr + offset_in_page(iova), n);
	kunmap_local(kaddr);
}

/*
 * The first page of a copy, after checking that its first and last bytes
 * lie in one registration (an MR is contiguous in iova: then every byte
 * does), so that a copy the MR check would refuse copies nothing.
 */
static bool stellar_emtt_copy_first(struct stellar_dev *sdev,
				    const struct stellar_emtt_req *req,
				    u64 iova, u8 *buf, u32 len, u32 n,
				    bool to_mr, u64 *serial)
{
	u64 last = iova + len - 1;
	struct stellar_emtt_table *table;
	struct page *page, *last_page;
	bool hit = false;

	rcu_read_lock();
	table = rcu_dereference(sdev->mem->emtt);
	if (table)
		hit = stellar_emtt_answer(table, req, iova, n, serial, &page);
	if (hit && n < len)
		hit = stellar_emtt_answer(table, req, last & PAGE_MASK,
					  offset_in_page(last) + 1, serial,
					  &last_page);
	if (hit)
		stellar_emtt_memcpy(page, iova, buf, n, to_mr);
	rcu_read_unlock();
	return hit;
}

/**
 * stellar_emtt_copy() - the hit path: copy without looking the MR up
 * @sdev: the device
 * @req: the copy's PD, key and needed access
 * @iova: first byte
 * @buf: kernel buffer
 * @len: bytes, not 0
 * @to_mr: copy from @buf into the MR
 * @serial: receives the registration's serial if anything was copied
 *
 * The entries of the copy's first and last pages must answer every check
 * the MR lookup would make (key, PD, access, bounds) for one
 * registration; then page by page, while the entry of (key, iova page)
 * is that registration's, the copy goes straight to the pinned page
 * under rcu_read_lock() and the entry's sequence count: no MR table, no
 * reference, no lock, no atomic operation.  Anything else (cache off, a
 * miss, any doubt) stops it; the caller does the rest the slow way.
 *
 * Return: bytes copied from the start of the copy.
 */
u32 stellar_emtt_copy(struct stellar_dev *sdev,
		      const struct stellar_emtt_req *req, u64 iova, u8 *buf,
		      u32 len, bool to_mr, u64 *serial)
{
	struct stellar_emtt_table *table;
	u32 done, pages = 1;

	*serial = 0;
	if (iova + len - 1 < iova)
		return 0;
	done = min_t(u32, len, PAGE_SIZE - offset_in_page(iova));
	if (!stellar_emtt_copy_first(sdev, req, iova, buf, len, done, to_mr,
				     serial)) {
		*serial = 0;
		return 0;
	}
	while (done < len) {
		u32 n = min_t(u32, len - done, PAGE_SIZE);
		struct page *page;
		bool hit = false;

		rcu_read_lock();
		table = rcu_dereference(sdev->mem->emtt);
		if (table)
			hit = stellar_emtt_answer(table, req, iova + done, n,
						  serial, &page);
		if (hit)
			stellar_emtt_memcpy(page, iova + done, buf + done, n,
					    to_mr);
		rcu_read_unlock();
		if (!hit)
			break;
		done += n;
		pages++;
	}
	stellar_emtt_count(sdev, STELLAR_EMTT_HITS, pages);
	stellar_mem_count(sdev, STELLAR_PVDMA_LOOKUPS, pages);
	return done;
}

/**
 * stellar_emtt_lookup() - the slow path's look at the eMTT
 * @sdev: the device
 * @pm: the registration (the caller holds the MR; stellar_emtt_mr_eligible)
 * @iova_page: the page
 * @page: receives the pinned page on a hit
 * @mem_type: receives its enum stellar_mem_type on a hit
 *
 * Return: true on a hit.  With the cache off, false without counting.
 */
bool stellar_emtt_lookup(struct stellar_dev *sdev,
			 const struct stellar_pvdma_mr *pm, u64 iova_page,
			 struct page **page, u32 *mem_type)
{
	struct stellar_emtt_table *table;
	struct stellar_emtt_tag tag;
	bool hit;

	rcu_read_lock();
	table = rcu_dereference(sdev->mem->emtt);
	if (!table) {
		rcu_read_unlock();
		return false;
	}
	stellar_emtt_snapshot(stellar_emtt_slot_of(table, pm->owner.key,
						   iova_page),
			      &tag, page, mem_type);
	rcu_read_unlock();
	hit = tag.serial == pm->owner.serial && tag.key == pm->owner.key &&
	      tag.iova_page == iova_page;
	stellar_emtt_count(sdev, hit ? STELLAR_EMTT_HITS : STELLAR_EMTT_MISSES,
			   1);
	return hit;
}

static void stellar_emtt_write(struct stellar_emtt_slot *slot,
			       const struct stellar_emtt_tag *tag,
			       struct page *page, u32 mem_type)
{
	write_seqcount_begin(&slot->seq);
	WRITE_ONCE(slot->tag.serial, tag->serial);
	WRITE_ONCE(slot->tag.iova_page, tag->iova_page);
	WRITE_ONCE(slot->tag.pd, tag->pd);
	WRITE_ONCE(slot->tag.key, tag->key);
	WRITE_ONCE(slot->tag.access, tag->access);
	WRITE_ONCE(slot->tag.valid_first, tag->valid_first);
	WRITE_ONCE(slot->tag.valid_end, tag->valid_end);
	WRITE_ONCE(slot->page, page);
	WRITE_ONCE(slot->mem_type, mem_type);
	write_seqcount_end(&slot->seq);
}

/**
 * stellar_emtt_fill() - remember a translation, replacing the entry's
 * previous one
 * @sdev: the device
 * @pm: the registration (the caller holds the MR; stellar_emtt_mr_eligible)
 * @iova_page: the page
 * @page: the pinned page; pinned until @pm is deregistered
 * @mem_type: enum stellar_mem_type of @page
 *
 * Only a copy holding a reference on the MR fills: deregistration waits
 * for those, so no entry of a registration appears after it invalidated.
 */
void stellar_emtt_fill(struct stellar_dev *sdev, struct stellar_pvdma_mr *pm,
		       u64 iova_page, struct page *page, u32 mem_type)
{
	struct stellar_emtt_table *table;
	struct stellar_emtt_slot *slot;
	struct stellar_emtt_tag tag;
	bool evicted;

	if (!stellar_emtt_tag_init(&tag, &pm->owner, iova_page, PAGE_SHIFT))
		return;
	rcu_read_lock();
	table = rcu_dereference(sdev->mem->emtt);
	if (!table) {
		rcu_read_unlock();
		return;
	}
	if (!READ_ONCE(pm->emtt_filled))
		WRITE_ONCE(pm->emtt_filled, true);
	slot = stellar_emtt_slot_of(table, tag.key, iova_page);
	spin_lock(&table->lock);
	evicted = slot->tag.serial && (slot->tag.serial != tag.serial ||
				       slot->tag.iova_page != iova_page);
	stellar_emtt_write(slot, &tag, page, mem_type);
	spin_unlock(&table->lock);
	rcu_read_unlock();
	stellar_emtt_count(sdev, STELLAR_EMTT_FILLS, 1);
	if (evicted)
		stellar_emtt_count(sdev, STELLAR_EMTT_EVICTIONS, 1);
}

/* Clear @slot if it holds a translation of @pm; true if it did. */
static bool stellar_emtt_clear(struct stellar_emtt_slot *slot,
			       const struct stellar_pvdma_mr *pm)
{
	static const struct stellar_emtt_tag empty;

	if (slot->tag.serial != pm->owner.serial)
		return false;
	stellar_emtt_write(slot, &empty, NULL, STELLAR_MEM_HOST);
	return true;
}

/* Clear the entries of @pm's pinned pages, one slot per page. */
static u64 stellar_emtt_clear_pages(struct stellar_emtt_table *table,
				    struct stellar_pvdma_mr *pm)
{
	struct stellar_pvdma_chunk *chunk;
	unsigned long index;
	u64 cleared = 0;
	u32 i;

	xa_for_each(&pm->chunks, index, chunk) {
		u64 first = stellar_emtt_iova_page(&pm->owner, pm->start,
						   chunk->first_addr,
						   PAGE_SHIFT);

		for (i = 0; i < chunk->npages; i++)
			cleared += stellar_emtt_clear(stellar_emtt_slot_of(table,
						pm->owner.key, first + i), pm);
	}
	return cleared;
}

/**
 * stellar_emtt_invalidate() - drop every translation of a registration
 * @sdev: the device
 * @pm: the registration being torn down: no copy holds it any more and
 *	its key cannot be looked up, so nothing fills its entries again
 *
 * Only pinned pages can have entries: visit their slots, or sweep the
 * whole table when that is shorter.  Readers that saw an entry before it
 * was cleared may still be copying: the caller waits for an RCU grace
 * period before unpinning (see stellar_pvdma_dereg()).
 */
void stellar_emtt_invalidate(struct stellar_dev *sdev,
			     struct stellar_pvdma_mr *pm)
{
	struct stellar_emtt_table *table;
	u64 cleared = 0;
	u32 i;

	if (!pm->emtt_filled || !pm->pinned_pages)
		return;
	rcu_read_lock();
	table = rcu_dereference(sdev->mem->emtt);
	if (!table) {
		rcu_read_unlock();
		return;
	}
	spin_lock(&table->lock);
	if (pm->pinned_pages < table->nslots) {
		cleared = stellar_emtt_clear_pages(table, pm);
	} else {
		for (i = 0; i < table->nslots; i++)
			cleared += stellar_emtt_clear(&table->slots[i], pm);
	}
	spin_unlock(&table->lock);
	rcu_read_unlock();
	stellar_emtt_count(sdev, STELLAR_EMTT_INVALIDATIONS, cleared);
}
