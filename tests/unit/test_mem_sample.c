// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The memory sampler (user/record/mem_sample.h) on fake /proc and /sys trees: a
 * process on a host of two NUMA nodes with most of its memory on node 1,
 * in a cgroup v2 with memory.high below memory.max and its own pressure;
 * the same process under cgroup v1 (no pressure of its own: the host's);
 * a process that is gone.
 */
#include <errno.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "mem_sample.h"

static char root[] = "/tmp/isr-memsample-XXXXXX";

static void put(const char *rel, const char *text)
{
	char path[512], dir[512], *slash;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	snprintf(dir, sizeof(dir), "%s", path);
	for (slash = strchr(dir + strlen(root) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(dir, 0755);
		*slash = '/';
	}
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(root))
		return -1;
	put("proc/42/status", "Name:\ttrainer\nVmRSS:\t  5000 kB\nRssAnon:\t  4000 kB\nRssFile:\t   900 kB\n"
			      "RssShmem:\t   100 kB\nVmSwap:\t    64 kB\n");
	put("proc/42/numa_maps",
	    "55d0c0000000 default file=/usr/bin/python3 mapped=100 N0=40 N1=60 kernelpagesize_kB=4\n"
	    "7f0000000000 default anon=1000 dirty=1000 N1=1000 kernelpagesize_kB=4\n"
	    "7f1000000000 default anon=2 dirty=2 N1=2 kernelpagesize_kB=2048\n"
	    "7f2000000000 default\n");
	put("proc/pressure/memory", "some avg10=0.00 avg60=0.00 avg300=0.00 total=777\n"
				    "full avg10=0.00 avg60=0.00 avg300=0.00 total=333\n");
	put("sys/fs/cgroup/job/memory.current", "1048576000\n");
	put("sys/fs/cgroup/job/memory.high", "1073741824\n");
	put("sys/fs/cgroup/job/memory.max", "max\n");
	put("sys/fs/cgroup/job/memory.pressure", "some avg10=1.00 avg60=0.50 avg300=0.10 total=123456\n"
						 "full avg10=0.50 avg60=0.20 avg300=0.05 total=65432\n");
	put("sys/fs/cgroup/memory/legacy/memory.usage_in_bytes", "16773120\n");
	put("sys/fs/cgroup/memory/legacy/memory.limit_in_bytes", "16777216\n");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void sample(bool numa, struct isr_ev_mem_sample *m)
{
	char proc[300], sys[300];

	snprintf(proc, sizeof(proc), "%s/proc", root);
	snprintf(sys, sizeof(sys), "%s/sys", root);
	assert_int_equal(mem_sample__read(42, proc, sys, numa, m), 0);
}

static void test_cgroup_v2_two_nodes(void **state)
{
	struct isr_ev_mem_sample m;

	(void)state;
	put("proc/42/cgroup", "0::/job\n");
	sample(true, &m);
	assert_int_equal(m.hdr.type, ISR_EV_MEM_SAMPLE);
	assert_int_equal(m.hdr.size, sizeof(m));
	assert_int_equal(m.hdr.pid, 42);
	assert_int_equal(m.rss_anon_bytes, 4000ULL << 10);
	assert_int_equal(m.rss_file_bytes, 900ULL << 10);
	assert_int_equal(m.rss_shmem_bytes, 100ULL << 10);
	assert_int_equal(m.swap_bytes, 64ULL << 10);
	assert_int_equal(m.flags, ISR_MEM_CGROUP | ISR_MEM_PSI | ISR_MEM_NUMA);
	assert_int_equal(m.cg_current_bytes, 1048576000ULL);
	assert_int_equal(m.cg_high_bytes, 1ULL << 30);
	assert_int_equal(m.cg_max_bytes, ISR_MEM_UNLIMITED);
	assert_int_equal(m.psi_some_us, 123456);
	assert_int_equal(m.psi_full_us, 65432);
	assert_int_equal(m.nnodes, 2);
	assert_int_equal(m.numa_bytes[0], 40ULL * 4096);
	assert_int_equal(m.numa_bytes[1], 60ULL * 4096 + 1000ULL * 4096 + 2ULL * (2 << 20));
	/* without numa_maps: nothing per node */
	sample(false, &m);
	assert_int_equal(m.flags & ISR_MEM_NUMA, 0);
	assert_int_equal(m.nnodes, 0);
	assert_int_equal(m.numa_bytes[1], 0);
}

static void test_cgroup_v1_host_pressure(void **state)
{
	struct isr_ev_mem_sample m;

	(void)state;
	put("proc/42/cgroup", "4:memory:/legacy\n3:cpuset:/\n0::/\n");
	sample(false, &m);
	assert_int_equal(m.flags, ISR_MEM_CGROUP | ISR_MEM_PSI | ISR_MEM_PSI_HOST);
	assert_int_equal(m.cg_current_bytes, 16773120);
	assert_int_equal(m.cg_max_bytes, 16777216);
	assert_int_equal(m.cg_high_bytes, ISR_MEM_UNLIMITED);
	assert_int_equal(m.psi_some_us, 777);
	assert_int_equal(m.psi_full_us, 333);
	/* no cgroup at all: the host's pressure only */
	put("proc/42/cgroup", "0::/elsewhere\n");
	sample(false, &m);
	assert_int_equal(m.flags, ISR_MEM_PSI | ISR_MEM_PSI_HOST);
	assert_int_equal(m.cg_current_bytes, 0);
}

static void test_gone(void **state)
{
	struct isr_ev_mem_sample m;
	char proc[300];

	(void)state;
	snprintf(proc, sizeof(proc), "%s/proc", root);
	assert_int_equal(mem_sample__read(43, proc, "/nonexistent", false, &m), -ESRCH);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cgroup_v2_two_nodes),
		cmocka_unit_test(test_cgroup_v1_host_pressure),
		cmocka_unit_test(test_gone),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
