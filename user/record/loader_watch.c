// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "elf_file.h"
#include "loader_watch.h"
#include "proc.h"

/* Whether path names a dynamic loader: ld-linux-x86-64.so.2, ld-2.31.so. */
static bool is_loader(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return strncmp(base, "ld-", 3) == 0 && strstr(base, ".so") && !strstr(path, " (deleted)");
}

struct hook_syms {
	__u64 state, r_debug;
};

static int find_hook(void *ctx, const struct elf_symbol *sym)
{
	struct hook_syms *h = ctx;

	if (sym->func && strcmp(sym->name, "_dl_debug_state") == 0)
		h->state = sym->value;
	else if (!sym->func && strcmp(sym->name, "_r_debug") == 0)
		h->r_debug = sym->value;
	return h->state && h->r_debug;
}

/* The site in the loader file open at fd: the hook, past an endbr64 (the
 * `ret` after it is emulated, not single-stepped, by the uprobe). */
static int site_of(int fd, const char *path, struct loader_site *s)
{
	static const unsigned char endbr64[4] = { 0xf3, 0x0f, 0x1e, 0xfa };
	struct hook_syms h = { 0, 0 };
	unsigned char insn[4];
	struct elf_file *f;
	__u64 site;
	int e;

	f = elf_file__open(fd, path, NULL, 0);
	if (!f)
		return -errno;
	elf_file__for_each_symbol(f, ELF_SYMS_DYNAMIC, find_hook, &h);
	e = h.state && h.r_debug ? elf_file__vaddr_to_offset(f, h.state, &s->offset) : -ENOENT;
	elf_file__close(f);
	if (e)
		return e;
	site = h.state;
	if (pread(fd, insn, sizeof(insn), (off_t)s->offset) == (ssize_t)sizeof(insn) &&
	    memcmp(insn, endbr64, sizeof(insn)) == 0) {
		site += sizeof(insn);
		s->offset += sizeof(insn);
	}
	s->cookie = (__s64)(h.r_debug - site);
	return 0;
}

int loader_watch__find(__u32 pid, struct loader_site *s)
{
	struct proc_maps *maps = proc_maps__open(pid);
	struct proc_map m;
	struct stat st;
	bool found = false;
	int r, fd, e;

	if (!maps)
		return -errno;
	while (!found && (r = proc_maps__next(maps, &m)) > 0)
		if (proc_map__is_file(&m) && is_loader(m.path)) {
			snprintf(s->path, sizeof(s->path), "/proc/%u/root%s", pid, m.path);
			found = true;
		}
	proc_maps__close(maps);
	if (!found)
		return -ENOENT;
	fd = open(s->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	e = fstat(fd, &st) ? -errno : 0;
	s->dev = st.st_dev;
	s->ino = st.st_ino;
	e = e ?: site_of(fd, s->path, s);
	close(fd);
	return e;
}
