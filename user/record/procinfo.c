// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/utsname.h>
#include "procinfo.h"
#include "isr_format.h"
#include "buf.h"
#include "proc.h"

struct thread_list {
	struct isr_thread_info *ti;
	size_t n, cap;
};

static int thread_list__add(void *ctx, __u32 pid, __u32 tid)
{
	struct thread_list *l = ctx;
	char comm_path[96];
	int e;

	e = array__reserve(&l->ti, &l->cap, l->n + 1, sizeof(*l->ti));
	if (e)
		return e;
	memset(&l->ti[l->n], 0, sizeof(l->ti[l->n]));
	l->ti[l->n].tid = tid;
	snprintf(comm_path, sizeof(comm_path), "/proc/%u/task/%u/comm", pid, tid);
	/* A thread that exits meanwhile keeps an empty name. */
	if (proc__read_small(comm_path, l->ti[l->n].comm, sizeof(l->ti[l->n].comm)) < 0)
		l->ti[l->n].comm[0] = '\0';
	l->n++;
	return 0;
}

static int add_threads(struct rec_props *p, __u32 pid)
{
	struct thread_list l = { NULL, 0, 0 };
	int e;

	e = proc__for_each_thread(pid, thread_list__add, &l);
	e = e ?: rec_props__add(p, ISR_PROP_PROC_THREADS, l.ti, l.n * sizeof(*l.ti));
	free(l.ti);
	return e;
}

static int add_file(struct rec_props *p, __u32 key, const char *path)
{
	size_t len = 0;
	char *buf = NULL;
	int e;

	e = proc__read_file(path, &buf, &len);
	if (e)
		return e;
	e = rec_props__add(p, key, buf, len);
	free(buf);
	return e;
}

/* Frees what p holds and says why (e, -errno): NULL. */
static struct rec_props *props_failed(struct rec_props *p, int e)
{
	rec_props__free(p);
	errno = -e;
	return NULL;
}

struct rec_props *procinfo__snapshot(__u32 pid, __u32 origin, __u64 now_mono_ns)
{
	char path[64], buf[4096];
	struct rec_props *p;
	__u32 ppid;
	char state;
	ssize_t n;
	int e;

	e = proc__stat(pid, &ppid, &state);
	if (e) {
		errno = e == -ENOENT ? ESRCH : -e;
		return NULL;
	}
	p = rec_props__new();
	if (!p)
		return NULL;
	e = rec_props__add_u32(p, ISR_PROP_PROC_PID, pid);
	e = e ?: rec_props__add_u32(p, ISR_PROP_PROC_PPID, ppid);
	e = e ?: rec_props__add_u32(p, ISR_PROP_PROC_ORIGIN, origin);
	e = e ?: rec_props__add_u64(p, ISR_PROP_PROC_SEEN_MONO_NS, now_mono_ns);
	if (e)
		goto fail;
	snprintf(path, sizeof(path), "/proc/%u/comm", pid);
	if (proc__read_small(path, buf, sizeof(buf)) >= 0 &&
	    (e = rec_props__add_str(p, ISR_PROP_PROC_COMM, buf)))
		goto fail;
	/* The rest is best effort: a process may exit while we read, and
	 * kernel threads have no cmdline or exe. */
	snprintf(path, sizeof(path), "/proc/%u/cmdline", pid);
	e = add_file(p, ISR_PROP_PROC_CMDLINE, path);
	if (e == -ENOMEM)
		goto fail;
	snprintf(path, sizeof(path), "/proc/%u/exe", pid);
	n = readlink(path, buf, sizeof(buf) - 1);
	if (n > 0) {
		buf[n] = '\0';
		e = rec_props__add_str(p, ISR_PROP_PROC_EXE, buf);
		if (e)
			goto fail;
	}
	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	e = add_file(p, ISR_PROP_PROC_MAPS, path);
	if (e == -ENOMEM)
		goto fail;
	e = add_threads(p, pid);
	if (e == -ENOMEM)
		goto fail;
	return p;
fail:
	return props_failed(p, e);
}

/* --- the host's GPUs and NUMA nodes, from sysfs ------------------------------- */

#define PCI_VENDOR_NVIDIA	0x10de
#define TOPO_MAX_TEXT		4096	/* a CPU list, a distance line */
#define TOPO_MAX_NODES		1024

/* Attribute attr of the sysfs directory dir, into buf: its length, or
 * -errno. */
static int sysfs_attr(const char *dir, const char *attr, char *buf, size_t len)
{
	char path[PATH_MAX];

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, attr) >= sizeof(path))
		return -ENAMETOOLONG;
	return proc__read_small(path, buf, len);
}

/* An integer attribute (decimal, or hex with 0x): false when absent or
 * not a number. */
static bool sysfs_long(const char *dir, const char *attr, long *v)
{
	char buf[64], *end;

	if (sysfs_attr(dir, attr, buf, sizeof(buf)) <= 0)
		return false;
	errno = 0;
	*v = strtol(buf, &end, 0);
	return !errno && end != buf && (*end == '\0' || *end == ' ');
}

/* A link speed ("16.0 GT/s PCIe", "2.5 GT/s", "Unknown"), in MT/s; 0
 * when unknown. */
static __u32 sysfs_link_speed(const char *dir, const char *attr)
{
	char buf[64], *end;
	double gts;

	if (sysfs_attr(dir, attr, buf, sizeof(buf)) <= 0)
		return 0;
	errno = 0;
	gts = strtod(buf, &end);
	if (errno || end == buf || strncmp(end, " GT/s", 5) || gts <= 0 || gts > 1000)
		return 0;
	return (__u32)(gts * 1000 + 0.5);
}

static __u16 sysfs_link_width(const char *dir, const char *attr)
{
	long w;

	return sysfs_long(dir, attr, &w) && w > 0 && w <= 64 ? (__u16)w : 0;
}

/* Whether name is a PCI address (dddd:bb:dd.f). */
static bool pci_address(const char *name)
{
	unsigned int d, b, s, f;
	char end;

	return strlen(name) == 12 && sscanf(name, "%4x:%2x:%2x.%1x%c", &d, &b, &s, &f, &end) == 4;
}

/* Appends a property: the fixed part, then n bytes of more, then text. */
static int add_with_text(struct rec_props *p, __u32 key, const void *fixed, size_t flen, const void *more, size_t n,
			 const char *text)
{
	size_t tlen = strlen(text);
	char *v = malloc(flen + n + tlen);
	int e;

	if (!v)
		return -ENOMEM;
	memcpy(v, fixed, flen);
	if (n)
		memcpy(v + flen, more, n);
	memcpy(v + flen + n, text, tlen);
	e = rec_props__add(p, key, v, flen + n + tlen);
	free(v);
	return e;
}

/* One PCI device of root/bus/pci/devices: a property if it is an NVIDIA
 * GPU. The upstream port is the device's parent in the device tree. */
static int add_gpu(struct rec_props *p, const char *root, const char *name)
{
	char dir[PATH_MAX], real[PATH_MAX], port[PATH_MAX], cpus[TOPO_MAX_TEXT], *slash;
	struct isr_host_gpu g;
	long vendor, class, device, node;

	if ((size_t)snprintf(dir, sizeof(dir), "%s/bus/pci/devices/%s", root, name) >= sizeof(dir) ||
	    !sysfs_long(dir, "vendor", &vendor) || vendor != PCI_VENDOR_NVIDIA || !sysfs_long(dir, "class", &class) ||
	    (class >> 16) != 0x03)
		return 0;
	memset(&g, 0, sizeof(g));
	snprintf(g.pci_address, sizeof(g.pci_address), "%s", name);
	g.vendor = (__u16)vendor;
	g.device = sysfs_long(dir, "device", &device) ? (__u16)device : 0;
	g.class_code = (__u32)class;
	g.link_speed_mts = sysfs_link_speed(dir, "current_link_speed");
	g.max_link_speed_mts = sysfs_link_speed(dir, "max_link_speed");
	g.link_width = sysfs_link_width(dir, "current_link_width");
	g.max_link_width = sysfs_link_width(dir, "max_link_width");
	g.numa_node = sysfs_long(dir, "numa_node", &node) && node >= 0 && node < TOPO_MAX_NODES ? (__s32)node : -1;
	if (realpath(dir, real) && (slash = strrchr(real, '/'))) {
		*slash = '\0';
		snprintf(port, sizeof(port), "%s", real);
		slash = strrchr(port, '/');
		if (slash && pci_address(slash + 1)) {
			g.port_max_speed_mts = sysfs_link_speed(port, "max_link_speed");
			g.port_max_width = sysfs_link_width(port, "max_link_width");
		}
	}
	if (sysfs_attr(dir, "local_cpulist", cpus, sizeof(cpus)) < 0)
		cpus[0] = '\0';
	return add_with_text(p, ISR_PROP_HOST_GPU, &g, sizeof(g), NULL, 0, cpus);
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int add_gpus(struct rec_props *p, const char *root)
{
	char dir[PATH_MAX], **names = NULL;
	size_t n = 0, cap = 0, i;
	struct dirent *de;
	DIR *d;
	int e = 0;

	snprintf(dir, sizeof(dir), "%s/bus/pci/devices", root);
	d = opendir(dir);
	if (!d)
		return 0;	/* no PCI bus: no GPU */
	while (!e && (de = readdir(d))) {
		if (!pci_address(de->d_name))
			continue;
		e = array__reserve(&names, &cap, n + 1, sizeof(*names));
		if (!e && !(names[n++] = strdup(de->d_name)))
			e = -ENOMEM;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), name_cmp);
	for (i = 0; i < n; i++) {
		e = e ?: add_gpu(p, root, names[i]);
		free(names[i]);
	}
	free(names);
	return e;
}

/* The ids of a node list ("0-1,3"), ascending, into ids: how many. */
static size_t parse_node_list(const char *s, __u32 *ids, size_t max)
{
	size_t n = 0;

	while (*s && n < max) {
		char *end;
		unsigned long a = strtoul(s, &end, 10), b = a;

		if (end == s)
			break;
		if (*end == '-')
			b = strtoul(end + 1, &end, 10);
		for (; a <= b && a < TOPO_MAX_NODES && n < max; a++)
			ids[n++] = (__u32)a;
		s = *end == ',' ? end + 1 : end;
		if (*end != ',')
			break;
	}
	return n;
}

static int add_numa_node(struct rec_props *p, const char *root, __u32 node, const __u32 *online, size_t nonline)
{
	struct isr_numa_distance dist[TOPO_MAX_NODES];
	char dir[PATH_MAX], text[TOPO_MAX_TEXT], cpus[TOPO_MAX_TEXT], *s, *end, *mem;
	struct isr_host_numa_node nd;
	size_t n = 0;

	snprintf(dir, sizeof(dir), "%s/devices/system/node/node%u", root, node);
	memset(&nd, 0, sizeof(nd));
	nd.node = node;
	/* distances to the online nodes, in their order */
	if (sysfs_attr(dir, "distance", text, sizeof(text)) > 0) {
		for (s = text; n < nonline; s = end) {
			unsigned long v = strtoul(s, &end, 10);

			if (end == s)
				break;
			dist[n].node = online[n];
			dist[n].distance = (__u32)v;
			n++;
		}
	}
	nd.distance_count = (__u32)n;
	if (sysfs_attr(dir, "meminfo", text, sizeof(text)) > 0 && (mem = strstr(text, "MemTotal:")))
		nd.memory_bytes = strtoull(mem + 9, NULL, 10) * 1024;
	if (sysfs_attr(dir, "cpulist", cpus, sizeof(cpus)) < 0)
		cpus[0] = '\0';
	return add_with_text(p, ISR_PROP_HOST_NUMA_NODE, &nd, sizeof(nd), dist, n * sizeof(dist[0]), cpus);
}

static int add_numa(struct rec_props *p, const char *root)
{
	__u32 online[TOPO_MAX_NODES];
	char path[PATH_MAX], text[TOPO_MAX_TEXT];
	size_t n, i;
	int e = 0;

	snprintf(path, sizeof(path), "%s/devices/system/node/online", root);
	if (proc__read_small(path, text, sizeof(text)) <= 0)
		return 0;	/* no NUMA information */
	n = parse_node_list(text, online, TOPO_MAX_NODES);
	for (i = 0; i < n && !e; i++)
		e = add_numa_node(p, root, online[i], online, n);
	return e;
}

int procinfo__host_topology(struct rec_props *p, const char *sysfs_root)
{
	const char *root = sysfs_root ? sysfs_root : "/sys";
	int e = add_gpus(p, root);

	return e ?: add_numa(p, root);
}

struct rec_props *procinfo__host(int argc, char **argv, __u64 start_mono_ns, __u64 duration_limit_ns,
				 const char *sysfs_root)
{
	struct rec_props *p = rec_props__new();
	char boot_id[64], *cmd = NULL;
	struct utsname u;
	size_t len = 0, off = 0;
	long ncpus;
	int e = 0, i;

	if (!p)
		return NULL;
	if (uname(&u) == 0) {
		e = rec_props__add_str(p, ISR_PROP_HOST_NAME, u.nodename);
		e = e ?: rec_props__add_str(p, ISR_PROP_HOST_KERNEL, u.release);
		e = e ?: rec_props__add_str(p, ISR_PROP_HOST_KERNEL_VERSION, u.version);
		e = e ?: rec_props__add_str(p, ISR_PROP_HOST_MACHINE, u.machine);
	}
	if (!e && proc__read_small("/proc/sys/kernel/random/boot_id", boot_id, sizeof(boot_id)) > 0)
		e = rec_props__add_str(p, ISR_PROP_HOST_BOOT_ID, boot_id);
	ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	e = e ?: rec_props__add_u32(p, ISR_PROP_HOST_NCPUS, ncpus > 0 ? (__u32)ncpus : 0);
	e = e ?: rec_props__add_str(p, ISR_PROP_HOST_TOOL_VERSION, "inferscope-bpf " ISR_VERSION);
	e = e ?: rec_props__add_u64(p, ISR_PROP_HOST_START_MONO_NS, start_mono_ns);
	e = e ?: rec_props__add_u64(p, ISR_PROP_HOST_DURATION_LIMIT_NS, duration_limit_ns);
	e = e ?: procinfo__host_topology(p, sysfs_root);
	if (e)
		goto fail;
	for (i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	cmd = malloc(len ? len : 1);
	if (!cmd) {
		e = -ENOMEM;
		goto fail;
	}
	for (i = 0; i < argc; i++) {
		size_t l = strlen(argv[i]) + 1;

		memcpy(cmd + off, argv[i], l);
		off += l;
	}
	e = rec_props__add(p, ISR_PROP_HOST_COMMAND, cmd, len);
	free(cmd);
	if (e)
		goto fail;
	return p;
fail:
	return props_failed(p, e);
}
