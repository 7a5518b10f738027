/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The NCCL functions the NCCL family probes, one line each, with where
 * their arguments are: the loader (user/probes/probed_lib.c) finds each symbol in
 * libnccl.so*, bpf/nccl.bpf.c decodes the arguments by the line's layout
 * (the attach cookie, ISR_NCCL_COOKIE), the analysis names the function.
 * Prototypes from NCCL's public API (nccl.h); ncclUniqueId is a 128-byte
 * struct passed by value, so on x86-64 it is on the stack and the integer
 * arguments after it take the next registers.
 *
 *   X(id, symbol, kind, layout)
 *
 * id is part of the file format (isr_ev_nccl_call.func, isr_ev_nccl_comm.func):
 * never renumber or reuse.
 */
#ifndef INFERSCOPE_NCCL_FUNCS_H
#define INFERSCOPE_NCCL_FUNCS_H

/* What a call is. */
#define ISR_NCCL_KIND_COLL	1	/* a collective: numbered in its communicator's sequence */
#define ISR_NCCL_KIND_P2P	2	/* point-to-point: numbered in the communicator's own p2p sequence */
#define ISR_NCCL_KIND_GROUP	3	/* ncclGroupStart / ncclGroupEnd */
#define ISR_NCCL_KIND_INIT	4	/* communicator set-up: entry and return */

/* Where the arguments are (rdi, rsi, rdx, rcx, r8, r9 = 1..6, then [rsp+8], [rsp+16]). */
#define ISR_NCCL_L_NONE		0	/* (void) */
#define ISR_NCCL_L_RED		1	/* (send, recv, count 3, dtype 4, op 5, comm 6, stream [rsp+8]) */
#define ISR_NCCL_L_ROOT		2	/* (send, recv, count 3, dtype 4, root 5, comm 6, stream [rsp+8]) */
#define ISR_NCCL_L_REDUCE	3	/* (send, recv, count 3, dtype 4, op 5, root 6, comm [rsp+8], stream [rsp+16]) */
#define ISR_NCCL_L_GATHER	4	/* (send, recv, count 3, dtype 4, comm 5, stream 6) */
#define ISR_NCCL_L_PEER		5	/* (buf, count 2, dtype 3, peer/root 4, comm 5, stream 6) */
#define ISR_NCCL_L_INIT		6	/* (ncclComm_t *1, nranks 2, ncclUniqueId [rsp+8..], rank 3[, config 4]) */
#define ISR_NCCL_L_INIT_SCALABLE 7	/* (ncclComm_t *1, nranks 2, rank 3, nId 4, ncclUniqueId *5, config 6) */

#define ISR_NCCL_FUNCS(X)								\
	X(1,  ncclAllReduce,		ISR_NCCL_KIND_COLL,  ISR_NCCL_L_RED)		\
	X(2,  ncclAllGather,		ISR_NCCL_KIND_COLL,  ISR_NCCL_L_GATHER)		\
	X(3,  ncclReduceScatter,	ISR_NCCL_KIND_COLL,  ISR_NCCL_L_RED)		\
	X(4,  ncclBroadcast,		ISR_NCCL_KIND_COLL,  ISR_NCCL_L_ROOT)		\
	X(5,  ncclReduce,		ISR_NCCL_KIND_COLL,  ISR_NCCL_L_REDUCE)		\
	X(6,  ncclAlltoAll,		ISR_NCCL_KIND_COLL,  ISR_NCCL_L_GATHER)		\
	X(7,  ncclBcast,		ISR_NCCL_KIND_COLL,  ISR_NCCL_L_PEER)		\
	X(8,  ncclSend,			ISR_NCCL_KIND_P2P,   ISR_NCCL_L_PEER)		\
	X(9,  ncclRecv,			ISR_NCCL_KIND_P2P,   ISR_NCCL_L_PEER)		\
	X(10, ncclGroupStart,		ISR_NCCL_KIND_GROUP, ISR_NCCL_L_NONE)		\
	X(11, ncclGroupEnd,		ISR_NCCL_KIND_GROUP, ISR_NCCL_L_NONE)		\
	X(12, ncclCommInitRank,		ISR_NCCL_KIND_INIT,  ISR_NCCL_L_INIT)		\
	X(13, ncclCommInitRankConfig,	ISR_NCCL_KIND_INIT,  ISR_NCCL_L_INIT)		\
	X(14, ncclCommInitRankScalable,	ISR_NCCL_KIND_INIT,  ISR_NCCL_L_INIT_SCALABLE)

#define ISR_NCCL_FN_ROW(id, sym, kind, layout) ISR_NCCL_FN_##sym = id,
enum {
	ISR_NCCL_FUNCS(ISR_NCCL_FN_ROW)
	ISR_NCCL_FN_MAX = 15,	/* one past the highest id */
};
#undef ISR_NCCL_FN_ROW

/* The attach cookie: bits 0..15 the id, 16..23 the kind, 24..31 the layout. */
#define ISR_NCCL_COOKIE(id, kind, layout) ((__u64)(__u16)(id) | (__u64)(__u8)(kind) << 16 | (__u64)(__u8)(layout) << 24)
#define ISR_NCCL_COOKIE_FUNC(c)		((__u16)(c))
#define ISR_NCCL_COOKIE_KIND(c)		((__u8)((c) >> 16))
#define ISR_NCCL_COOKIE_LAYOUT(c)	((__u8)((c) >> 24))

#define ISR_NCCL_UNIQUE_ID_BYTES 128	/* sizeof(ncclUniqueId) */
#define ISR_NCCL_OP_NONE 0xff		/* isr_ev_nccl_call.op of a call without one */

/* Bytes per element of ncclDataType_t (ncclInt8 0 ... ncclFloat8e5m2 11);
 * 0 for a type this table does not know. */
#define ISR_NCCL_DTYPE_SIZE(t)									\
	((t) == 0 || (t) == 1 || (t) == 10 || (t) == 11 ? 1 : (t) == 2 || (t) == 3 || (t) == 7 ? 4 :	\
	 (t) == 4 || (t) == 5 || (t) == 8 ? 8 : (t) == 6 || (t) == 9 ? 2 : 0)

#endif
