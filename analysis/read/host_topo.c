// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "host_topo.h"

/* The text that ends a property's value, NUL-terminated (a NUL inside
 * ends it early); NULL when out of memory. */
static char *text_of(const unsigned char *v, size_t len)
{
	char *s = malloc(len + 1);

	if (!s)
		return NULL;
	memcpy(s, v, len);
	s[len] = '\0';
	return s;
}

static int add_gpu(struct host_topo *t, const struct rec_prop *p)
{
	struct host_gpu *n, *g;

	if (p->len < sizeof(struct isr_host_gpu))
		return 0;
	n = reallocarray(t->gpus, t->ngpus + 1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	t->gpus = n;
	g = &n[t->ngpus];
	memcpy(&g->g, p->value, sizeof(g->g));
	g->g.pci_address[sizeof(g->g.pci_address) - 1] = '\0';
	g->cpus = text_of(p->value + sizeof(g->g), p->len - sizeof(g->g));
	if (!g->cpus)
		return -ENOMEM;
	t->ngpus++;
	return 0;
}

static int add_node(struct host_topo *t, const struct rec_prop *p)
{
	struct isr_host_numa_node nd;
	struct host_numa_node *n, *x;
	size_t dlen;

	if (p->len < sizeof(nd))
		return 0;
	memcpy(&nd, p->value, sizeof(nd));
	if (nd.distance_count > (p->len - sizeof(nd)) / sizeof(struct isr_numa_distance))
		return 0;
	dlen = (size_t)nd.distance_count * sizeof(struct isr_numa_distance);
	n = reallocarray(t->nodes, t->nnodes + 1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	t->nodes = n;
	x = &n[t->nnodes];
	memset(x, 0, sizeof(*x));
	x->node = nd.node;
	x->memory_bytes = nd.memory_bytes;
	x->ndist = nd.distance_count;
	x->dist = malloc(dlen ? dlen : 1);
	x->cpus = text_of(p->value + sizeof(nd) + dlen, p->len - sizeof(nd) - dlen);
	if (!x->dist || !x->cpus) {
		free(x->dist);
		free(x->cpus);
		return -ENOMEM;
	}
	memcpy(x->dist, p->value + sizeof(nd), dlen);
	t->nnodes++;
	return 0;
}

int host_topo__decode(const struct rec_host *h, struct host_topo *t)
{
	int err = 0;

	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < h->prop_count && !err; i++) {
		if (h->props[i].key == ISR_PROP_HOST_GPU)
			err = add_gpu(t, &h->props[i]);
		else if (h->props[i].key == ISR_PROP_HOST_NUMA_NODE)
			err = add_node(t, &h->props[i]);
	}
	if (err)
		host_topo__free(t);
	return err;
}

void host_topo__free(struct host_topo *t)
{
	for (size_t i = 0; i < t->ngpus; i++)
		free(t->gpus[i].cpus);
	for (size_t i = 0; i < t->nnodes; i++) {
		free(t->nodes[i].dist);
		free(t->nodes[i].cpus);
	}
	free(t->gpus);
	free(t->nodes);
	memset(t, 0, sizeof(*t));
}

unsigned int host_topo__pcie_gen(__u32 mts)
{
	static const __u32 speeds[] = { 2500, 5000, 8000, 16000, 32000, 64000 };

	for (unsigned int i = 0; i < sizeof(speeds) / sizeof(speeds[0]); i++)
		if (mts == speeds[i])
			return i + 1;
	return 0;
}

double host_gpu__link_bytes_per_s(const struct isr_host_gpu *g, __u32 *mts, __u16 *width)
{
	__u32 best = g->max_link_speed_mts;
	__u16 w = g->link_width;
	double efficiency;

	if (best && g->port_max_speed_mts && g->port_max_speed_mts < best)
		best = g->port_max_speed_mts;
	if (g->link_speed_mts > best)
		best = g->link_speed_mts;
	if (!w) {
		w = g->max_link_width;
		if (w && g->port_max_width && g->port_max_width < w)
			w = g->port_max_width;
	}
	*mts = best;
	*width = w;
	if (!best || !w)
		return 0;
	efficiency = best <= 5000 ? 8.0 / 10 : best <= 32000 ? 128.0 / 130 : 242.0 / 256;
	return (double)best * 1e6 * efficiency / 8 * w;
}

bool host_topo__cpu_in_list(const char *list, __u32 cpu)
{
	const char *p = list;

	while (p && *p) {
		char *end;
		unsigned long lo = strtoul(p, &end, 10), hi = lo;

		if (end == p)
			return false;
		if (*end == '-') {
			p = end + 1;
			hi = strtoul(p, &end, 10);
			if (end == p)
				return false;
		}
		if (cpu >= lo && cpu <= hi)
			return true;
		p = *end == ',' ? end + 1 : NULL;
		if (*end && *end != ',' && *end != '\n')
			return false;
	}
	return false;
}

int host_topo__cpu_node(const struct host_topo *t, __u32 cpu)
{
	for (size_t i = 0; i < t->nnodes; i++)
		if (t->nodes[i].cpus && host_topo__cpu_in_list(t->nodes[i].cpus, cpu))
			return (int)t->nodes[i].node;
	return -1;
}

double host_topo__link_bytes_per_s(const struct host_topo *t, __u32 *mts, __u16 *width, bool *ambiguous)
{
	double link = 0;

	*mts = 0;
	*width = 0;
	*ambiguous = false;
	for (size_t i = 0; i < t->ngpus; i++) {
		__u32 m;
		__u16 w;
		double bps = host_gpu__link_bytes_per_s(&t->gpus[i].g, &m, &w);

		if (i && (bps != link || m != *mts || w != *width)) {
			*ambiguous = true;
			return 0;
		}
		link = bps;
		*mts = m;
		*width = w;
	}
	return link;
}
