// SPDX-License-Identifier: GPL-2.0
/*
 * virtio-stellar: the eMTT, one translation cache per device from
 * (registration, page of the registration) straight to the pinned page.
 *
 * The table is direct-mapped and fixed in size (emtt_cache_size thousand
 * entries).  Readers take no lock: an entry's sequence count makes them
 * retry while a writer changes it, and RCU keeps a replaced table alive
 * until they are done.  Entries are tagged with the registration's serial
 * number, which is never reused, so an entry left behind by a
 * deregistered MR can never be mistaken for a live one; deregistration
 * still clears its entries so that they can be reused at once.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
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
stellar_emtt_slot_of(struct stellar_emtt_table *table,
		     const struct stellar_pvdma_mr *pm, u64 page_index)
{
	return &table->slots[stellar_emtt_slot(pm->emtt_base, page_index,
					       table->nslots)];
}

/**
 * stellar_emtt_lookup() - the cached translation of a page of an MR
 * @sdev: the device
 * @pm: the registration (the caller holds the MR)
 * @page_index: page number inside the registration
 * @page: receives the pinned page on a hit
 * @mem_type: receives its enum stellar_mem_type on a hit
 *
 * Return: true on a hit.  With the cache off, false without counting.
 */
bool stellar_emtt_lookup(struct stellar_dev *sdev,
			 const struct stellar_pvdma_mr *pm, u64 page_index,
			 struct page **page, u32 *mem_type)
{
	struct stellar_emtt_table *table;
	struct stellar_emtt_slot *slot;
	bool hit = false;
	unsigned int seq;

	rcu_read_lock();
	table = rcu_dereference(sdev->mem->emtt);
	if (!table) {
		rcu_read_unlock();
		return false;
	}
	slot = stellar_emtt_slot_of(table, pm, page_index);
	do {
		seq = read_seqcount_begin(&slot->seq);
		hit = READ_ONCE(slot->serial) == pm->serial &&
		      READ_ONCE(slot->page_index) == page_index;
		*page = READ_ONCE(slot->page);
		*mem_type = READ_ONCE(slot->mem_type);
	} while (read_seqcount_retry(&slot->seq, seq));
	rcu_read_unlock();
	stellar_emtt_count(sdev, hit ? STELLAR_EMTT_HITS : STELLAR_EMTT_MISSES,
			   1);
	return hit;
}

static void stellar_emtt_write(struct stellar_emtt_slot *slot, u64 serial,
			       u64 page_index, struct page *page, u32 mem_type)
{
	write_seqcount_begin(&slot->seq);
	WRITE_ONCE(slot->serial, serial);
	WRITE_ONCE(slot->page_index, page_index);
	WRITE_ONCE(slot->page, page);
	WRITE_ONCE(slot->mem_type, mem_type);
	write_seqcount_end(&slot->seq);
}

/**
 * stellar_emtt_fill() - remember a translation, replacing the entry's
 * previous one
 * @sdev: the device
 * @pm: the registration (the caller holds the MR)
 * @page_index: page number inside the registration
 * @page: the pinned page; pinned until @pm is deregistered
 * @mem_type: enum stellar_mem_type of @page
 */
void stellar_emtt_fill(struct stellar_dev *sdev,
		       const struct stellar_pvdma_mr *pm, u64 page_index,
		       struct page *page, u32 mem_type)
{
	struct stellar_emtt_table *table;
	struct stellar_emtt_slot *slot;
	bool evicted;

	rcu_read_lock();
	table = rcu_dereference(sdev->mem->emtt);
	if (!table) {
		rcu_read_unlock();
		return;
	}
	slot = stellar_emtt_slot_of(table, pm, page_index);
	spin_lock(&table->lock);
	evicted = slot->serial && (slot->serial != pm->serial ||
				   slot->page_index != page_index);
	stellar_emtt_write(slot, pm->serial, page_index, page, mem_type);
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
	if (slot->serial != pm->serial)
		return false;
	stellar_emtt_write(slot, 0, 0, NULL, STELLAR_MEM_HOST);
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
		u64 first = (chunk->first_addr >> PAGE_SHIFT) -
			    (pm->start >> PAGE_SHIFT);

		for (i = 0; i < chunk->npages; i++)
			cleared += stellar_emtt_clear(stellar_emtt_slot_of(table,
						pm, first + i), pm);
	}
	return cleared;
}

/**
 * stellar_emtt_invalidate() - drop every translation of a registration
 * @sdev: the device
 * @pm: the registration being torn down, before its pages are unpinned
 *
 * Only pinned pages can have entries: visit their slots, or sweep the
 * whole table when that is shorter.
 */
void stellar_emtt_invalidate(struct stellar_dev *sdev,
			     struct stellar_pvdma_mr *pm)
{
	struct stellar_emtt_table *table;
	u64 cleared = 0;
	u32 i;

	if (!pm->pinned_pages)
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
