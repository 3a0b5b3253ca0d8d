/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Copyright (c) 2026 The virtio-stellar authors
 *
 * Declarations of the libibverbs provider interface (symbol version
 * IBVERBS_PRIVATE_34) as exported by rdma-core 44 / Debian libibverbs1
 * 44.0.
 *
 * Distributions do not install rdma-core's private <infiniband/driver.h>,
 * so this header describes the subset of that interface the stellar
 * provider uses.  Structure layouts and function names form a binary
 * interface with libibverbs.so.1 and therefore must match it exactly; the
 * static assertions at the end of this file pin every size and offset the
 * provider relies on to the values measured for rdma-core v44.0 on x86_64
 * (LP64).  If an assertion fires, the libibverbs private ABI changed and
 * this file must be re-audited against the new rdma-core release.
 *
 * Adding another ibv_cmd_* helper: copy its prototype from the v44
 * libibverbs/driver.h documentation of the symbol, confirm the symbol is
 * listed by `objdump -T libibverbs.so.1 | grep IBVERBS_PRIVATE_34`, and
 * run `make abicheck`.
 */
#ifndef STELLAR_VERBS_PRIVATE_H
#define STELLAR_VERBS_PRIVATE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

/* The "34" in IBVERBS_PRIVATE_34 and in verbs_register_driver_34. */
#define STELLAR_IBVERBS_PABI_VERSION	34

/* ------------------------------------------------------------------ */
/* Device discovery and matching                                       */
/* ------------------------------------------------------------------ */

/*
 * libibverbs' description of one uverbs character device found via
 * netlink or sysfs.  The provider only passes it around, so it is kept
 * opaque here: its layout is not part of what this provider depends on.
 */
struct verbs_sysfs_dev;

/* Values of verbs_match_ent.kind. */
enum {
	VERBS_MATCH_SENTINEL	= 0,	/* terminates a match table */
	VERBS_MATCH_PCI		= 1,	/* vendor/device against pci modalias */
	VERBS_MATCH_MODALIAS	= 2,	/* fnmatch() pattern in u.modalias */
	VERBS_MATCH_DRIVER_ID	= 3,	/* enum rdma_driver_id in u.driver_id */
};

struct verbs_match_ent {
	void *driver_data;
	union {
		const char *modalias;
		uint64_t driver_id;
	} u;
	uint16_t vendor;
	uint16_t device;
	uint8_t kind;
};

/*
 * libibverbs offers every table entry the string "rdma_device:N<ibdev>"
 * (before trying the device's real sysfs modalias); an fnmatch() pattern
 * of this shape therefore selects devices by ib_device name prefix.
 */
#define STELLAR_NAME_MODALIAS(prefix)	"rdma_device:*N" prefix "*"

struct verbs_device;
struct verbs_context;
struct verbs_mr;

/* Registered once per provider; read by libibverbs while matching. */
struct verbs_device_ops {
	const char *name;

	uint32_t match_min_abi_version;
	uint32_t match_max_abi_version;
	const struct verbs_match_ent *match_table;
	const struct verbs_device_ops **static_providers;

	bool (*match_device)(struct verbs_sysfs_dev *sysfs_dev);

	struct verbs_context *(*alloc_context)(struct ibv_device *device,
					       int cmd_fd, void *private_data);
	struct verbs_context *(*import_context)(struct ibv_device *device,
						int cmd_fd);

	struct verbs_device *(*alloc_device)(struct verbs_sysfs_dev *sysfs_dev);
	void (*uninit_device)(struct verbs_device *device);
};

/* Two-pointer intrusive list link (ccan list_node in rdma-core). */
struct verbs_list_link {
	struct verbs_list_link *next;
	struct verbs_list_link *prev;
};

/*
 * Allocated by the provider's alloc_device(); libibverbs fills in the
 * embedded ibv_device and the bookkeeping fields after it returns.
 */
struct verbs_device {
	struct ibv_device device;	/* must stay first */
	const struct verbs_device_ops *ops;
	atomic_int refcount;
	struct verbs_list_link entry;
	struct verbs_sysfs_dev *sysfs;
	uint64_t core_support;
};

/* ------------------------------------------------------------------ */
/* Per-context operation table                                         */
/* ------------------------------------------------------------------ */

/*
 * Every operation a provider may implement, in the alphabetical order
 * libibverbs defines.  NULL entries are replaced by libibverbs with
 * stubs that fail with EOPNOTSUPP.
 */
struct verbs_context_ops {
	int (*advise_mr)(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
			 uint32_t flags, struct ibv_sge *sg_list,
			 uint32_t num_sges);
	struct ibv_dm *(*alloc_dm)(struct ibv_context *context,
				   struct ibv_alloc_dm_attr *attr);
	struct ibv_mw *(*alloc_mw)(struct ibv_pd *pd, enum ibv_mw_type type);
	struct ibv_mr *(*alloc_null_mr)(struct ibv_pd *pd);
	struct ibv_pd *(*alloc_parent_domain)(struct ibv_context *context,
					      struct ibv_parent_domain_init_attr *attr);
	struct ibv_pd *(*alloc_pd)(struct ibv_context *context);
	struct ibv_td *(*alloc_td)(struct ibv_context *context,
				   struct ibv_td_init_attr *init_attr);
	void (*async_event)(struct ibv_context *context,
			    struct ibv_async_event *event);
	int (*attach_counters_point_flow)(struct ibv_counters *counters,
					  struct ibv_counter_attach_attr *attr,
					  struct ibv_flow *flow);
	int (*attach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid,
			    uint16_t lid);
	int (*bind_mw)(struct ibv_qp *qp, struct ibv_mw *mw,
		       struct ibv_mw_bind *mw_bind);
	int (*close_xrcd)(struct ibv_xrcd *xrcd);
	void (*cq_event)(struct ibv_cq *cq);
	struct ibv_ah *(*create_ah)(struct ibv_pd *pd, struct ibv_ah_attr *attr);
	struct ibv_counters *(*create_counters)(struct ibv_context *context,
						struct ibv_counters_init_attr *init_attr);
	struct ibv_cq *(*create_cq)(struct ibv_context *context, int cqe,
				    struct ibv_comp_channel *channel,
				    int comp_vector);
	struct ibv_cq_ex *(*create_cq_ex)(struct ibv_context *context,
					  struct ibv_cq_init_attr_ex *init_attr);
	struct ibv_flow *(*create_flow)(struct ibv_qp *qp,
					struct ibv_flow_attr *flow_attr);
	struct ibv_flow_action *(*create_flow_action_esp)(struct ibv_context *context,
							  struct ibv_flow_action_esp_attr *attr);
	struct ibv_qp *(*create_qp)(struct ibv_pd *pd,
				    struct ibv_qp_init_attr *attr);
	struct ibv_qp *(*create_qp_ex)(struct ibv_context *context,
				       struct ibv_qp_init_attr_ex *qp_init_attr_ex);
	struct ibv_rwq_ind_table *(*create_rwq_ind_table)(struct ibv_context *context,
							  struct ibv_rwq_ind_table_init_attr *init_attr);
	struct ibv_srq *(*create_srq)(struct ibv_pd *pd,
				      struct ibv_srq_init_attr *srq_init_attr);
	struct ibv_srq *(*create_srq_ex)(struct ibv_context *context,
					 struct ibv_srq_init_attr_ex *srq_init_attr_ex);
	struct ibv_wq *(*create_wq)(struct ibv_context *context,
				    struct ibv_wq_init_attr *wq_init_attr);
	int (*dealloc_mw)(struct ibv_mw *mw);
	int (*dealloc_pd)(struct ibv_pd *pd);
	int (*dealloc_td)(struct ibv_td *td);
	int (*dereg_mr)(struct verbs_mr *vmr);
	int (*destroy_ah)(struct ibv_ah *ah);
	int (*destroy_counters)(struct ibv_counters *counters);
	int (*destroy_cq)(struct ibv_cq *cq);
	int (*destroy_flow)(struct ibv_flow *flow);
	int (*destroy_flow_action)(struct ibv_flow_action *action);
	int (*destroy_qp)(struct ibv_qp *qp);
	int (*destroy_rwq_ind_table)(struct ibv_rwq_ind_table *rwq_ind_table);
	int (*destroy_srq)(struct ibv_srq *srq);
	int (*destroy_wq)(struct ibv_wq *wq);
	int (*detach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid,
			    uint16_t lid);
	void (*free_context)(struct ibv_context *context);
	int (*free_dm)(struct ibv_dm *dm);
	int (*get_srq_num)(struct ibv_srq *srq, uint32_t *srq_num);
	struct ibv_dm *(*import_dm)(struct ibv_context *context,
				    uint32_t dm_handle);
	struct ibv_mr *(*import_mr)(struct ibv_pd *pd, uint32_t mr_handle);
	struct ibv_pd *(*import_pd)(struct ibv_context *context,
				    uint32_t pd_handle);
	int (*modify_cq)(struct ibv_cq *cq, struct ibv_modify_cq_attr *attr);
	int (*modify_flow_action_esp)(struct ibv_flow_action *action,
				      struct ibv_flow_action_esp_attr *attr);
	int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			 int attr_mask);
	int (*modify_qp_rate_limit)(struct ibv_qp *qp,
				    struct ibv_qp_rate_limit_attr *attr);
	int (*modify_srq)(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
			  int srq_attr_mask);
	int (*modify_wq)(struct ibv_wq *wq, struct ibv_wq_attr *wq_attr);
	struct ibv_qp *(*open_qp)(struct ibv_context *context,
				  struct ibv_qp_open_attr *attr);
	struct ibv_xrcd *(*open_xrcd)(struct ibv_context *context,
				      struct ibv_xrcd_init_attr *xrcd_init_attr);
	int (*poll_cq)(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
	int (*post_recv)(struct ibv_qp *qp, struct ibv_recv_wr *wr,
			 struct ibv_recv_wr **bad_wr);
	int (*post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr,
			 struct ibv_send_wr **bad_wr);
	int (*post_srq_ops)(struct ibv_srq *srq, struct ibv_ops_wr *op,
			    struct ibv_ops_wr **bad_op);
	int (*post_srq_recv)(struct ibv_srq *srq, struct ibv_recv_wr *recv_wr,
			     struct ibv_recv_wr **bad_recv_wr);
	int (*query_device_ex)(struct ibv_context *context,
			       const struct ibv_query_device_ex_input *input,
			       struct ibv_device_attr_ex *attr,
			       size_t attr_size);
	int (*query_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
	int (*query_port)(struct ibv_context *context, uint8_t port_num,
			  struct ibv_port_attr *port_attr);
	int (*query_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			int attr_mask, struct ibv_qp_init_attr *init_attr);
	int (*query_qp_data_in_order)(struct ibv_qp *qp, enum ibv_wr_opcode op,
				      uint32_t flags);
	int (*query_rt_values)(struct ibv_context *context,
			       struct ibv_values_ex *values);
	int (*query_srq)(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr);
	int (*read_counters)(struct ibv_counters *counters,
			     uint64_t *counters_value, uint32_t ncounters,
			     uint32_t flags);
	struct ibv_mr *(*reg_dm_mr)(struct ibv_pd *pd, struct ibv_dm *dm,
				    uint64_t dm_offset, size_t length,
				    unsigned int access);
	struct ibv_mr *(*reg_dmabuf_mr)(struct ibv_pd *pd, uint64_t offset,
					size_t length, uint64_t iova, int fd,
					int access);
	struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t length,
				 uint64_t hca_va, int access);
	int (*req_notify_cq)(struct ibv_cq *cq, int solicited_only);
	int (*rereg_mr)(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
			void *addr, size_t length, int access);
	int (*resize_cq)(struct ibv_cq *cq, int cqe);
	int (*set_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
	void (*unimport_dm)(struct ibv_dm *dm);
	void (*unimport_mr)(struct ibv_mr *mr);
	void (*unimport_pd)(struct ibv_pd *pd);
};

#define STELLAR_VERBS_CONTEXT_OPS_SLOTS	76

/* ------------------------------------------------------------------ */
/* Object wrappers shared with libibverbs                              */
/* ------------------------------------------------------------------ */

/* Values of verbs_mr.mr_type, set by the ibv_cmd_*reg*_mr helpers. */
enum ibv_mr_type {
	IBV_MR_TYPE_MR,
	IBV_MR_TYPE_NULL_MR,
	IBV_MR_TYPE_IMPORTED_MR,
	IBV_MR_TYPE_DMABUF_MR,
};

struct verbs_mr {
	struct ibv_mr ibv_mr;
	enum ibv_mr_type mr_type;
	int access;
};

struct verbs_xrcd {
	struct ibv_xrcd xrcd;
	uint32_t comp_mask;
	uint32_t handle;
};

struct verbs_srq {
	struct ibv_srq srq;
	enum ibv_srq_type srq_type;
	struct verbs_xrcd *xrcd;
	struct ibv_cq *cq;
	uint32_t srq_num;
};

/* Bits of verbs_qp.comp_mask. */
enum verbs_qp_mask {
	VERBS_QP_XRCD		= 1 << 0,
	VERBS_QP_EX		= 1 << 1,	/* qp_ex is valid */
};

struct verbs_qp {
	union {
		struct ibv_qp qp;
		struct ibv_qp_ex qp_ex;
	};
	uint32_t comp_mask;
	struct verbs_xrcd *xrcd;
};

struct verbs_cq {
	union {
		struct ibv_cq cq;
		struct ibv_cq_ex cq_ex;
	};
};

/* ------------------------------------------------------------------ */
/* Legacy "write" command layouts passed to the ibv_cmd_* helpers      */
/* ------------------------------------------------------------------ */

/*
 * Each request is the uverbs command header followed by the kernel's
 * request structure.  A provider that sends driver data appends its own
 * structure after it and passes the size of the whole wrapper; responses
 * are likewise the kernel response followed by the driver's response.
 */
#define STELLAR_DECLARE_WRITE_CMD(name, kabi)				\
	struct name {							\
		struct ib_uverbs_cmd_hdr hdr;				\
		struct kabi core_payload;				\
	}

/* An extended write command: the extended header, then the kernel ABI. */
struct ex_hdr {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_ex_cmd_hdr ex_hdr;
};

#define STELLAR_DECLARE_WRITE_CMD_EX(name, kabi)			\
	struct name {							\
		struct ex_hdr hdr;					\
		struct kabi core_payload;				\
	}

STELLAR_DECLARE_WRITE_CMD_EX(ibv_create_cq_ex, ib_uverbs_ex_create_cq);
STELLAR_DECLARE_WRITE_CMD(ibv_get_context, ib_uverbs_get_context);
STELLAR_DECLARE_WRITE_CMD(ibv_query_port, ib_uverbs_query_port);
STELLAR_DECLARE_WRITE_CMD(ibv_alloc_pd, ib_uverbs_alloc_pd);
STELLAR_DECLARE_WRITE_CMD(ibv_reg_mr, ib_uverbs_reg_mr);
STELLAR_DECLARE_WRITE_CMD(ibv_alloc_mw, ib_uverbs_alloc_mw);
STELLAR_DECLARE_WRITE_CMD(ibv_rereg_mr, ib_uverbs_rereg_mr);
STELLAR_DECLARE_WRITE_CMD(ibv_create_cq, ib_uverbs_create_cq);
STELLAR_DECLARE_WRITE_CMD(ibv_resize_cq, ib_uverbs_resize_cq);
STELLAR_DECLARE_WRITE_CMD(ibv_create_qp, ib_uverbs_create_qp);
STELLAR_DECLARE_WRITE_CMD(ibv_modify_qp, ib_uverbs_modify_qp);
STELLAR_DECLARE_WRITE_CMD(ibv_query_qp, ib_uverbs_query_qp);
STELLAR_DECLARE_WRITE_CMD(ibv_create_srq, ib_uverbs_create_srq);
STELLAR_DECLARE_WRITE_CMD(ibv_modify_srq, ib_uverbs_modify_srq);
STELLAR_DECLARE_WRITE_CMD(ibv_query_srq, ib_uverbs_query_srq);
STELLAR_DECLARE_WRITE_CMD(ibv_create_xsrq, ib_uverbs_create_xsrq);
STELLAR_DECLARE_WRITE_CMD(ibv_open_xrcd, ib_uverbs_open_xrcd);
STELLAR_DECLARE_WRITE_CMD(ibv_open_qp, ib_uverbs_open_qp);

/* ------------------------------------------------------------------ */
/* Functions exported by libibverbs.so.1 under IBVERBS_PRIVATE_34       */
/* ------------------------------------------------------------------ */

/* The version number is part of the name so a mismatch cannot link. */
void verbs_register_driver_34(const struct verbs_device_ops *ops);

/* Log levels understood by __verbs_log (VERBS_LOG_LEVEL environment). */
enum {
	VERBS_LOG_LEVEL_NONE,
	VERBS_LOG_ERR,
	VERBS_LOG_WARN,
	VERBS_LOG_INFO,
	VERBS_LOG_DEBUG,
};

void __verbs_log(struct verbs_context *ctx, uint32_t level,
		 const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Allocates alloc_size zeroed bytes and initialises the verbs_context
 * found context_offset bytes into them.  context_offset is a byte offset
 * disguised as a pointer.  On failure cmd_fd is closed and NULL returned.
 */
void *_verbs_init_and_alloc_context(struct ibv_device *device, int cmd_fd,
				    size_t alloc_size,
				    struct verbs_context *context_offset,
				    uint32_t driver_id);
void verbs_uninit_context(struct verbs_context *context);
void verbs_set_ops(struct verbs_context *vctx,
		   const struct verbs_context_ops *ops);

int ibv_cmd_get_context(struct verbs_context *context,
			struct ibv_get_context *cmd, size_t cmd_size,
			struct ib_uverbs_get_context_resp *resp,
			size_t resp_size);
/*
 * UVERBS_METHOD_QUERY_CONTEXT for an imported context: the number of
 * completion vectors and the core's support bits.  The provider passes no
 * driver attributes (driver NULL): it sends its own ioctl for those, so
 * the command buffer's layout stays libibverbs' business.
 */
struct ibv_command_buffer;
int ibv_cmd_query_context(struct ibv_context *ctx,
			  struct ibv_command_buffer *driver);
int ibv_cmd_query_device_any(struct ibv_context *context,
			     const struct ibv_query_device_ex_input *input,
			     struct ibv_device_attr_ex *attr, size_t attr_size,
			     struct ib_uverbs_ex_query_device_resp *resp,
			     size_t *resp_size);
int ibv_cmd_query_port(struct ibv_context *context, uint8_t port_num,
		       struct ibv_port_attr *port_attr,
		       struct ibv_query_port *cmd, size_t cmd_size);

int ibv_cmd_alloc_pd(struct ibv_context *context, struct ibv_pd *pd,
		     struct ibv_alloc_pd *cmd, size_t cmd_size,
		     struct ib_uverbs_alloc_pd_resp *resp, size_t resp_size);
int ibv_cmd_dealloc_pd(struct ibv_pd *pd);

int ibv_cmd_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
		   uint64_t hca_va, int access, struct verbs_mr *vmr,
		   struct ibv_reg_mr *cmd, size_t cmd_size,
		   struct ib_uverbs_reg_mr_resp *resp, size_t resp_size);
/* UVERBS_METHOD_QUERY_MR: fills @vmr for the MR of @mr_handle (import). */
int ibv_cmd_query_mr(struct ibv_pd *pd, struct verbs_mr *vmr,
		     uint32_t mr_handle);
/*
 * Creates a CQ from the extended attributes; a CQ whose wc_flags ask for
 * completion timestamps gets IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION.
 * cmd_flags: 0 (or CREATE_CQ_CMD_FLAGS_TS_IGNORED_EX, unused here).
 */
int ibv_cmd_create_cq_ex(struct ibv_context *context,
			 const struct ibv_cq_init_attr_ex *cq_attr,
			 struct verbs_cq *cq, struct ibv_create_cq_ex *cmd,
			 size_t cmd_size,
			 struct ib_uverbs_ex_create_cq_resp *resp,
			 size_t resp_size, uint32_t cmd_flags);
int ibv_cmd_rereg_mr(struct verbs_mr *vmr, uint32_t flags, void *addr,
		     size_t length, uint64_t hca_va, int access,
		     struct ibv_pd *pd, struct ibv_rereg_mr *cmd,
		     size_t cmd_sz, struct ib_uverbs_rereg_mr_resp *resp,
		     size_t resp_sz);
int ibv_cmd_dereg_mr(struct verbs_mr *vmr);
int ibv_cmd_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type,
		     struct ibv_mw *mw, struct ibv_alloc_mw *cmd,
		     size_t cmd_size,
		     struct ib_uverbs_alloc_mw_resp *resp, size_t resp_size);
int ibv_cmd_dealloc_mw(struct ibv_mw *mw);
int ibv_cmd_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
		      uint32_t flags, struct ibv_sge *sg_list,
		      uint32_t num_sge);

int ibv_cmd_create_cq(struct ibv_context *context, int cqe,
		      struct ibv_comp_channel *channel, int comp_vector,
		      struct ibv_cq *cq, struct ibv_create_cq *cmd,
		      size_t cmd_size, struct ib_uverbs_create_cq_resp *resp,
		      size_t resp_size);
int ibv_cmd_req_notify_cq(struct ibv_cq *cq, int solicited_only);
/* Sets cq->cqe from the response on success. */
int ibv_cmd_resize_cq(struct ibv_cq *cq, int cqe,
		      struct ibv_resize_cq *cmd, size_t cmd_size,
		      struct ib_uverbs_resize_cq_resp *resp, size_t resp_size);
int ibv_cmd_destroy_cq(struct ibv_cq *cq);

int ibv_cmd_create_qp(struct ibv_pd *pd, struct ibv_qp *qp,
		      struct ibv_qp_init_attr *attr,
		      struct ibv_create_qp *cmd, size_t cmd_size,
		      struct ib_uverbs_create_qp_resp *resp, size_t resp_size);
int ibv_cmd_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		      int attr_mask, struct ibv_modify_qp *cmd,
		      size_t cmd_size);
int ibv_cmd_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *qp_attr,
		     int attr_mask, struct ibv_qp_init_attr *qp_init_attr,
		     struct ibv_query_qp *cmd, size_t cmd_size);
int ibv_cmd_destroy_qp(struct ibv_qp *qp);

/*
 * Creates a QP from the extended attributes (comp_mask may hold
 * IBV_QP_INIT_ATTR_PD, _XRCD and _SEND_OPS_FLAGS); writes the granted
 * capabilities back into attr_ex->cap.
 */
int ibv_cmd_create_qp_ex(struct ibv_context *context, struct verbs_qp *qp,
			 struct ibv_qp_init_attr_ex *attr_ex,
			 struct ibv_create_qp *cmd, size_t cmd_size,
			 struct ib_uverbs_create_qp_resp *resp,
			 size_t resp_size);

/*
 * With wr == NULL this sends a POST_SEND command carrying no work
 * requests: the stellar kernel driver treats it as a doorbell.
 */
int ibv_cmd_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		      struct ibv_send_wr **bad_wr);

int ibv_cmd_create_srq(struct ibv_pd *pd, struct ibv_srq *srq,
		       struct ibv_srq_init_attr *attr,
		       struct ibv_create_srq *cmd, size_t cmd_size,
		       struct ib_uverbs_create_srq_resp *resp,
		       size_t resp_size);
int ibv_cmd_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
		       int srq_attr_mask, struct ibv_modify_srq *cmd,
		       size_t cmd_size);
int ibv_cmd_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
		      struct ibv_query_srq *cmd, size_t cmd_size);
int ibv_cmd_destroy_srq(struct ibv_srq *srq);
int ibv_cmd_create_srq_ex(struct ibv_context *context,
			  struct verbs_srq *srq,
			  struct ibv_srq_init_attr_ex *attr_ex,
			  struct ibv_create_xsrq *cmd, size_t cmd_size,
			  struct ib_uverbs_create_srq_resp *resp,
			  size_t resp_size);
int ibv_cmd_open_xrcd(struct ibv_context *context, struct verbs_xrcd *xrcd,
		      int vxrcd_size, struct ibv_xrcd_init_attr *attr,
		      struct ibv_open_xrcd *cmd, size_t cmd_size,
		      struct ib_uverbs_open_xrcd_resp *resp, size_t resp_size);
int ibv_cmd_close_xrcd(struct verbs_xrcd *xrcd);
int ibv_cmd_open_qp(struct ibv_context *context, struct verbs_qp *qp,
		    int vqp_sz, struct ibv_qp_open_attr *attr,
		    struct ibv_open_qp *cmd, size_t cmd_size,
		    struct ib_uverbs_create_qp_resp *resp, size_t resp_size);

int ibv_cmd_create_ah(struct ibv_pd *pd, struct ibv_ah *ah,
		      struct ibv_ah_attr *attr,
		      struct ib_uverbs_create_ah_resp *resp, size_t resp_size);
int ibv_cmd_destroy_ah(struct ibv_ah *ah);

int ibv_cmd_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
			 uint16_t lid);
int ibv_cmd_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
			 uint16_t lid);

/* ------------------------------------------------------------------ */
/* Layout guards: rdma-core v44.0, x86_64                              */
/* ------------------------------------------------------------------ */

#define STELLAR_ABI_SIZE(type, bytes)					\
	_Static_assert(sizeof(struct type) == (bytes),			\
		       "libibverbs v44 ABI: sizeof(struct " #type ")")
#define STELLAR_ABI_OFFSET(type, member, bytes)				\
	_Static_assert(offsetof(struct type, member) == (bytes),	\
		       "libibverbs v44 ABI: " #type "." #member)
#define STELLAR_ABI_OPS_SLOT(member, index)				\
	STELLAR_ABI_OFFSET(verbs_context_ops, member,			\
			   (index) * sizeof(void (*)(void)))

_Static_assert(sizeof(void *) == 8 && sizeof(long) == 8,
	       "the recorded layouts are for LP64 targets");

/* Public verbs.h types embedded in the private structures. */
STELLAR_ABI_SIZE(ibv_device, 664);
STELLAR_ABI_SIZE(ibv_context, 328);
STELLAR_ABI_SIZE(verbs_context, 648);
STELLAR_ABI_OFFSET(verbs_context, priv, 208);
STELLAR_ABI_OFFSET(verbs_context, sz, 312);
STELLAR_ABI_OFFSET(verbs_context, context, 320);
STELLAR_ABI_SIZE(ibv_mr, 48);
STELLAR_ABI_SIZE(ibv_cq, 128);
STELLAR_ABI_SIZE(ibv_cq_ex, 288);
STELLAR_ABI_SIZE(ibv_qp, 160);
STELLAR_ABI_SIZE(ibv_qp_ex, 352);
STELLAR_ABI_SIZE(ibv_srq, 128);

STELLAR_ABI_SIZE(verbs_match_ent, 24);
STELLAR_ABI_OFFSET(verbs_match_ent, driver_data, 0);
STELLAR_ABI_OFFSET(verbs_match_ent, u.modalias, 8);
STELLAR_ABI_OFFSET(verbs_match_ent, u.driver_id, 8);
STELLAR_ABI_OFFSET(verbs_match_ent, vendor, 16);
STELLAR_ABI_OFFSET(verbs_match_ent, device, 18);
STELLAR_ABI_OFFSET(verbs_match_ent, kind, 20);

STELLAR_ABI_SIZE(verbs_device_ops, 72);
STELLAR_ABI_OFFSET(verbs_device_ops, name, 0);
STELLAR_ABI_OFFSET(verbs_device_ops, match_min_abi_version, 8);
STELLAR_ABI_OFFSET(verbs_device_ops, match_max_abi_version, 12);
STELLAR_ABI_OFFSET(verbs_device_ops, match_table, 16);
STELLAR_ABI_OFFSET(verbs_device_ops, static_providers, 24);
STELLAR_ABI_OFFSET(verbs_device_ops, match_device, 32);
STELLAR_ABI_OFFSET(verbs_device_ops, alloc_context, 40);
STELLAR_ABI_OFFSET(verbs_device_ops, import_context, 48);
STELLAR_ABI_OFFSET(verbs_device_ops, alloc_device, 56);
STELLAR_ABI_OFFSET(verbs_device_ops, uninit_device, 64);

STELLAR_ABI_SIZE(verbs_device, 712);
STELLAR_ABI_OFFSET(verbs_device, device, 0);
STELLAR_ABI_OFFSET(verbs_device, ops, 664);
STELLAR_ABI_OFFSET(verbs_device, refcount, 672);
STELLAR_ABI_OFFSET(verbs_device, entry, 680);
STELLAR_ABI_OFFSET(verbs_device, sysfs, 696);
STELLAR_ABI_OFFSET(verbs_device, core_support, 704);

STELLAR_ABI_SIZE(verbs_mr, 56);
STELLAR_ABI_OFFSET(verbs_mr, ibv_mr, 0);
STELLAR_ABI_OFFSET(verbs_mr, mr_type, 48);
STELLAR_ABI_OFFSET(verbs_mr, access, 52);

STELLAR_ABI_SIZE(verbs_xrcd, 16);
STELLAR_ABI_OFFSET(verbs_xrcd, comp_mask, 8);
STELLAR_ABI_OFFSET(verbs_xrcd, handle, 12);

STELLAR_ABI_SIZE(verbs_srq, 160);
STELLAR_ABI_OFFSET(verbs_srq, srq, 0);
STELLAR_ABI_OFFSET(verbs_srq, srq_type, 128);
STELLAR_ABI_OFFSET(verbs_srq, xrcd, 136);
STELLAR_ABI_OFFSET(verbs_srq, cq, 144);
STELLAR_ABI_OFFSET(verbs_srq, srq_num, 152);

STELLAR_ABI_SIZE(verbs_qp, 368);
STELLAR_ABI_OFFSET(verbs_qp, qp, 0);
STELLAR_ABI_OFFSET(verbs_qp, qp_ex, 0);
STELLAR_ABI_OFFSET(verbs_qp, comp_mask, 352);
STELLAR_ABI_OFFSET(verbs_qp, xrcd, 360);

STELLAR_ABI_SIZE(verbs_cq, 288);
STELLAR_ABI_OFFSET(verbs_cq, cq, 0);
STELLAR_ABI_OFFSET(verbs_cq, cq_ex, 0);

STELLAR_ABI_SIZE(ibv_get_context, 16);
STELLAR_ABI_SIZE(ibv_query_port, 24);
STELLAR_ABI_SIZE(ibv_alloc_pd, 16);
STELLAR_ABI_SIZE(ibv_reg_mr, 48);
STELLAR_ABI_SIZE(ibv_alloc_mw, 24);
STELLAR_ABI_SIZE(ib_uverbs_alloc_mw_resp, 8);
STELLAR_ABI_SIZE(ibv_rereg_mr, 56);
STELLAR_ABI_SIZE(ex_hdr, 24);
STELLAR_ABI_SIZE(ibv_create_cq_ex, 56);
STELLAR_ABI_OFFSET(ibv_create_cq_ex, core_payload, 24);
STELLAR_ABI_SIZE(ib_uverbs_ex_create_cq_resp, 16);
STELLAR_ABI_SIZE(ibv_create_cq, 40);
STELLAR_ABI_SIZE(ibv_create_qp, 64);
STELLAR_ABI_SIZE(ibv_modify_qp, 120);
STELLAR_ABI_SIZE(ibv_query_qp, 24);
STELLAR_ABI_OFFSET(ibv_get_context, core_payload, 8);
STELLAR_ABI_OFFSET(ibv_query_port, core_payload, 8);
STELLAR_ABI_OFFSET(ibv_alloc_pd, core_payload, 8);
STELLAR_ABI_OFFSET(ibv_reg_mr, core_payload, 8);
STELLAR_ABI_OFFSET(ibv_rereg_mr, core_payload, 8);
STELLAR_ABI_OFFSET(ibv_create_cq, core_payload, 8);
STELLAR_ABI_SIZE(ibv_resize_cq, 24);
STELLAR_ABI_OFFSET(ibv_resize_cq, core_payload, 8);
STELLAR_ABI_OFFSET(ibv_create_qp, core_payload, 8);
STELLAR_ABI_OFFSET(ibv_modify_qp, core_payload, 8);
STELLAR_ABI_SIZE(ibv_create_xsrq, 56);
STELLAR_ABI_OFFSET(ibv_create_xsrq, core_payload, 8);
STELLAR_ABI_SIZE(ibv_open_xrcd, 24);
STELLAR_ABI_OFFSET(ibv_open_xrcd, core_payload, 8);
STELLAR_ABI_SIZE(ibv_open_qp, 40);
STELLAR_ABI_OFFSET(ibv_open_qp, core_payload, 8);
STELLAR_ABI_OFFSET(ibv_query_qp, core_payload, 8);
STELLAR_ABI_SIZE(ibv_create_srq, 40);
STELLAR_ABI_SIZE(ibv_modify_srq, 24);
STELLAR_ABI_SIZE(ibv_query_srq, 24);
STELLAR_ABI_OFFSET(ibv_create_srq, core_payload, 8);
STELLAR_ABI_OFFSET(ibv_modify_srq, core_payload, 8);
STELLAR_ABI_OFFSET(ibv_query_srq, core_payload, 8);
STELLAR_ABI_SIZE(ib_uverbs_get_context_resp, 8);
STELLAR_ABI_SIZE(ib_uverbs_alloc_pd_resp, 4);
STELLAR_ABI_SIZE(ib_uverbs_reg_mr_resp, 12);
STELLAR_ABI_SIZE(ib_uverbs_rereg_mr_resp, 8);
STELLAR_ABI_SIZE(ib_uverbs_create_cq_resp, 8);
STELLAR_ABI_SIZE(ib_uverbs_resize_cq_resp, 8);
STELLAR_ABI_SIZE(ib_uverbs_create_qp_resp, 32);
STELLAR_ABI_SIZE(ib_uverbs_ex_query_device_resp, 304);
STELLAR_ABI_SIZE(ib_uverbs_create_srq_resp, 16);
STELLAR_ABI_SIZE(ib_uverbs_create_ah_resp, 4);
STELLAR_ABI_SIZE(ibv_ah, 24);

STELLAR_ABI_SIZE(verbs_context_ops,
		 STELLAR_VERBS_CONTEXT_OPS_SLOTS * sizeof(void (*)(void)));
STELLAR_ABI_OPS_SLOT(advise_mr, 0);
STELLAR_ABI_OPS_SLOT(alloc_dm, 1);
STELLAR_ABI_OPS_SLOT(alloc_mw, 2);
STELLAR_ABI_OPS_SLOT(alloc_null_mr, 3);
STELLAR_ABI_OPS_SLOT(alloc_parent_domain, 4);
STELLAR_ABI_OPS_SLOT(alloc_pd, 5);
STELLAR_ABI_OPS_SLOT(alloc_td, 6);
STELLAR_ABI_OPS_SLOT(async_event, 7);
STELLAR_ABI_OPS_SLOT(attach_counters_point_flow, 8);
STELLAR_ABI_OPS_SLOT(attach_mcast, 9);
STELLAR_ABI_OPS_SLOT(bind_mw, 10);
STELLAR_ABI_OPS_SLOT(close_xrcd, 11);
STELLAR_ABI_OPS_SLOT(cq_event, 12);
STELLAR_ABI_OPS_SLOT(create_ah, 13);
STELLAR_ABI_OPS_SLOT(create_counters, 14);
STELLAR_ABI_OPS_SLOT(create_cq, 15);
STELLAR_ABI_OPS_SLOT(create_cq_ex, 16);
STELLAR_ABI_OPS_SLOT(create_flow, 17);
STELLAR_ABI_OPS_SLOT(create_flow_action_esp, 18);
STELLAR_ABI_OPS_SLOT(create_qp, 19);
STELLAR_ABI_OPS_SLOT(create_qp_ex, 20);
STELLAR_ABI_OPS_SLOT(create_rwq_ind_table, 21);
STELLAR_ABI_OPS_SLOT(create_srq, 22);
STELLAR_ABI_OPS_SLOT(create_srq_ex, 23);
STELLAR_ABI_OPS_SLOT(create_wq, 24);
STELLAR_ABI_OPS_SLOT(dealloc_mw, 25);
STELLAR_ABI_OPS_SLOT(dealloc_pd, 26);
STELLAR_ABI_OPS_SLOT(dealloc_td, 27);
STELLAR_ABI_OPS_SLOT(dereg_mr, 28);
STELLAR_ABI_OPS_SLOT(destroy_ah, 29);
STELLAR_ABI_OPS_SLOT(destroy_counters, 30);
STELLAR_ABI_OPS_SLOT(destroy_cq, 31);
STELLAR_ABI_OPS_SLOT(destroy_flow, 32);
STELLAR_ABI_OPS_SLOT(destroy_flow_action, 33);
STELLAR_ABI_OPS_SLOT(destroy_qp, 34);
STELLAR_ABI_OPS_SLOT(destroy_rwq_ind_table, 35);
STELLAR_ABI_OPS_SLOT(destroy_srq, 36);
STELLAR_ABI_OPS_SLOT(destroy_wq, 37);
STELLAR_ABI_OPS_SLOT(detach_mcast, 38);
STELLAR_ABI_OPS_SLOT(free_context, 39);
STELLAR_ABI_OPS_SLOT(free_dm, 40);
STELLAR_ABI_OPS_SLOT(get_srq_num, 41);
STELLAR_ABI_OPS_SLOT(import_dm, 42);
STELLAR_ABI_OPS_SLOT(import_mr, 43);
STELLAR_ABI_OPS_SLOT(import_pd, 44);
STELLAR_ABI_OPS_SLOT(modify_cq, 45);
STELLAR_ABI_OPS_SLOT(modify_flow_action_esp, 46);
STELLAR_ABI_OPS_SLOT(modify_qp, 47);
STELLAR_ABI_OPS_SLOT(modify_qp_rate_limit, 48);
STELLAR_ABI_OPS_SLOT(modify_srq, 49);
STELLAR_ABI_OPS_SLOT(modify_wq, 50);
STELLAR_ABI_OPS_SLOT(open_qp, 51);
STELLAR_ABI_OPS_SLOT(open_xrcd, 52);
STELLAR_ABI_OPS_SLOT(poll_cq, 53);
STELLAR_ABI_OPS_SLOT(post_recv, 54);
STELLAR_ABI_OPS_SLOT(post_send, 55);
STELLAR_ABI_OPS_SLOT(post_srq_ops, 56);
STELLAR_ABI_OPS_SLOT(post_srq_recv, 57);
STELLAR_ABI_OPS_SLOT(query_device_ex, 58);
STELLAR_ABI_OPS_SLOT(query_ece, 59);
STELLAR_ABI_OPS_SLOT(query_port, 60);
STELLAR_ABI_OPS_SLOT(query_qp, 61);
STELLAR_ABI_OPS_SLOT(query_qp_data_in_order, 62);
STELLAR_ABI_OPS_SLOT(query_rt_values, 63);
STELLAR_ABI_OPS_SLOT(query_srq, 64);
STELLAR_ABI_OPS_SLOT(read_counters, 65);
STELLAR_ABI_OPS_SLOT(reg_dm_mr, 66);
STELLAR_ABI_OPS_SLOT(reg_dmabuf_mr, 67);
STELLAR_ABI_OPS_SLOT(reg_mr, 68);
STELLAR_ABI_OPS_SLOT(req_notify_cq, 69);
STELLAR_ABI_OPS_SLOT(rereg_mr, 70);
STELLAR_ABI_OPS_SLOT(resize_cq, 71);
STELLAR_ABI_OPS_SLOT(set_ece, 72);
STELLAR_ABI_OPS_SLOT(unimport_dm, 73);
STELLAR_ABI_OPS_SLOT(unimport_mr, 74);
STELLAR_ABI_OPS_SLOT(unimport_pd, 75);

#endif /* STELLAR_VERBS_PRIVATE_H */
