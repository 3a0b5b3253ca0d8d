/* SPDX-License-Identifier: GPL-2.0 */
/*
 * virtio-stellar: work and completion queues as shared rings.
 *
 * The same ring format (include/uapi/stellar-abi.h) serves kernel and user
 * QPs and CQs: user rings are mmapped into the process, kernel rings are
 * only ever touched by the kernel.  Counters a process writes are read
 * once and bounded before use.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#ifndef STELLAR_QUEUE_H
#define STELLAR_QUEUE_H

#include <linux/spinlock.h>
#include <rdma/ib_verbs.h>

#include "stellar-abi.h"

/**
 * struct stellar_queue - one ring
 * @ring: header (counters), followed by the entries
 * @num_entries: power of two
 * @entry_size: bytes per entry, power of two
 * @size: bytes mapped, header included, page aligned
 * @mmap_entry: how the process maps a user ring, NULL for kernel rings
 * @lock: serialises the kernel side of the ring (its producer or consumer)
 */
struct stellar_queue {
	struct stellar_ring *ring;
	u32 num_entries;
	u32 entry_size;
	size_t size;
	struct rdma_user_mmap_entry *mmap_entry;
	spinlock_t lock;	/* the kernel's end of the ring */
};

int stellar_queue_init(struct stellar_queue *q, struct ib_udata *udata,
		       u32 min_entries, u32 entry_size,
		       struct stellar_ring_info *info);
void stellar_queue_free(struct stellar_queue *q);
void stellar_queue_swap_ring(struct stellar_queue *q,
			     struct stellar_queue *other);

/* Entry at free-running index @index. */
static inline void *stellar_queue_entry(const struct stellar_queue *q,
					u32 index)
{
	return (u8 *)q->ring + STELLAR_RING_HDR_SIZE +
	       (size_t)(index & (q->num_entries - 1)) * q->entry_size;
}

/*
 * Counter accessors.  The acquire loads pair with the other side's release
 * stores: entries below a producer value read with acquire are complete,
 * and entries below a consumer value read with acquire are free to reuse.
 */
static inline u32 stellar_queue_producer(const struct stellar_queue *q)
{
	/* pairs with the producer's store-release after filling entries */
	return smp_load_acquire(&q->ring->producer);
}

static inline u32 stellar_queue_consumer(const struct stellar_queue *q)
{
	/* pairs with the consumer's store-release after reading entries */
	return smp_load_acquire(&q->ring->consumer);
}

static inline void stellar_queue_set_producer(struct stellar_queue *q,
					      u32 producer)
{
	/* entries below @producer are written before they are published */
	smp_store_release(&q->ring->producer, producer);
}

static inline void stellar_queue_set_consumer(struct stellar_queue *q,
					      u32 consumer)
{
	/* entries below @consumer are read before they are given back */
	smp_store_release(&q->ring->consumer, consumer);
}

/**
 * stellar_queue_pending() - entries the producer has published
 * @q: ring whose consumer is the kernel
 * @consumer: the kernel's consumer counter
 *
 * Return: producer - consumer, or 0 if that exceeds the ring (a process
 * that corrupted its counter only stalls its own queue).
 */
static inline u32 stellar_queue_pending(const struct stellar_queue *q,
					u32 consumer)
{
	u32 pending = stellar_queue_producer(q) - consumer;

	return pending <= q->num_entries ? pending : 0;
}

/*
 * The RDMA core zaps the VMAs on its per-file list when it disassociates a
 * context.  rdma_user_mmap_io() adds one, but maps only physically
 * contiguous memory; drivers mapping otherwise register their VMA with the
 * exported rdma_umap_priv_init(), whose tracking struct the core declares
 * in its private core_priv.h (unchanged since Linux 5.5).
 */
struct rdma_umap_priv {
	struct vm_area_struct *vma;
	struct list_head list;
	struct rdma_user_mmap_entry *entry;
};

void rdma_umap_priv_init(struct rdma_umap_priv *priv,
			 struct vm_area_struct *vma,
			 struct rdma_user_mmap_entry *entry);

#endif /* STELLAR_QUEUE_H */
