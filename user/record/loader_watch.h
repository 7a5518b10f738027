/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The dynamic loader a process runs under, and the site where it can be
 * watched loading libraries (bpf/hold.bpf.c): glibc's debugger hook
 * _dl_debug_state, which the loader calls once the libraries it mapped are
 * in its list and before any of them runs, and _r_debug, the list's head.
 * Both are exported by every glibc loader (<link.h>'s debugger interface).
 */
#ifndef INFERSCOPE_LOADER_WATCH_H
#define INFERSCOPE_LOADER_WATCH_H

#include <limits.h>
#include <sys/types.h>
#include <linux/types.h>

struct loader_site {
	char path[PATH_MAX + 32];	/* the loader, through /proc/PID/root */
	dev_t dev;
	ino_t ino;
	__u64 offset;		/* file offset of the probe site */
	__s64 cookie;		/* _r_debug's address minus the site's */
};

/* The loader of pid (the file of its maps named ld-*.so*) and its site.
 * 0; -ENOENT when pid has no loader (a static program) or its loader has
 * no such hook (not glibc's); or -errno. */
int loader_watch__find(__u32 pid, struct loader_site *s);

#endif
