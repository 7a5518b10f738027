// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The readiness check. Every probe of a kernel feature loads nothing that
 * stays: a map or a trivial program is created and closed at once.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <linux/capability.h>
#include <linux/perf_event.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <jansson.h>
#include "buf.h"
#include "check.h"
#include "cuda_funcs.h"
#include "probed_lib.h"
#include "preflight.h"
#include "proc.h"
#include "py_libs.h"
#include "text.h"
#include "tracer.h"

const char *check_status_name(enum check_status s)
{
	static const char *const names[] = { "ok", "warn", "absent", "fail" };

	return (unsigned int)s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

static __attribute__((format(printf, 4, 5))) struct check_item *add(struct check_result *res, const char *id,
								      enum check_status st, const char *fmt, ...)
{
	struct check_item *it;
	va_list ap;

	if (array__reserve(&res->items, &res->cap, res->n + 1, sizeof(*res->items)))
		return NULL;
	it = &res->items[res->n++];
	memset(it, 0, sizeof(*it));
	snprintf(it->id, sizeof(it->id), "%s", id);
	it->status = st;
	va_start(ap, fmt);
	vsnprintf(it->detail, sizeof(it->detail), fmt, ap);
	va_end(ap);
	return it;
}

static void set_fix(struct check_item *it, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_fix(struct check_item *it, const char *fmt, ...)
{
	va_list ap;

	if (!it)
		return;
	va_start(ap, fmt);
	vsnprintf(it->fix, sizeof(it->fix), fmt, ap);
	va_end(ap);
}

struct caps {
	bool root, bpf, perfmon, sys_admin, sys_ptrace;
};

static void read_caps(struct caps *c)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
	struct __user_cap_data_struct d[2];

	memset(c, 0, sizeof(*c));
	memset(d, 0, sizeof(d));
	c->root = geteuid() == 0;
	if (syscall(SYS_capget, &hdr, d) != 0)
		return;
#define HAS(cap) ((d[(cap) / 32].effective >> ((cap) % 32)) & 1)
	c->bpf = HAS(CAP_BPF);
	c->perfmon = HAS(CAP_PERFMON);
	c->sys_admin = HAS(CAP_SYS_ADMIN);
	c->sys_ptrace = HAS(CAP_SYS_PTRACE);
#undef HAS
}

static bool check_privileges(struct check_result *res, const struct caps *c)
{
	struct check_item *it;
	char missing[96] = "";

	if ((c->bpf && c->perfmon) || c->sys_admin) {
		add(res, "privileges", CHECK_OK, "%s", c->root ? "running as root" :
		    c->sys_admin ? "CAP_SYS_ADMIN" : "CAP_BPF and CAP_PERFMON");
	} else {
		if (!c->bpf)
			strcat(missing, " CAP_BPF");
		if (!c->perfmon)
			strcat(missing, " CAP_PERFMON");
		it = add(res, "privileges", CHECK_FAIL, "not root (uid %u) and missing%s: no BPF program can be loaded",
			 (unsigned int)geteuid(), missing);
		set_fix(it, "run as root (sudo inferscope-bpf ...) or grant the binary the capabilities: "
			    "setcap cap_bpf,cap_perfmon,cap_sys_ptrace+ep inferscope-bpf");
		return false;
	}
	if (!c->sys_ptrace && !c->root) {
		it = add(res, "ptrace_capability", CHECK_WARN, "missing CAP_SYS_PTRACE: the CUPTI bridge cannot be "
			 "loaded into a running process, Python stacks cannot be read from another user's process");
		set_fix(it, "add cap_sys_ptrace to the binary's capabilities, or run as root");
	}
	return true;
}

static bool check_btf(struct check_result *res)
{
	char err[256];
	struct check_item *it;

	if (preflight__btf(err, sizeof(err)) == 0) {
		add(res, "btf", CHECK_OK, "kernel BTF at /sys/kernel/btf/vmlinux");
		return true;
	}
	it = add(res, "btf", CHECK_FAIL, "%s", err);
	set_fix(it, "boot a kernel built with CONFIG_DEBUG_INFO_BTF=y");
	return false;
}

/* Whether the kernel's BTF has the tracepoint the tp_btf program attaches
 * to (btf_trace_<name>). -errno when BTF cannot be read. */
static int btf_has_tracepoint(const struct btf *btf, const char *tp)
{
	char name[128];

	snprintf(name, sizeof(name), "btf_trace_%s", tp);
	return btf__find_by_name_kind(btf, name, BTF_KIND_TYPEDEF) > 0;
}

static void check_tracepoints(struct check_result *res, bool btf_ok)
{
	static const struct {
		const char *tp, *use;
		bool needed;
	} tps[] = {
		{ "sched_switch", "on/off-CPU time, run-queue wait", true },
		{ "sched_waking", "who woke whom", true },
		{ "sched_wakeup", "when a woken thread became runnable", true },
		{ "sched_process_fork", "following children", true },
		{ "page_fault_user", "page faults (--no-faults turns them off)", false },
	};
	struct btf *btf;

	if (!btf_ok)
		return;
	btf = btf__load_vmlinux_btf();
	if (!btf) {
		struct check_item *it = add(res, "tp_btf", CHECK_FAIL, "cannot read the kernel's BTF: %s",
					    strerror(errno));
		set_fix(it, "check that /sys/kernel/btf/vmlinux is readable");
		return;
	}
	for (size_t i = 0; i < sizeof(tps) / sizeof(tps[0]); i++) {
		char id[32];

		snprintf(id, sizeof(id), "tp_btf:%s", tps[i].tp);
		if (btf_has_tracepoint(btf, tps[i].tp) > 0) {
			add(res, id, CHECK_OK, "BTF tracepoint present (%s)", tps[i].use);
		} else {
			struct check_item *it = add(res, id, tps[i].needed ? CHECK_FAIL : CHECK_WARN,
						    "the kernel has no BTF tracepoint %s: no %s", tps[i].tp, tps[i].use);
			set_fix(it, "a kernel of 5.8 or later with that tracepoint");
		}
	}
	btf__free(btf);
}

/* A feature probe that needs privilege: not checked without it. */
static void check_bpf_features(struct check_result *res, bool priv_ok, bool *ringbuf_ok)
{
	struct check_item *it;
	int r;

	*ringbuf_ok = false;
	if (!priv_ok) {
		add(res, "ringbuf", CHECK_ABSENT, "not checked: loading BPF needs the privileges above");
		add(res, "uprobe_multi", CHECK_ABSENT, "not checked: loading BPF needs the privileges above");
		return;
	}
	r = libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL);
	if (r > 0) {
		add(res, "ringbuf", CHECK_OK, "BPF ring buffers (the event stream)");
		*ringbuf_ok = true;
	} else {
		it = add(res, "ringbuf", CHECK_FAIL, "BPF ring buffers are not available (%s)",
			 r < 0 ? strerror(-r) : "the kernel does not know the map type");
		set_fix(it, "a kernel of 5.8 or later");
	}
	if (tracer__has_uprobe_multi()) {
		add(res, "uprobe_multi", CHECK_OK, "uprobe_multi links: fast attach, the overhead budget (--budget) works");
	} else {
		it = add(res, "uprobe_multi", CHECK_WARN, "no uprobe_multi links: one perf-event uprobe per function "
			 "(slower attach) and no overhead budget (every CUDA call is traced)");
		set_fix(it, "Linux 6.6 or later for the overhead budget");
	}
}

static void check_perf_events(struct check_result *res)
{
	struct perf_event_attr a;
	struct check_item *it;
	char buf[32] = "";
	long paranoid = -100;
	int fd;

	if (proc__read_small("/proc/sys/kernel/perf_event_paranoid", buf, sizeof(buf)) > 0)
		paranoid = strtol(buf, NULL, 10);
	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_SOFTWARE;
	a.size = sizeof(a);
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.sample_freq = 99;
	a.freq = 1;
	a.disabled = 1;
	fd = (int)syscall(SYS_perf_event_open, &a, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		add(res, "perf_events", CHECK_OK, "CPU-clock perf events (Python stack sampling)");
		return;
	}
	it = add(res, "perf_events", CHECK_WARN, "cannot open a CPU-wide perf event (%s; perf_event_paranoid %ld): "
		 "no Python stack samples", strerror(errno), paranoid);
	set_fix(it, "run as root or with CAP_PERFMON");
}

static void check_ptrace_scope(struct check_result *res, const struct caps *c)
{
	char buf[16] = "";
	struct check_item *it;
	long scope;

	if (proc__read_small("/proc/sys/kernel/yama/ptrace_scope", buf, sizeof(buf)) <= 0) {
		add(res, "ptrace_scope", CHECK_OK, "no Yama LSM: loading the CUPTI bridge into a running process "
		    "(--gpu -p) is allowed");
		return;
	}
	scope = strtol(buf, NULL, 10);
	if (scope == 3) {
		it = add(res, "ptrace_scope", CHECK_WARN, "kernel.yama.ptrace_scope=3: no process can be ptraced, the "
			 "CUPTI bridge cannot be loaded into a running process (--gpu -p)");
		set_fix(it, "start the job with CUDA_INJECTION64_PATH=libinferscope_cupti.so, or launch it with "
			    "inferscope-bpf --gpu -- CMD (the scope can only be lowered by a reboot)");
	} else if (scope >= 1 && !c->root && !c->sys_ptrace) {
		it = add(res, "ptrace_scope", CHECK_WARN, "kernel.yama.ptrace_scope=%ld and no CAP_SYS_PTRACE: the "
			 "bridge cannot be loaded into a running process", scope);
		set_fix(it, "run as root, or add cap_sys_ptrace");
	} else {
		add(res, "ptrace_scope", CHECK_OK, "kernel.yama.ptrace_scope=%ld: loading the CUPTI bridge into a "
		    "running process (--gpu -p) is allowed", scope);
	}
}

/* The version a library's real file name carries: libcuda.so.580.65.06
 * gives 580.65.06. path is resolved through symlinks. */
static void file_version(const char *path, const char *stem, char *out, size_t len)
{
	char real[PATH_MAX];
	const char *base, *v;

	out[0] = '\0';
	if (!realpath(path, real))
		snprintf(real, sizeof(real), "%s", path);
	base = strrchr(real, '/');
	base = base ? base + 1 : real;
	v = strstr(base, stem);
	if (v && v[strlen(stem)])
		snprintf(out, len, "%s", v + strlen(stem));
}

/* The NVIDIA driver of the host: its version, or why there is none. */
static void check_gpu_host(struct check_result *res, struct probed_libs *libs)
{
	struct probed_mapping cand[PROBED_MAX_LIBS];
	struct check_item *it;
	char buf[512] = "";
	int n;

	if (proc__read_small("/proc/driver/nvidia/version", buf, sizeof(buf)) > 0) {
		char *nl = strchr(buf, '\n');

		if (nl)
			*nl = '\0';
		add(res, "nvidia_driver", CHECK_OK, "%s", buf);
	} else {
		it = add(res, "nvidia_driver", CHECK_ABSENT, "no NVIDIA driver loaded (/proc/driver/nvidia/version "
			 "absent): no GPU here; CUDA processes cannot run, CPU tracing works");
		set_fix(it, "on a GPU host, load the driver (nvidia-smi tells whether it is)");
	}
	n = libs ? probed_libs__candidates(libs, NULL, cand, PROBED_MAX_LIBS, NULL) : 0;
	if (n > 0) {
		char ver[64];

		file_version(cand[0].path, "libcuda.so.", ver, sizeof(ver));
		add(res, "libcuda_host", CHECK_OK, "%s%s%s (%u of the traced driver functions exported)",
		    cand[0].path, ver[0] ? ", version " : "", ver, cand[0].lib->present);
	} else {
		it = add(res, "libcuda_host", CHECK_ABSENT, "no libcuda.so.1 in the library search path: CUDA absent, "
			 "only CPU tracing (scheduling, faults, Python)");
		set_fix(it, "install the NVIDIA driver; a libcuda elsewhere can be probed with --cuda-lib PATH");
	}
}

/* What a libcuda's probe sites cost: counts per site class. */
static void check_cuda_sites(struct check_result *res, const struct probed_mapping *m)
{
	unsigned int push = 0, endbr = 0, stepped = 0;
	struct check_item *it;
	char ver[64];

	for (unsigned int f = 1; f < ISR_CUDA_FN_MAX; f++) {
		switch (m->lib->sites[f].kind) {
		case PROBE_SITE_PUSH:
			push++;
			break;
		case PROBE_SITE_AFTER_ENDBR:
			endbr++;
			break;
		case PROBE_SITE_STEPPED:
			stepped++;
			break;
		default:
			break;
		}
	}
	file_version(m->path, "libcuda.so.", ver, sizeof(ver));
	add(res, "libcuda", CHECK_OK, "%s%s%s: %u traced functions exported", m->path, ver[0] ? ", version " : "",
	    ver, m->lib->present);
	it = add(res, "probe_sites", stepped ? CHECK_WARN : CHECK_OK,
		 "%u emulated (push), %u after endbr64, %u single-stepped", push, endbr, stepped);
	if (stepped)
		set_fix(it, "single-stepped sites cost about 10x (5-12 us a call): list them with --list-probes; the "
			    "overhead budget (--budget) bounds their total cost");
	add(res, "cost", stepped ? CHECK_WARN : CHECK_OK, "%s",
	    stepped ? "expected cost: high per traced call on the single-stepped functions (about 5-12 us), bounded "
		      "near 1% of the busiest thread by the overhead budget" :
		      "expected cost: low, about 0.5-0.8 us per traced CUDA call, kept near 1% of the busiest "
		      "thread by the overhead budget");
}

/* Mapped files whose name contains needle: the first such path in out. */
static bool mapped_file(__u32 pid, const char *needle, char *out, size_t len)
{
	struct proc_maps *maps = proc_maps__open(pid);
	struct proc_map m;
	bool found = false;

	if (!maps)
		return false;
	while (!found && proc_maps__next(maps, &m) > 0) {
		const char *base = strrchr(m.path, '/');

		if (proc_map__is_file(&m) && base && strstr(base + 1, needle)) {
			snprintf(out, len, "%s", m.path);
			found = true;
		}
	}
	proc_maps__close(maps);
	return found;
}

static bool check_target(struct check_result *res, __u32 pid, struct probed_libs *cl)
{
	struct probed_mapping cm[PROBED_MAX_LIBS];
	struct py_mapping pm[PY_MAX_LIBS];
	struct py_libs *pl;
	struct check_item *it;
	char err[256], path[PATH_MAX], comm[32] = "";
	bool cupti, bridge, nsight;
	int n;

	if (preflight__pid(pid, err, sizeof(err))) {
		it = add(res, "target", CHECK_FAIL, "%s", err);
		set_fix(it, "give the pid of a running process (pgrep -af python)");
		return false;
	}
	snprintf(path, sizeof(path), "/proc/%u/comm", pid);
	if (proc__read_small(path, comm, sizeof(comm)) > 0)
		comm[strcspn(comm, "\n")] = '\0';
	add(res, "target", CHECK_OK, "pid %u (%s): scheduling, page faults and process events can be traced", pid,
	    comm);
	n = cl ? probed_libs__mapped(cl, pid, cm, PROBED_MAX_LIBS, NULL) : 0;
	if (n > 0) {
		check_cuda_sites(res, &cm[0]);
	} else {
		it = add(res, "libcuda", CHECK_ABSENT, "pid %u maps no libcuda: it has not initialized CUDA (yet), "
			 "no CUDA calls to trace", pid);
		set_fix(it, "nothing, if it does not use CUDA; a job that loads CUDA later is probed when it does");
	}
	cupti = mapped_file(pid, "libcupti", path, sizeof(path));
	if (cupti) {
		char ver[64];

		file_version(path, "libcupti.so.", ver, sizeof(ver));
		add(res, "libcupti", CHECK_OK, "%s%s%s", path, ver[0] ? ", version " : "", ver);
	} else {
		add(res, "libcupti", CHECK_ABSENT, "no libcupti mapped: the bridge finds one itself when --gpu loads "
		    "it (INFERSCOPE_CUPTI_LIB overrides)");
	}
	bridge = mapped_file(pid, "libinferscope_cupti", path, sizeof(path));
	nsight = mapped_file(pid, "libToolsInjection", path, sizeof(path));
	if (bridge) {
		add(res, "cupti_subscriber", CHECK_OK, "the inferscope CUPTI bridge is loaded: GPU activity will be "
		    "collected");
	} else if (nsight) {
		it = add(res, "cupti_subscriber", CHECK_WARN, "Nsight's injection (%s) is loaded: it holds the one "
			 "CUPTI subscription, --gpu cannot collect GPU activity", path);
		set_fix(it, "trace without Nsight, or without --gpu (driver-level tracing still works)");
	} else if (cupti) {
		it = add(res, "cupti_subscriber", CHECK_WARN, "CUPTI is loaded by something else (Kineto / "
			 "torch.profiler?): if it has subscribed, --gpu fails with MULTIPLE_SUBSCRIBERS");
		set_fix(it, "stop the profiler in the job before tracing with --gpu; driver-level tracing works "
			    "regardless");
	} else {
		add(res, "cupti_subscriber", CHECK_OK, "no other CUPTI subscriber loaded");
	}
	pl = py_libs__new();
	n = pl ? py_libs__mapped(pl, pid, pm, PY_MAX_LIBS, NULL) : 0;
	if (n > 0)
		add(res, "libpython", CHECK_OK, "%s, Python 3.%d: stacks and --gil work", pm[0].path,
		    pm[0].lib->minor);
	else
		add(res, "libpython", CHECK_ABSENT, "no CPython 3.10-3.13 interpreter mapped: no Python stacks or GIL");
	py_libs__free(pl);
	if (mapped_file(pid, "nvToolsExt", path, sizeof(path)))
		add(res, "nvtx", CHECK_OK, "%s: NVTX ranges and marks are recorded as steps", path);
	else
		add(res, "nvtx", CHECK_ABSENT, "no NVTX library (libnvToolsExt) mapped: steps are inferred from the "
		    "trace's periodicity");
	return true;
}

int check__run(__u32 pid, struct check_result *res)
{
	struct probed_libs *cl;
	struct caps c;
	struct utsname u;
	bool priv, btf, ringbuf, target = true;

	memset(res, 0, sizeof(*res));
	if (uname(&u) == 0)
		add(res, "kernel", CHECK_OK, "Linux %s (%s)", u.release, u.machine);
	read_caps(&c);
	priv = check_privileges(res, &c);
	btf = check_btf(res);
	check_tracepoints(res, btf);
	check_bpf_features(res, priv, &ringbuf);
	check_perf_events(res);
	check_ptrace_scope(res, &c);
	cl = probed_libs__new(&probed_cuda);
	check_gpu_host(res, cl);
	if (pid)
		target = check_target(res, pid, cl);
	probed_libs__free(cl);
	res->ready = priv && btf && ringbuf && target;
	for (size_t i = 0; i < res->n; i++)
		if (res->items[i].status == CHECK_FAIL)
			res->ready = false;
	return res->n ? 0 : -ENOMEM;
}

void check__free(struct check_result *res)
{
	free(res->items);
	memset(res, 0, sizeof(*res));
}

int check__write_text(const struct check_result *res, FILE *out)
{
	for (size_t i = 0; i < res->n; i++) {
		const struct check_item *it = &res->items[i];

		/* details quote a target's names and files (lib/text.h) */
		fprintf(out, "%-6s %-26s ", check_status_name(it->status), it->id);
		text__write(out, it->detail, sizeof(it->detail), TEXT_TERM);
		fprintf(out, "\n");
		if (it->fix[0]) {
			fprintf(out, "       %-26s fix: ", "");
			text__write(out, it->fix, sizeof(it->fix), TEXT_TERM);
			fprintf(out, "\n");
		}
	}
	fprintf(out, "\n%s\n", res->ready ? "ready: inferscope-bpf can record here" :
		     "not ready: recording will not work until the failures above are fixed");
	return ferror(out) ? -EIO : 0;
}

int check__write_json(const struct check_result *res, FILE *out)
{
	json_t *root = json_object(), *items = json_array();
	int e = 0;

	if (!root || !items) {
		json_decref(root);
		json_decref(items);
		return -ENOMEM;
	}
	json_object_set_new(root, "ready", json_boolean(res->ready));
	for (size_t i = 0; i < res->n && !e; i++) {
		const struct check_item *it = &res->items[i];
		char *detail = text__dup(it->detail, sizeof(it->detail), TEXT_UTF8, NULL);
		char *fix = text__dup(it->fix, sizeof(it->fix), TEXT_UTF8, NULL);

		if (!detail || !fix ||
		    json_array_append_new(items, json_pack("{s:s, s:s, s:s, s:s?}", "id", it->id, "status",
							   check_status_name(it->status), "detail", detail, "fix",
							   fix[0] ? fix : NULL)))
			e = -ENOMEM;
		free(detail);
		free(fix);
	}
	json_object_set_new(root, "checks", items);
	if (!e && (json_dumpf(root, out, JSON_INDENT(2)) || fputc('\n', out) == EOF))
		e = -EIO;
	json_decref(root);
	return e;
}
