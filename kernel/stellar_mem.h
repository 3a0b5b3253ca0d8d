/* SPDX-License-Identifier: GPL-2.0 */
/*
 * virtio-stellar: PVDMA (pinning user memory on first access) and the
 * eMTT (the device-wide translation cache).  See Documentation/memory.rst.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#ifndef STELLAR_MEM_H
#define STELLAR_MEM_H

#include <linux/mm_types.h>
#include <linux/mmu_notifier.h>
#include <linux/mutex.h>
#include <linux/seqlock.h>
#include <linux/xarray.h>

#include "stellar.h"
#include "stellar_emtt_index.h"

/* PVDMA pins user memory in naturally aligned chunks of this size. */
#define STELLAR_PVDMA_CHUNK_SHIFT	21
#define STELLAR_PVDMA_CHUNK_SIZE	(1UL << STELLAR_PVDMA_CHUNK_SHIFT)
#define STELLAR_PVDMA_CHUNK_PAGES	(STELLAR_PVDMA_CHUNK_SIZE >> PAGE_SHIFT)

/* What an eMTT entry translates to; only host memory exists so far. */
enum stellar_mem_type {
	STELLAR_MEM_HOST,	/* pinned pages of a process */
	STELLAR_MEM_DEVICE,	/* device memory (dma-buf MRs, later) */
};

/* Per-CPU memory counters, indexed by the uAPI enums. */
struct stellar_mem_counters {
	u64 pvdma[__STELLAR_PVDMA_MAX];
	u64 emtt[__STELLAR_EMTT_MAX];
};

/**
 * struct stellar_emtt_slot - one cached translation
 * @seq: readers retry while a writer changes the entry
 * @mem_type: enum stellar_mem_type of @page
 * @tag: whose page this is and what the checks of a copy need
 *	 (@tag.serial 0: empty)
 * @page: the pinned page
 */
struct stellar_emtt_slot {
	seqcount_t seq;
	u32 mem_type;
	struct stellar_emtt_tag tag;
	struct page *page;
};

/**
 * struct stellar_emtt_table - the eMTT: a fixed-size, direct-mapped table
 * @rcu: the table is freed after a grace period when it is replaced
 * @lock: serialises writers (fills and invalidations)
 * @nslots: entries in @slots, not 0
 * @slots: the entries
 */
struct stellar_emtt_table {
	struct rcu_head rcu;
	spinlock_t lock;		/* writers of @slots */
	u32 nslots;
	struct stellar_emtt_slot slots[];
};

/**
 * struct stellar_mem - a device's PVDMA and eMTT state
 * @counters: per-CPU statistics
 * @emtt: the translation cache, NULL when it is off
 * @emtt_lock: serialises replacing @emtt
 * @next_serial: source of the serial numbers of registrations, pins, QPs
 *		 and SRQs (never reused)
 */
struct stellar_mem {
	struct stellar_mem_counters __percpu *counters;
	struct stellar_emtt_table __rcu *emtt;
	struct mutex emtt_lock;		/* replacing @emtt */
	atomic64_t next_serial;
};

/**
 * struct stellar_pvdma_chunk - the pinned pages of one chunk of an MR
 * @first_addr: user address of the first pinned page
 * @npages: pinned pages (fewer than a chunk at the MR's ends)
 * @first: page at @first_addr
 * @pages: every page, or NULL when one pin of a large folio holds them
 *	   all (then page i is nth_page(@first, i))
 * @users: on-demand MRs: the MR's chunk table and each copy using a page
 *	   of the chunk; the pages are unpinned when it reaches 0
 * @retired: link in the list of chunks an invalidation took out
 * @rcu: lockless readers of the chunk table may still look at @users
 */
struct stellar_pvdma_chunk {
	unsigned long first_addr;
	u32 npages;
	struct page *first;
	struct page **pages;
	refcount_t users;
	struct list_head retired;
	struct rcu_head rcu;
};

/**
 * struct stellar_pvdma_mr - the user memory behind an MR
 * @mm: the owner's address space (mmgrab: the struct, not the memory)
 * @start: user address of the MR's first byte
 * @length: bytes
 * @owner: the MR as the eMTT sees it (serial, key, PD, access, iova)
 * @emtt_ok: the eMTT may translate this MR (stellar_emtt_mr_eligible())
 * @emtt_filled: an eMTT entry was written for it: deregistration must
 *		 wait for an RCU grace period before unpinning
 * @lock_limit: pages the owner may pin (RLIMIT_MEMLOCK at registration)
 * @writable: pages are pinned for writing
 * @chunks: chunk number (relative to @start's chunk) to pinned chunk
 * @pin_lock: serialises pinning
 * @pinned_pages: pages pinned and charged to @mm
 * @faults: chunks pinned on first access (under @pin_lock; read once by
 *	    restrack without it)
 * @sdev: the device
 * @odp: IB_ACCESS_ON_DEMAND: the pins follow the address space
 * @implicit: implicit ODP: the whole address space, from 0
 * @chunk_shift: log2 of the chunk size (STELLAR_PVDMA_CHUNK_SHIFT, or
 *		 PAGE_SHIFT for @implicit)
 * @notifier: on-demand MRs: tells of changes to the MR's address range
 * @odp_lock: on-demand MRs: orders publishing a chunk against an
 *	      invalidation of its range
 */
struct stellar_pvdma_mr {
	struct mm_struct *mm;
	struct mem_cgroup *memcg;	/* the registering process's, held */
	unsigned long start;
	u64 length;
	struct stellar_emtt_mr owner;
	bool emtt_ok;
	bool emtt_filled;
	unsigned long lock_limit;
	bool writable;
	struct xarray chunks;
	struct mutex pin_lock;		/* pinning a chunk */
	unsigned long pinned_pages;
	unsigned long faults;
	struct stellar_dev *sdev;
	bool odp;
	bool implicit;
	unsigned int chunk_shift;
	struct mmu_interval_notifier notifier;
	spinlock_t odp_lock;		/* chunk table vs. invalidation */
};

static inline void stellar_mem_count(struct stellar_dev *sdev,
				     enum stellar_pvdma_stat stat, s64 n)
{
	this_cpu_add(sdev->mem->counters->pvdma[stat], n);
}

static inline void stellar_emtt_count(struct stellar_dev *sdev,
				      enum stellar_emtt_stat stat, s64 n)
{
	this_cpu_add(sdev->mem->counters->emtt[stat], n);
}

/* stellar_emtt.c */
void stellar_emtt_free(struct stellar_dev *sdev);
u32 stellar_emtt_copy(struct stellar_dev *sdev,
		      const struct stellar_emtt_req *req, u64 iova, u8 *buf,
		      u32 len, bool to_mr, u64 *serial);
bool stellar_emtt_lookup(struct stellar_dev *sdev,
			 const struct stellar_pvdma_mr *pm, u64 iova_page,
			 struct page **page, u32 *mem_type);
void stellar_emtt_fill(struct stellar_dev *sdev, struct stellar_pvdma_mr *pm,
		       u64 iova_page, struct page *page, u32 mem_type);
void stellar_emtt_invalidate(struct stellar_dev *sdev,
			     struct stellar_pvdma_mr *pm);
u64 stellar_emtt_read(struct stellar_dev *sdev, enum stellar_emtt_stat stat);

/* stellar_pvdma.c */
u64 stellar_pvdma_read(struct stellar_dev *sdev, enum stellar_pvdma_stat stat);
struct stellar_pvdma_mr *stellar_pvdma_reg(struct stellar_dev *sdev,
					   u64 start, u64 length, int access);
struct stellar_pvdma_mr *stellar_pvdma_reg_implicit(struct stellar_dev *sdev,
						    int access);
void stellar_pvdma_set_owner(struct stellar_pvdma_mr *pm, u32 key,
			     const void *pd, int access, u64 iova);
void stellar_pvdma_dereg(struct stellar_dev *sdev,
			 struct stellar_pvdma_mr *pm);
int stellar_pvdma_pin_all(struct stellar_dev *sdev,
			  struct stellar_pvdma_mr *pm);
int stellar_pvdma_fault_in(struct stellar_dev *sdev,
			   struct stellar_pvdma_mr *pm, u64 offset, u64 len);
int stellar_pvdma_prefetch(struct stellar_dev *sdev,
			   struct stellar_pvdma_mr *pm, u64 offset, u64 len);
int stellar_pvdma_copy(struct stellar_dev *sdev, struct stellar_pvdma_mr *pm,
		       u64 offset, u8 *buf, u32 len, bool to_mr, bool may_pin);

#endif /* STELLAR_MEM_H */
