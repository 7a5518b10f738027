/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The host's NVIDIA GPUs (PCI address, PCIe link, NUMA node, local CPUs)
 * and NUMA nodes (CPUs, memory, distances) as the recording's host
 * information holds them (ISR_PROP_HOST_GPU, ISR_PROP_HOST_NUMA_NODE in
 * format/isr_format.h), decoded and checked; and what a PCIe link can
 * carry. A recording made before these properties existed has neither.
 */
#ifndef INFERSCOPE_HOST_TOPO_H
#define INFERSCOPE_HOST_TOPO_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "recording.h"

struct host_gpu {
	struct isr_host_gpu g;
	char *cpus;			/* local CPU list ("0-7,16-23"; "" when unknown) */
};

struct host_numa_node {
	__u32 node;
	__u64 memory_bytes;
	struct isr_numa_distance *dist;
	size_t ndist;
	char *cpus;
};

struct host_topo {
	struct host_gpu *gpus;		/* in PCI address order */
	size_t ngpus;
	struct host_numa_node *nodes;	/* in node order */
	size_t nnodes;
};

/* Decodes h's GPU and NUMA properties into t (zeroed first); a property
 * too short for its struct is left out. 0 or -ENOMEM. */
int host_topo__decode(const struct rec_host *h, struct host_topo *t);
void host_topo__free(struct host_topo *t);

/* Whether cpu is in a CPU list such as "0-7,16-23" (false for a list that
 * does not parse there). */
bool host_topo__cpu_in_list(const char *list, __u32 cpu);
/* The NUMA node whose CPU list holds cpu, or -1. */
int host_topo__cpu_node(const struct host_topo *t, __u32 cpu);

/*
 * What g's link carries in one direction at its best, in bytes/s: the
 * fastest speed both its ends support (the GPU's and its upstream port's
 * maximum; a GPU parks its link at 2.5 GT/s when idle, so the speed when
 * recording began says little), or the current speed when that is faster
 * or nothing else is known, times the width it trained at (its maximum
 * when unknown), less the line encoding (8b/10b up to 5 GT/s, 128b/130b
 * to 32 GT/s, 242/256 FLITs beyond). 0 when unknown. *mts and *width:
 * the speed and width used.
 */
double host_gpu__link_bytes_per_s(const struct isr_host_gpu *g, __u32 *mts, __u16 *width);
/* The link every GPU of the host has (host_gpu__link_bytes_per_s): known
 * when the host has one NVIDIA GPU, or several with the same link (CUDA
 * numbers its devices in its own order, which the recording does not tie
 * to PCI addresses). 0 when unknown or they differ (*ambiguous then). */
double host_topo__link_bytes_per_s(const struct host_topo *t, __u32 *mts, __u16 *width, bool *ambiguous);
/* The PCIe generation of a speed in MT/s (2500: 1 ... 64000: 6); 0 when
 * unknown. */
unsigned int host_topo__pcie_gen(__u32 mts);

#endif
