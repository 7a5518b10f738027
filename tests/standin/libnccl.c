// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A stand-in for NCCL, libnccl.so.2, for tests without GPUs: the API of
 * tests/standin/nccl_api.h under the real names and prototypes. The ranks
 * of a communicator are processes of one host that meet in a shared-memory
 * file named after the unique id; the set-up and every collective wait
 * until every rank has arrived (a barrier), as the collective's kernels
 * wait for the slowest rank on a GPU. Point-to-point and group calls do
 * nothing. Compiled with frame pointers: every entry point begins with
 * push %rbp.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include "nccl_api.h"

struct meeting {
	_Atomic uint32_t arrived;
	_Atomic uint32_t generation;
};

struct ncclComm {
	int rank, nranks;
	struct meeting *m;
	char path[64];
};

ncclResult_t ncclGetUniqueId(ncclUniqueId *uniqueId)
{
	size_t got = 0;

	while (got < sizeof(uniqueId->internal)) {
		ssize_t n = getrandom(uniqueId->internal + got, sizeof(uniqueId->internal) - got, 0);

		if (n < 0 && errno != EINTR)
			return ncclSystemError;
		got += n > 0 ? (size_t)n : 0;
	}
	return ncclSuccess;
}

static void barrier(struct ncclComm *c)
{
	uint32_t gen = atomic_load(&c->m->generation);

	if (atomic_fetch_add(&c->m->arrived, 1) == (uint32_t)c->nranks - 1) {
		atomic_store(&c->m->arrived, 0);
		atomic_fetch_add(&c->m->generation, 1);
		syscall(SYS_futex, &c->m->generation, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
		return;
	}
	while (atomic_load(&c->m->generation) == gen)
		syscall(SYS_futex, &c->m->generation, FUTEX_WAIT, gen, NULL, NULL, 0);
}

static ncclResult_t init(ncclComm_t *comm, int nranks, const ncclUniqueId *id, int rank)
{
	struct ncclComm *c;
	uint64_t key;
	int fd;

	if (!comm || nranks < 1 || rank < 0 || rank >= nranks)
		return ncclInvalidArgument;
	c = calloc(1, sizeof(*c));
	if (!c)
		return ncclSystemError;
	memcpy(&key, id->internal, sizeof(key));
	snprintf(c->path, sizeof(c->path), "/dev/shm/inferscope-standin-nccl-%016llx", (unsigned long long)key);
	fd = open(c->path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0 || ftruncate(fd, sizeof(struct meeting))) {
		if (fd >= 0)
			close(fd);
		free(c);
		return ncclSystemError;
	}
	c->m = mmap(NULL, sizeof(struct meeting), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (c->m == MAP_FAILED) {
		free(c);
		return ncclSystemError;
	}
	c->rank = rank;
	c->nranks = nranks;
	barrier(c);
	*comm = c;
	return ncclSuccess;
}

ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank)
{
	return init(comm, nranks, &commId, rank);
}

ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank,
				    ncclConfig_t *config)
{
	(void)config;
	return init(comm, nranks, &commId, rank);
}

ncclResult_t ncclCommDestroy(ncclComm_t comm)
{
	if (!comm)
		return ncclInvalidArgument;
	barrier(comm);
	if (comm->rank == 0)
		unlink(comm->path);
	munmap(comm->m, sizeof(struct meeting));
	free(comm);
	return ncclSuccess;
}

static ncclResult_t collective(ncclComm_t comm)
{
	if (!comm)
		return ncclInvalidArgument;
	barrier(comm);
	return ncclSuccess;
}

ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
			   ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream)
{
	(void)sendbuff, (void)recvbuff, (void)count, (void)datatype, (void)op, (void)stream;
	return collective(comm);
}

ncclResult_t ncclBroadcast(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, int root,
			   ncclComm_t comm, cudaStream_t stream)
{
	(void)sendbuff, (void)recvbuff, (void)count, (void)datatype, (void)root, (void)stream;
	return collective(comm);
}

ncclResult_t ncclReduce(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
			ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream)
{
	(void)sendbuff, (void)recvbuff, (void)count, (void)datatype, (void)op, (void)root, (void)stream;
	return collective(comm);
}

ncclResult_t ncclAllGather(const void *sendbuff, void *recvbuff, size_t sendcount, ncclDataType_t datatype,
			   ncclComm_t comm, cudaStream_t stream)
{
	(void)sendbuff, (void)recvbuff, (void)sendcount, (void)datatype, (void)stream;
	return collective(comm);
}

ncclResult_t ncclReduceScatter(const void *sendbuff, void *recvbuff, size_t recvcount, ncclDataType_t datatype,
			       ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream)
{
	(void)sendbuff, (void)recvbuff, (void)recvcount, (void)datatype, (void)op, (void)stream;
	return collective(comm);
}

ncclResult_t ncclSend(const void *sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
		      cudaStream_t stream)
{
	(void)sendbuff, (void)count, (void)datatype, (void)stream;
	return comm && peer >= 0 && peer < comm->nranks ? ncclSuccess : ncclInvalidArgument;
}

ncclResult_t ncclRecv(void *recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
		      cudaStream_t stream)
{
	(void)recvbuff, (void)count, (void)datatype, (void)stream;
	return comm && peer >= 0 && peer < comm->nranks ? ncclSuccess : ncclInvalidArgument;
}

static _Thread_local int group_depth;

ncclResult_t ncclGroupStart(void)
{
	group_depth++;
	return ncclSuccess;
}

ncclResult_t ncclGroupEnd(void)
{
	return group_depth-- > 0 ? ncclSuccess : ncclInvalidUsage;
}
