// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The host's GPUs and NUMA nodes, from a fake sysfs tree of a topology this
 * machine does not have (two nodes, an NVIDIA GPU on node 1 behind a PCIe
 * port, an NVIDIA audio function and a network card beside it): written by
 * the recorder's reader (user/record/procinfo.h) into a recording, read back by the
 * analysis (analysis/read/host_topo.h), with the link's bandwidth and the
 * report's host section.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "analysis.h"
#include "host_topo.h"
#include "isr_format.h"
#include "procinfo.h"
#include "rec_writer.h"
#include "recording.h"
#include "report.h"

static char root[64];

/* Writes text to root/rel, making its directories. */
static void put(const char *rel, const char *text)
{
	char path[512], *slash;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (slash = strchr(path + strlen(root) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(path, 0755);
		*slash = '/';
	}
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static void link_to(const char *rel, const char *target)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	assert_int_equal(symlink(target, path), 0);
}

#define PORT	"devices/pci0000:3a/0000:3a:00.0"
#define GPU	PORT "/0000:3b:00.0"
#define AUDIO	PORT "/0000:3b:00.1"
#define NIC	"devices/pci0000:00/0000:00:03.0"

static int make_tree(void **state)
{
	(void)state;
	snprintf(root, sizeof(root), "/tmp/inferscope-sysfs-XXXXXX");
	assert_non_null(mkdtemp(root));
	put(PORT "/max_link_speed", "16.0 GT/s PCIe\n");
	put(PORT "/max_link_width", "16\n");
	put(GPU "/vendor", "0x10de\n");
	put(GPU "/device", "0x2330\n");
	put(GPU "/class", "0x030200\n");
	put(GPU "/current_link_speed", "2.5 GT/s PCIe\n");
	put(GPU "/max_link_speed", "32.0 GT/s PCIe\n");
	put(GPU "/current_link_width", "16\n");
	put(GPU "/max_link_width", "16\n");
	put(GPU "/numa_node", "1\n");
	put(GPU "/local_cpulist", "8-15\n");
	put(AUDIO "/vendor", "0x10de\n");
	put(AUDIO "/class", "0x040300\n");
	put(NIC "/vendor", "0x8086\n");
	put(NIC "/class", "0x020000\n");
	put("bus/pci/devices/.keep", "");
	link_to("bus/pci/devices/0000:3b:00.0", "../../../" GPU);
	link_to("bus/pci/devices/0000:3b:00.1", "../../../" AUDIO);
	link_to("bus/pci/devices/0000:00:03.0", "../../../" NIC);
	put("devices/system/node/online", "0-1\n");
	put("devices/system/node/node0/cpulist", "0-7\n");
	put("devices/system/node/node0/distance", "10 21\n");
	put("devices/system/node/node0/meminfo", "Node 0 MemTotal:       16384000 kB\nNode 0 MemFree: 1 kB\n");
	put("devices/system/node/node1/cpulist", "8-15\n");
	put("devices/system/node/node1/distance", "21 10\n");
	put("devices/system/node/node1/meminfo", "Node 1 MemTotal:       8192000 kB\n");
	return 0;
}

static int remove_tree(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) == 0 ? 0 : -1;
}

/* The fake tree's host properties, written to a recording and loaded. */
static struct recording *record_tree(void)
{
	char path[128], err[256];
	struct rec_props *p = rec_props__new();
	struct rec_writer *w;
	struct recording *r;

	assert_non_null(p);
	assert_int_equal(rec_props__add_u32(p, ISR_PROP_HOST_NCPUS, 16), 0);
	assert_int_equal(procinfo__host_topology(p, root), 0);
	snprintf(path, sizeof(path), "%s/rec.isr", root);
	w = rec_writer__open(path, &(struct rec_writer_opts){ .zstd_level = 1 });
	assert_non_null(w);
	assert_int_equal(rec_writer__write_props(w, ISR_CHUNK_HOST, p), 0);
	assert_int_equal(rec_writer__finish(w, 2000, ISR_STOP_SIGNAL), 0);
	rec_writer__free(w);
	rec_props__free(p);
	assert_int_equal(recording__load(path, &r, err, sizeof(err)), 0);
	unlink(path);
	return r;
}

static void test_gpu_and_nodes(void **state)
{
	struct recording *r = record_tree();
	struct host_topo t;
	const struct isr_host_gpu *g;
	__u32 mts;
	__u16 width;

	(void)state;
	assert_int_equal(host_topo__decode(&r->host, &t), 0);
	/* the GPU, not its audio function nor the network card */
	assert_int_equal(t.ngpus, 1);
	g = &t.gpus[0].g;
	assert_string_equal(g->pci_address, "0000:3b:00.0");
	assert_int_equal(g->vendor, 0x10de);
	assert_int_equal(g->device, 0x2330);
	assert_int_equal(g->class_code, 0x030200);
	assert_int_equal(g->link_speed_mts, 2500);
	assert_int_equal(g->max_link_speed_mts, 32000);
	assert_int_equal(g->link_width, 16);
	assert_int_equal(g->port_max_speed_mts, 16000);
	assert_int_equal(g->port_max_width, 16);
	assert_int_equal(g->numa_node, 1);
	assert_string_equal(t.gpus[0].cpus, "8-15");
	/* a Gen5 GPU behind a Gen4 port, idle at 2.5 GT/s: Gen4 x16 */
	assert_true(fabs(host_gpu__link_bytes_per_s(g, &mts, &width) - 16000e6 * 128 / 130 / 8 * 16) < 1);
	assert_int_equal(mts, 16000);
	assert_int_equal(width, 16);
	assert_int_equal(host_topo__pcie_gen(mts), 4);
	assert_int_equal(t.nnodes, 2);
	assert_int_equal(t.nodes[1].node, 1);
	assert_string_equal(t.nodes[1].cpus, "8-15");
	assert_int_equal(t.nodes[1].memory_bytes, 8192000ULL * 1024);
	assert_int_equal(t.nodes[1].ndist, 2);
	assert_int_equal(t.nodes[1].dist[0].node, 0);
	assert_int_equal(t.nodes[1].dist[0].distance, 21);
	assert_int_equal(t.nodes[1].dist[1].distance, 10);
	assert_string_equal(t.nodes[0].cpus, "0-7");
	host_topo__free(&t);
	recording__free(r);
}

/* The link's bandwidth by generation (encoding included), and what is
 * used when a side is unknown. */
static void test_link_bandwidth(void **state)
{
	struct isr_host_gpu g;
	__u32 mts;
	__u16 width;

	(void)state;
	memset(&g, 0, sizeof(g));
	assert_true(host_gpu__link_bytes_per_s(&g, &mts, &width) == 0);
	g.max_link_speed_mts = 2500;
	g.max_link_width = 1;
	assert_true(fabs(host_gpu__link_bytes_per_s(&g, &mts, &width) - 250e6) < 1);
	g.max_link_speed_mts = 64000;
	g.link_width = 16;
	assert_true(fabs(host_gpu__link_bytes_per_s(&g, &mts, &width) - 64000e6 * 242 / 256 / 8 * 16) < 1);
	/* a current speed above what the maxima say wins */
	g.max_link_speed_mts = 8000;
	g.link_speed_mts = 16000;
	host_gpu__link_bytes_per_s(&g, &mts, &width);
	assert_int_equal(mts, 16000);
}

/* The report's host section names the GPU's link and the nodes. */
static void test_report_host(void **state)
{
	struct recording *r = record_tree();
	struct analysis *a = NULL;
	char *md = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	assert_int_equal(analysis__run(r, &a), 0);
	f = open_memstream(&md, &len);
	assert_non_null(f);
	assert_int_equal(report__write_markdown(f, a), 0);
	assert_int_equal(fclose(f), 0);
	if (!strstr(md, "- **GPUs:** 0000:3b:00.0 PCIe Gen4 x16 (31.5 GB/s each way; 2.5 GT/s x16 when recording "
			"began), NUMA node 1, local CPUs 8-15") ||
	    !strstr(md, "- **NUMA:** node 0: CPUs 0-7, 15.6 GiB, distance 21 to node 1; node 1: CPUs 8-15"))
		fail_msg("host section:\n%s", md);
	free(md);
	analysis__free(a);
	recording__free(r);
}

/* CPU lists as sysfs writes them, and the node of a CPU. */
static void test_cpu_lists(void **state)
{
	(void)state;
	assert_true(host_topo__cpu_in_list("0-7,16-23", 0));
	assert_true(host_topo__cpu_in_list("0-7,16-23", 7));
	assert_false(host_topo__cpu_in_list("0-7,16-23", 8));
	assert_true(host_topo__cpu_in_list("0-7,16-23", 23));
	assert_false(host_topo__cpu_in_list("0-7,16-23", 24));
	assert_true(host_topo__cpu_in_list("3\n", 3));
	assert_true(host_topo__cpu_in_list("1,3,5", 5));
	assert_false(host_topo__cpu_in_list("1,3,5", 4));
	assert_false(host_topo__cpu_in_list("", 0));
	assert_false(host_topo__cpu_in_list("x-3", 1));
	assert_false(host_topo__cpu_in_list("0-", 0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cpu_lists),
		cmocka_unit_test(test_gpu_and_nodes),
		cmocka_unit_test(test_link_bandwidth),
		cmocka_unit_test(test_report_host),
	};

	return cmocka_run_group_tests(tests, make_tree, remove_tree);
}
