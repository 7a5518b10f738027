/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the families that probe a library's exported functions (CUDA,
 * NCCL: user/probes/probed_lib.h) do alike: resolve the files given by path and
 * those a process about to load its libraries would find, and attach a
 * library's sites in a process, once per file, saying what failed (and,
 * with -v, what was attached where). The family says which BPF program
 * serves each site.
 */
#ifndef INFERSCOPE_FAMILY_LIB_H
#define INFERSCOPE_FAMILY_LIB_H

#include <stdbool.h>
#include <stddef.h>
#include "family.h"
#include "probed_lib.h"

/* The uprobe sites of lib (at most 2 per function, out has room for
 * 2 * PROBED_MAX_IDS), entries first: how many were written to out. */
typedef size_t (*family_lib_sites_fn)(void *fam, const struct probed_lib *lib, struct uprobe_site *out);

struct family_lib {
	const struct family_ctx *ctx;
	const struct probed_lib_kind *kind;
	family_lib_sites_fn sites_of;
	void *fam;			/* sites_of's */
	const char *late_note;		/* ends the message on a file loaded after tracing began */
	struct probed_libs *libs;
	struct probed_mapping extra[PROBED_MAX_LIBS];	/* given with kind->option */
	size_t nextra;
	struct probed_mapping cand[PROBED_MAX_LIBS];	/* where a process about to load libraries finds one */
	size_t ncand;
	const struct probed_lib *described[PROBED_MAX_LIBS];	/* site lists already printed (-v) */
	size_t ndescribed;
};

/* Sets f up for files of kind: 0, or -errno with err filled. */
int family_lib__init(struct family_lib *f, const struct family_ctx *ctx, const struct probed_lib_kind *kind,
		     family_lib_sites_fn sites_of, void *fam, const char *late_note, char *err, size_t errlen);
/* Safe on a zeroed f. */
void family_lib__free(struct family_lib *f);

/* Resolves the n files at paths (the kind's option) and, when a process
 * may load its libraries after we attach (a launched command, followed
 * children), the candidate files it would find. 0, or -errno after saying
 * which file cannot be used. */
int family_lib__prepare(struct family_lib *f, const char *const *paths, size_t n);

/* What a family's probe_process does with its library files: at
 * PROBE_AT_START what pid maps; at PROBE_BEFORE_EXEC (not exec'd yet) and
 * PROBE_NEW_PROCESS (it loads its libraries from now on) the candidates
 * too, by path, live once mapped; at PROBE_RESCAN the files it mapped
 * since (dlopen), said to be late; at PROBE_MAPPED what it maps now (a
 * file of the kind it loads later holds it again); nothing after exec.
 * Returns how many files of the kind pid maps now, or -errno at
 * PROBE_AT_START and PROBE_BEFORE_EXEC; later a failure (already said)
 * leaves the process traced without these probes: 0. */
int family_lib__probe_when(struct family_lib *f, __u32 pid, enum probe_when when);

#endif
