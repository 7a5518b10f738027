// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/capability.h>
#include "preflight.h"
#include "proc.h"

static int has_cap(const struct __user_cap_data_struct *d, int cap)
{
	return (d[cap / 32].effective >> (cap % 32)) & 1;
}

int preflight__privileges(char *err, size_t errlen)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
	struct __user_cap_data_struct data[2];

	if (geteuid() == 0)
		return 0;
	memset(data, 0, sizeof(data));
	if (syscall(SYS_capget, &hdr, data) == 0 &&
	    ((has_cap(data, CAP_BPF) && has_cap(data, CAP_PERFMON)) || has_cap(data, CAP_SYS_ADMIN)))
		return 0;
	snprintf(err, errlen,
		 "not enough privilege to load BPF programs: run as root (sudo inferscope-bpf ...) "
		 "or grant the binary CAP_BPF and CAP_PERFMON "
		 "(setcap cap_bpf,cap_perfmon,cap_sys_ptrace+ep inferscope-bpf)");
	return -EPERM;
}

int preflight__btf(char *err, size_t errlen)
{
	const char *path = getenv("INFERSCOPE_BTF");

	if (!path)
		path = "/sys/kernel/btf/vmlinux";
	if (access(path, R_OK) == 0)
		return 0;
	snprintf(err, errlen,
		 "this kernel exposes no BTF (%s: %s): inferscope-bpf needs a kernel built with "
		 "CONFIG_DEBUG_INFO_BTF=y (the default of current Debian, Ubuntu, Fedora and RHEL kernels)",
		 path, strerror(errno));
	return -ENOENT;
}

int preflight__pid(__u32 pid, char *err, size_t errlen)
{
	char path[64];

	if (pid == 0) {
		snprintf(err, errlen, "pid 0 is not a process: give the pid of the job to trace");
		return -EINVAL;
	}
	if (pid == (__u32)getpid()) {
		snprintf(err, errlen, "pid %u is inferscope-bpf itself", pid);
		return -EINVAL;
	}
	snprintf(path, sizeof(path), "/proc/%u", pid);
	if (access(path, F_OK) != 0) {
		snprintf(err, errlen, "no process with pid %u (has it exited? find the job's pid with: pgrep -af NAME, "
			 "NAME a part of its command line)", pid);
		return -ESRCH;
	}
	if (!proc__alive(pid)) {
		snprintf(err, errlen, "process %u has exited (it is a zombie waiting for its parent)", pid);
		return -ESRCH;
	}
	return 0;
}
