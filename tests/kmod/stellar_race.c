// SPDX-License-Identifier: GPL-2.0
/*
 * stellar_race: a test module that widens the race windows of
 * virtio_stellar's object lifetimes from a few instructions to tens of
 * milliseconds, so that the integration tests find a use after free every
 * time instead of by luck.  Never load it on a production host.
 *
 * It calls the driver's own lookup and MR functions (their addresses come
 * from kallsyms through a kprobe) and slows chosen points down with
 * kprobes.  mode= selects the window:
 *
 *   qp_create   a QP creation that fails after the driver chose its QPN:
 *               every copy_to_user() of stellar_create_qp() takes
 *               @delay_ms, while a thread looks up the QPN handed out
 *               last and holds the QP it finds for @hold_ms.  A QP that
 *               is freed while held is reported with a WARNING.
 *   qp_lookup   a lookup racing a destroy: the thread's xa_load() inside
 *               stellar_qp_get() takes @delay_ms after it found a QP, while
 *               the QP is being destroyed.  A QP freed before the lookup
 *               took its reference is reported with a WARNING.
 *   frmr_fence  an invalidation racing a copy into a fast-registration MR:
 *               one CPU copies into the MR, slowed down by @delay_ms inside
 *               the copy, while the other invalidates the key.  The result
 *               (parameter "result": pass or fail) says whether bytes
 *               landed after stellar_mr_invalidate() returned.
 *
 * "held" counts the QPs the thread held (a test checks that the windows
 * were exercised at all).  Load it after a device (@device) exists;
 * qp_* modes run until the module is removed, frmr_fence runs at load.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#define pr_fmt(fmt) "stellar_race: " fmt

#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/kprobes.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>

#include "stellar.h"
#include "stellar_transport.h"

static char *mode = "qp_create";
module_param(mode, charp, 0444);
MODULE_PARM_DESC(mode, "qp_create, qp_lookup or frmr_fence");
static char *device = "stellar0";
module_param(device, charp, 0444);
MODULE_PARM_DESC(device, "the stellar device to test");
static uint delay_ms = 50;
module_param(delay_ms, uint, 0444);
MODULE_PARM_DESC(delay_ms, "how long the widened window lasts");
static uint hold_ms = 60;
module_param(hold_ms, uint, 0444);
MODULE_PARM_DESC(hold_ms, "qp_create: how long a found QP is held");
static atomic_t held = ATOMIC_INIT(0);
module_param_named(held, held.counter, int, 0444);
MODULE_PARM_DESC(held, "QPs the lookup thread found and held");
static char result[8] = "none";
module_param_string(result, result, sizeof(result), 0444);
MODULE_PARM_DESC(result, "frmr_fence: pass or fail");

typedef struct stellar_qp *(*qp_get_fn)(struct stellar_dev *, u32);
typedef void (*qp_put_fn)(struct stellar_qp *);
typedef int (*mr_copy_fn)(struct stellar_pd *, u32, bool, u64, void *, u32,
			  enum stellar_copy_dir, int);
typedef int (*mr_fast_reg_fn)(struct stellar_pd *, struct ib_mr *, u32, int);
typedef int (*mr_invalidate_fn)(struct stellar_pd *, u32);

static struct ib_device *ibdev;
static struct task_struct *hammer;
static qp_get_fn qp_get;
static qp_put_fn qp_put;

typedef unsigned long (*kallsyms_lookup_name_fn)(const char *name);

/*
 * The address of a kernel or module function.  kallsyms_lookup_name() is
 * not exported: a kprobe on it, a function nothing calls while the test
 * runs, finds it.  A kprobe on the looked-up function itself would patch
 * code that softirqs run at that moment (stellar_qp_get() on every
 * received packet), and under TCG one such patch sent a CPU to address 0.
 */
static void *race_symbol(const char *name)
{
	static kallsyms_lookup_name_fn lookup;
	void *addr;

	if (!lookup) {
		struct kprobe kp = { .symbol_name = "kallsyms_lookup_name" };

		if (register_kprobe(&kp)) {
			pr_err("cannot find kallsyms_lookup_name\n");
			return NULL;
		}
		lookup = (kallsyms_lookup_name_fn)kp.addr;
		unregister_kprobe(&kp);
	}
	addr = (void *)lookup(name);
	if (!addr)
		pr_err("cannot find %s\n", name);
	return addr;
}

/* Is the function that called the probed one named @prefix...? */
static bool race_called_from(struct pt_regs *regs, const char *prefix)
{
	unsigned long ret = *(unsigned long *)kernel_stack_pointer(regs);
	char name[KSYM_SYMBOL_LEN];

	snprintf(name, sizeof(name), "%ps", (void *)ret);
	return !strncmp(name, prefix, strlen(prefix));
}

/* ---- qp_create: copy_to_user() of stellar_create_qp() is slow ------- */

static int race_slow_create_copy(struct kprobe *kp, struct pt_regs *regs)
{
	if (race_called_from(regs, "stellar_create_qp"))
		mdelay(delay_ms);
	return 0;
}

static struct kprobe create_copy_probe = {
	.symbol_name = "_copy_to_user",
	.pre_handler = race_slow_create_copy,
};

/* ---- qp_lookup: xa_load() in the thread's lookups is slow ----------- */

static int race_slow_lookup(struct kretprobe_instance *ri,
			    struct pt_regs *regs)
{
	if (current == hammer && regs_return_value(regs))
		mdelay(delay_ms);
	return 0;
}

static struct kretprobe lookup_probe = {
	.kp.symbol_name = "xa_load",
	.handler = race_slow_lookup,
	.maxactive = 4,
};

/*
 * A QP whose memory was freed no longer points at its device (SLUB
 * poisons or init_on_free zeroes it).  Report it, and leave the dead
 * object alone instead of dropping a reference into it.
 */
static bool race_qp_alive(struct stellar_qp *qp, u32 qpn)
{
	if (READ_ONCE(qp->ibqp.device) == ibdev &&
	    READ_ONCE(qp->ibqp.qp_num) == qpn)
		return true;
	WARN(1, "stellar_race: QP %#x freed while the lookup held it\n", qpn);
	return false;
}

static void race_hold(struct stellar_dev *sdev, u32 qpn, unsigned int ms)
{
	struct stellar_qp *qp = qp_get(sdev, qpn);

	if (!qp)
		return;
	atomic_inc(&held);
	if (ms)
		msleep(ms);
	if (race_qp_alive(qp, qpn))
		qp_put(qp);
}

/*
 * Look up the QPNs around the allocation cursor: qp_create holds the QPN
 * handed out last (a creation in progress), qp_lookup looks at the few
 * handed out before (live QPs about to be destroyed) and after.
 */
static int race_hammer(void *data)
{
	struct stellar_dev *sdev = data;
	bool create = !strcmp(mode, "qp_create");
	u32 next, qpn;

	while (!kthread_should_stop()) {
		next = READ_ONCE(sdev->next_qpn);
		if (create)
			race_hold(sdev, next - 1, hold_ms);
		else
			for (qpn = next - 3; qpn != next + 2; qpn++)
				race_hold(sdev, qpn, 0);
		/*
		 * A voluntary sleep, not cond_resched(): a thread that only
		 * ever gets preempted holds up RCU Tasks grace periods, and
		 * with them the kprobe optimizer, which holds kprobe_mutex
		 * and text_mutex meanwhile.
		 */
		usleep_range(100, 200);
	}
	return 0;
}

static int race_start_qp(void)
{
	int ret;

	qp_get = race_symbol("stellar_qp_get");
	qp_put = race_symbol("stellar_qp_put");
	if (!qp_get || !qp_put)
		return -ENOENT;
	if (!strcmp(mode, "qp_create"))
		ret = register_kprobe(&create_copy_probe);
	else
		ret = register_kretprobe(&lookup_probe);
	if (ret) {
		pr_err("cannot probe the window: %d\n", ret);
		return ret;
	}
	hammer = kthread_run(race_hammer, to_sdev(ibdev), "stellar_race");
	if (!IS_ERR(hammer))
		return 0;
	ret = PTR_ERR(hammer);
	hammer = NULL;
	if (!strcmp(mode, "qp_create"))
		unregister_kprobe(&create_copy_probe);
	else
		unregister_kretprobe(&lookup_probe);
	return ret;
}

/* ---- frmr_fence: a slow copy into a fast-registration MR ------------ */

struct race_frmr {
	struct stellar_pd *spd;
	struct ib_mr *mr;
	u32 key;
	void *page;
	void *src;
	mr_copy_fn copy;
	mr_invalidate_fn invalidate;
	atomic_t in_copy;
	struct completion copied;
	struct completion invalidated;
	int copy_ret;
	int inv_ret;
	bool landed_late;
	bool irqs_off;
	ktime_t t_copy, t_seen, t_inv, t_copied;
};

static struct race_frmr *frmr;

static int race_slow_frmr_copy(struct kprobe *kp, struct pt_regs *regs)
{
	void *mem = (void *)regs->di;

	if (frmr && mem >= frmr->page && mem < frmr->page + PAGE_SIZE) {
		/* A kprobe handler runs as from an NMI: only the fast clock. */
		frmr->t_copy = ns_to_ktime(ktime_get_mono_fast_ns());
		frmr->irqs_off = irqs_disabled();
		atomic_set(&frmr->in_copy, 1);
		mdelay(delay_ms);
	}
	return 0;
}

static struct kprobe frmr_copy_probe = {
	.symbol_name = "stellar_copy_chunk",
	.pre_handler = race_slow_frmr_copy,
};

static int race_frmr_copier(void *data)
{
	struct race_frmr *f = data;

	f->copy_ret = f->copy(f->spd, f->key, true, f->mr->iova, f->src, 512,
			      STELLAR_COPY_TO_MR, IB_ACCESS_REMOTE_WRITE);
	f->t_copied = ktime_get();
	complete_all(&f->copied);
	return 0;
}

/* Invalidate while the copy is under way, then watch the memory. */
static int race_frmr_invalidator(void *data)
{
	struct race_frmr *f = data;
	u8 *snapshot = kmalloc(PAGE_SIZE, GFP_KERNEL);

	unsigned long timeout = jiffies + 5 * HZ;

	/* Spin rather than sleep: no wake-up latency between the CPUs. */
	while (!atomic_read(&f->in_copy) && time_before(jiffies, timeout))
		cpu_relax();
	if (snapshot && atomic_read(&f->in_copy)) {
		f->t_seen = ktime_get();
		f->inv_ret = f->invalidate(f->spd, f->key);
		f->t_inv = ktime_get();
		memcpy(snapshot, f->page, PAGE_SIZE);
		wait_for_completion(&f->copied);
		f->landed_late = memcmp(snapshot, f->page, PAGE_SIZE);
	} else {
		f->inv_ret = -ETIMEDOUT;
	}
	kfree(snapshot);
	complete(&f->invalidated);
	return 0;
}

static int race_frmr_register(struct race_frmr *f, struct ib_pd *pd)
{
	mr_fast_reg_fn fast_reg = race_symbol("stellar_mr_fast_reg");
	struct scatterlist sg;
	int n;

	f->copy = race_symbol("stellar_mr_copy");
	f->invalidate = race_symbol("stellar_mr_invalidate");
	if (!fast_reg || !f->copy || !f->invalidate)
		return -ENOENT;
	f->mr = ib_alloc_mr(pd, IB_MR_TYPE_MEM_REG, 1);
	if (IS_ERR(f->mr))
		return PTR_ERR(f->mr);
	sg_init_one(&sg, f->page, PAGE_SIZE);
	/* A software device: the "DMA address" is the kernel address. */
	if (ib_dma_map_sg(ibdev, &sg, 1, DMA_BIDIRECTIONAL) != 1)
		return -ENOMEM;
	n = ib_map_mr_sg(f->mr, &sg, 1, NULL, PAGE_SIZE);
	ib_dma_unmap_sg(ibdev, &sg, 1, DMA_BIDIRECTIONAL);
	if (n != 1)
		return n < 0 ? n : -EINVAL;
	f->key = ib_inc_rkey(f->mr->rkey);
	return fast_reg(f->spd, f->mr, f->key,
			IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE);
}

/* Copier on one CPU, invalidator on another; both must be online. */
static int race_frmr_run(struct race_frmr *f)
{
	struct task_struct *copier, *inval;

	if (num_online_cpus() < 2)
		return -EOPNOTSUPP;
	copier = kthread_create(race_frmr_copier, f, "stellar_race_copy");
	if (IS_ERR(copier))
		return PTR_ERR(copier);
	inval = kthread_create(race_frmr_invalidator, f, "stellar_race_inv");
	if (IS_ERR(inval)) {
		kthread_stop(copier);
		return PTR_ERR(inval);
	}
	kthread_bind(copier, cpumask_first(cpu_online_mask));
	kthread_bind(inval, cpumask_next(cpumask_first(cpu_online_mask),
					 cpu_online_mask));
	wake_up_process(inval);
	wake_up_process(copier);
	wait_for_completion(&f->invalidated);
	wait_for_completion(&f->copied);
	return 0;
}

static int race_frmr_fence(void)
{
	struct ib_pd *pd;
	int ret;

	frmr = kzalloc(sizeof(*frmr), GFP_KERNEL);
	if (!frmr)
		return -ENOMEM;
	init_completion(&frmr->copied);
	init_completion(&frmr->invalidated);
	frmr->page = (void *)get_zeroed_page(GFP_KERNEL);
	frmr->src = kmalloc(512, GFP_KERNEL);
	pd = ib_alloc_pd(ibdev, 0);
	ret = IS_ERR(pd) ? PTR_ERR(pd) : 0;
	if (ret || !frmr->page || !frmr->src) {
		ret = ret ?: -ENOMEM;
		goto out;
	}
	memset(frmr->src, 0xa5, 512);
	frmr->spd = to_spd(pd);
	ret = race_frmr_register(frmr, pd);
	if (!ret)
		ret = register_kprobe(&frmr_copy_probe);
	if (ret)
		goto out_mr;
	ret = race_frmr_run(frmr);
	unregister_kprobe(&frmr_copy_probe);
	if (!ret) {
		pr_info("frmr_fence: copy %d (irqs %s), invalidate %d: seen %lld us, done %lld us; copy done %lld us, %s\n",
			frmr->copy_ret, frmr->irqs_off ? "off" : "on",
			frmr->inv_ret,
			ktime_us_delta(frmr->t_seen, frmr->t_copy),
			ktime_us_delta(frmr->t_inv, frmr->t_copy),
			ktime_us_delta(frmr->t_copied, frmr->t_copy),
			frmr->landed_late ? "bytes landed after the invalidation" :
			"nothing landed after the invalidation");
		strscpy(result, frmr->inv_ret || frmr->landed_late ?
			"fail" : "pass", sizeof(result));
	}
out_mr:
	if (!IS_ERR_OR_NULL(frmr->mr))
		ib_dereg_mr(frmr->mr);
	ib_dealloc_pd(pd);
out:
	free_page((unsigned long)frmr->page);
	kfree(frmr->src);
	kfree(frmr);
	frmr = NULL;
	return ret;
}

static int __init stellar_race_init(void)
{
	int ret;

	ibdev = ib_device_get_by_name(device, RDMA_DRIVER_UNKNOWN);
	if (!ibdev) {
		pr_err("no device %s\n", device);
		return -ENODEV;
	}
	if (!strcmp(mode, "frmr_fence"))
		ret = race_frmr_fence();
	else if (!strcmp(mode, "qp_create") || !strcmp(mode, "qp_lookup"))
		ret = race_start_qp();
	else
		ret = -EINVAL;
	if (ret) {
		ib_device_put(ibdev);
		return ret;
	}
	return 0;
}

static void __exit stellar_race_exit(void)
{
	if (hammer) {
		kthread_stop(hammer);
		if (!strcmp(mode, "qp_create"))
			unregister_kprobe(&create_copy_probe);
		else
			unregister_kretprobe(&lookup_probe);
	}
	ib_device_put(ibdev);
}

module_init(stellar_race_init);
module_exit(stellar_race_exit);
MODULE_DESCRIPTION("virtio-stellar race window test module (tests only)");
MODULE_LICENSE("GPL");
