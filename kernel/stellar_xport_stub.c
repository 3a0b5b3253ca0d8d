// SPDX-License-Identifier: GPL-2.0
/* TEMPORARY: placeholder transport until stellar_req/resp/comp/tx land. */
#include "stellar_transport.h"
int stellar_xport_create(struct stellar_qp *qp) { return 0; }
void stellar_xport_destroy(struct stellar_qp *qp) { }
void stellar_xport_modify(struct stellar_qp *qp, int mask, enum ib_qp_state old_state) { }
void stellar_xport_kick(struct stellar_qp *qp) { }
void stellar_xport_rcv(struct stellar_dev *sdev, struct sk_buff *skb, const struct stellar_pkt *pkt) { kfree_skb(skb); }
