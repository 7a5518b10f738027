// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "proc_tree.h"

/* PyTorch names a DataLoader worker process's main thread so
 * (torch/utils/data/_utils/worker.py). */
#define DATALOADER_WORKER_NAME "pt_data_worker"

static const struct {
	const char *id, *text;
} roles[] = {
	[PROC_ROLE_NONE] = { NULL, NULL },
	[PROC_ROLE_DATALOADER_WORKER] = { "dataloader_worker", "PyTorch DataLoader worker" },
	[PROC_ROLE_DATALOADER_PARENT] = { "dataloader_parent", "parent of PyTorch DataLoader workers" },
	[PROC_ROLE_MP_SPAWN_WORKER] = { "multiprocessing_spawn", "Python multiprocessing worker (spawn)" },
	[PROC_ROLE_MP_FORKSERVER] = { "multiprocessing_forkserver", "Python multiprocessing fork server" },
	[PROC_ROLE_MP_FORKSERVER_WORKER] = { "multiprocessing_forkserver_worker",
					     "Python multiprocessing worker (forkserver)" },
	[PROC_ROLE_MP_RESOURCE_TRACKER] = { "multiprocessing_resource_tracker",
					    "Python multiprocessing resource tracker" },
	[PROC_ROLE_FORK] = { "fork", "forked worker (its parent's command line)" },
};

const char *proc_role__id(enum proc_role role)
{
	return (size_t)role < sizeof(roles) / sizeof(roles[0]) ? roles[role].id : NULL;
}

const char *proc_role__text(enum proc_role role)
{
	return (size_t)role < sizeof(roles) / sizeof(roles[0]) ? roles[role].text : NULL;
}

/* The summary's first thread of pid (threads are sorted by pid, then tid):
 * its index, or s->thread_count when it has none. */
static size_t first_thread(const struct summary *s, __u32 pid)
{
	size_t lo = 0, hi = s->thread_count;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->threads[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static bool same_text(const char *a, const char *b)
{
	return a && b && *a && !strcmp(a, b);
}

static bool has_text(const char *s, const char *needle)
{
	return s && strstr(s, needle);
}

/* Whether one of the process's threads is (or was) named name. */
static bool thread_named(const struct proc_node *n, const struct summary *s, const char *name)
{
	if (same_text(n->comm, name))
		return true;
	for (size_t i = 0; i < n->latest->thread_count; i++)
		if (!strncmp(n->latest->threads[i].comm, name, sizeof(n->latest->threads[i].comm)))
			return true;
	if (s)
		for (size_t i = first_thread(s, n->pid); i < s->thread_count && s->threads[i].pid == n->pid; i++)
			if (!strncmp(s->threads[i].comm, name, sizeof(s->threads[i].comm)))
				return true;
	return false;
}

/* What its names and command line tell, given its parent's role (known:
 * parents come first in tree order). */
static enum proc_role role_of(const struct proc_node *n, const struct proc_node *parent, const struct summary *s)
{
	const char *cmd = n->latest->cmdline;

	if (thread_named(n, s, DATALOADER_WORKER_NAME))
		return PROC_ROLE_DATALOADER_WORKER;
	if (has_text(cmd, "multiprocessing.resource_tracker"))
		return PROC_ROLE_MP_RESOURCE_TRACKER;
	if (has_text(cmd, "--multiprocessing-fork"))
		return PROC_ROLE_MP_SPAWN_WORKER;
	if (has_text(cmd, "multiprocessing.forkserver"))
		return parent && parent->role == PROC_ROLE_MP_FORKSERVER && same_text(cmd, parent->latest->cmdline) ?
			       PROC_ROLE_MP_FORKSERVER_WORKER : PROC_ROLE_MP_FORKSERVER;
	if (parent && same_text(cmd, parent->latest->cmdline) && same_text(n->latest->exe, parent->latest->exe))
		return PROC_ROLE_FORK;
	return PROC_ROLE_NONE;
}

struct tree_build {
	struct proc_node *nodes;	/* by pid */
	size_t n;
	size_t *kids;			/* node indices sorted by (parent, pid) */
	size_t *kids_start;		/* [parent + 1]: first of its children in kids; [0]: the roots */
	bool *placed;
};

static int by_parent(const void *a, const void *b, void *ctx)
{
	const struct proc_node *nodes = ctx;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	size_t px = nodes[x].parent + 1, py = nodes[y].parent + 1;	/* PROC_TREE_NO_PARENT + 1 == 0 */

	if (px != py)
		return px < py ? -1 : 1;
	return nodes[x].pid < nodes[y].pid ? -1 : nodes[x].pid > nodes[y].pid;
}

/* Appends root's subtree, depth first, to out (of *count). */
static int place_subtree(struct tree_build *b, size_t root, struct proc_node *out, size_t *count)
{
	size_t *stack = malloc(b->n * sizeof(*stack)), top = 0;

	if (!stack)
		return -ENOMEM;
	stack[top++] = root;
	b->placed[root] = true;
	while (top) {
		size_t i = stack[--top], at = *count;

		out[at] = b->nodes[i];
		out[at].depth = out[at].parent == PROC_TREE_NO_PARENT ? 0 : out[out[at].parent].depth + 1;
		(*count)++;
		/* its children, pushed in reverse so that the smallest pid comes out first */
		for (size_t k = b->kids_start[i + 2]; k-- > b->kids_start[i + 1];) {
			size_t c = b->kids[k];

			if (b->placed[c])
				continue;
			b->placed[c] = true;
			b->nodes[c].parent = at;	/* its index in out from now on */
			stack[top++] = c;
		}
	}
	free(stack);
	return 0;
}

static int pid_node_cmp(const void *a, const void *b)
{
	const struct proc_node *x = a, *y = b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static size_t node_of(const struct proc_node *nodes, size_t n, __u32 pid)
{
	struct proc_node key = { .pid = pid };
	const struct proc_node *f = bsearch(&key, nodes, n, sizeof(*nodes), pid_node_cmp);

	return f ? (size_t)(f - nodes) : PROC_TREE_NO_PARENT;
}

/* One node per pid, by pid: its first snapshot (the parent it had when it
 * became a target) and its latest. */
static int distinct_processes(const struct recording *r, struct proc_node **out, size_t *count)
{
	struct proc_node *nodes = calloc(r->process_count ? r->process_count : 1, sizeof(*nodes));
	size_t n = 0;

	if (!nodes)
		return -ENOMEM;
	for (size_t i = 0; i < r->process_count; i++) {
		const struct rec_process *p = &r->processes[i];
		size_t j;

		for (j = 0; j < n && nodes[j].pid != p->pid; j++)
			;
		if (j == n) {
			nodes[n].pid = p->pid;
			nodes[n].ppid = p->ppid;
			nodes[n].origin = p->origin;
			nodes[n].p = p;
			nodes[n].latest = p;
			n++;
		} else if (p->seen_mono_ns >= nodes[j].latest->seen_mono_ns) {
			nodes[j].latest = p;
		} else if (p->seen_mono_ns < nodes[j].p->seen_mono_ns) {
			nodes[j].p = p;
			nodes[j].origin = p->origin;
			nodes[j].ppid = p->ppid;
		}
	}
	qsort(nodes, n, sizeof(*nodes), pid_node_cmp);
	*out = nodes;
	*count = n;
	return 0;
}

/* Whether pid had GPU activity or CUDA calls. */
static bool used_cuda(const struct summary *s, __u32 pid)
{
	if (summary__process(s, pid))
		return true;
	for (size_t i = 0; i < s->gpu_count; i++)
		if (s->gpu[i].pid == pid)
			return true;
	return false;
}

/* Began and ended while recorded, within PROC_TREE_SHORT_NS, without CUDA:
 * its threads all created and exited (the summary's). */
static bool short_lived(const struct proc_node *n, const struct summary *s)
{
	size_t t = first_thread(s, n->pid);
	__u64 first = UINT64_MAX, last = 0;

	if (t == s->thread_count || s->threads[t].pid != n->pid || used_cuda(s, n->pid))
		return false;
	for (; t < s->thread_count && s->threads[t].pid == n->pid; t++) {
		const struct thread_summary *th = &s->threads[t];

		if (!th->created || !th->exited)
			return false;
		first = th->start_ns < first ? th->start_ns : first;
		last = th->end_ns > last ? th->end_ns : last;
	}
	return last - first <= PROC_TREE_SHORT_NS;
}

/* A folded process under the shown ancestor it is counted at. */
struct fold {
	size_t at;
	const char *comm;
};

static int fold_cmp(const void *a, const void *b)
{
	const struct fold *x = a, *y = b;

	if (x->at != y->at)
		return x->at < y->at ? -1 : 1;
	return strcmp(x->comm, y->comm);
}

struct name_count {
	const char *comm;
	size_t n;
};

static int count_desc(const void *a, const void *b)
{
	const struct name_count *x = a, *y = b;

	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	return strcmp(x->comm, y->comm);
}

/* "bash ×33, readlink ×5" of the folds v[0..n) (one ancestor's, by name). */
static void fold_names(const struct fold *v, size_t n, char *buf, size_t len)
{
	struct name_count c[PROC_TREE_FOLDED_LEN];
	size_t k = 0, off = 0;

	for (size_t i = 0; i < n; i++) {
		if (k && !strcmp(c[k - 1].comm, v[i].comm))
			c[k - 1].n++;
		else if (k < PROC_TREE_FOLDED_LEN)
			c[k++] = (struct name_count){ v[i].comm, 1 };
	}
	qsort(c, k, sizeof(*c), count_desc);
	buf[0] = '\0';
	for (size_t i = 0; i < k && off < len; i++) {
		int w = snprintf(buf + off, len - off, "%s%s ×%zu", i ? ", " : "", c[i].comm, c[i].n);

		if (w < 0 || (size_t)w >= len - off) {
			snprintf(buf + off, len - off, ", …");
			break;
		}
		off += (size_t)w;
	}
}

/* Whether n, with one lasting descendant c (not short-lived, or under
 * short-lived ones only), only started c (proc_tree.h: wrapper). */
static bool wrapper(const struct proc_node *n, const struct proc_node *c, const struct summary *s)
{
	size_t t = first_thread(s, n->pid);

	if (t == s->thread_count || s->threads[t].pid != n->pid || n->threads != 1 ||
	    n->on_cpu_ns > PROC_TREE_WRAPPER_CPU_NS || used_cuda(s, n->pid) || n->role != PROC_ROLE_NONE)
		return false;
	return c->role == PROC_ROLE_NONE || c->role == PROC_ROLE_DATALOADER_PARENT;
}

size_t proc_tree__shown_parent(const struct proc_tree *t, size_t i)
{
	size_t at = t->nodes[i].parent;

	while (at != PROC_TREE_NO_PARENT && (t->nodes[at].short_lived || t->nodes[at].wrapper))
		at = t->nodes[at].parent;
	return at;
}

/* The node wrapper w is folded into: the one it started, or where that
 * one, a wrapper too, is folded. */
static size_t fold_end(const struct proc_tree *t, const size_t *into, size_t w)
{
	while (t->nodes[w].wrapper)
		w = into[w];
	return w;
}

/* Appends wrapper w to the names of the node it is folded into: "pid 40
 * sh → pid 41 env" (tree order: the outermost first). */
static void wrapper_name(struct proc_node *end, const struct proc_node *w)
{
	size_t off = strlen(end->wrapper_names), len = sizeof(end->wrapper_names);
	int n;

	if (off + 1 >= len || (off >= strlen("…") && !strcmp(end->wrapper_names + off - strlen("…"), "…")))
		return;
	n = snprintf(end->wrapper_names + off, len - off, "%spid %u %s", off ? " → " : "", w->pid,
		     w->comm ? w->comm : "?");
	if (n < 0 || (size_t)n >= len - off)
		snprintf(end->wrapper_names + off, len - off, " …");
}

/* Marks the wrappers: per node, its lasting descendants (not brief,
 * under brief ones only: lasting, zeroed), and which one (into) when
 * there is one. */
static void find_wrappers(struct proc_tree *t, const struct summary *s, const bool *brief, size_t *lasting,
			  size_t *into)
{
	for (size_t i = 0; i < t->count; i++) {
		size_t at = t->nodes[i].parent;

		if (brief[i])
			continue;
		while (at != PROC_TREE_NO_PARENT && brief[at])
			at = t->nodes[at].parent;
		if (at == PROC_TREE_NO_PARENT)
			continue;
		lasting[at]++;
		into[at] = i;
	}
	for (size_t i = 0; i < t->count; i++)
		t->nodes[i].wrapper = !brief[i] && lasting[i] == 1 && wrapper(&t->nodes[i], &t->nodes[into[i]], s);
}

/* Folds the short-lived processes (tree order: parents first) into their
 * nearest shown ancestors (a wrapper's: the node it is folded into), and
 * the wrappers into the processes they started. 0 or -ENOMEM. */
static int fold(struct proc_tree *t, const struct summary *s)
{
	size_t m = t->count ? t->count : 1, n = 0;
	struct fold *v = calloc(m, sizeof(*v));
	size_t *into = calloc(m, sizeof(*into)), *lasting = calloc(m, sizeof(*lasting));
	bool *brief = calloc(m, sizeof(*brief));
	int err = 0;

	if (!v || !into || !lasting || !brief) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; s && i < t->count; i++)
		brief[i] = short_lived(&t->nodes[i], s);
	if (s)
		find_wrappers(t, s, brief, lasting, into);
	for (size_t i = 0; i < t->count; i++) {
		struct proc_node *nd = &t->nodes[i];
		size_t at = nd->parent, shown = proc_tree__shown_parent(t, i);

		while (at != PROC_TREE_NO_PARENT && t->nodes[at].short_lived)
			at = t->nodes[at].parent;
		if (at != PROC_TREE_NO_PARENT)
			at = fold_end(t, into, at);
		nd->short_lived = brief[i] && at != PROC_TREE_NO_PARENT;
		nd->shown_depth = shown == PROC_TREE_NO_PARENT ? 0 : t->nodes[shown].shown_depth + 1;
		if (nd->wrapper) {
			struct proc_node *end = &t->nodes[fold_end(t, into, i)];

			end->wrappers++;
			wrapper_name(end, nd);
			t->wrappers++;
		}
		if (!nd->short_lived)
			continue;
		t->nodes[at].folded++;
		t->folded++;
		v[n++] = (struct fold){ at, nd->comm ? nd->comm : "?" };
	}
	qsort(v, n, sizeof(*v), fold_cmp);
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i; j < n && v[j].at == v[i].at; j++)
			;
		fold_names(v + i, j - i, t->nodes[v[i].at].folded_names, sizeof(t->nodes[v[i].at].folded_names));
	}
out:
	free(v);
	free(into);
	free(lasting);
	free(brief);
	return err;
}

int proc_tree__build(const struct recording *r, const struct summary *s, struct proc_tree *out)
{
	struct tree_build b = { 0 };
	size_t i, placed = 0;
	int e;

	memset(out, 0, sizeof(*out));
	e = distinct_processes(r, &b.nodes, &b.n);
	if (e)
		return e;
	out->nodes = calloc(b.n ? b.n : 1, sizeof(*out->nodes));
	b.kids = calloc(b.n ? b.n : 1, sizeof(*b.kids));
	b.kids_start = calloc(b.n + 2, sizeof(*b.kids_start));
	b.placed = calloc(b.n ? b.n : 1, sizeof(*b.placed));
	if (!out->nodes || !b.kids || !b.kids_start || !b.placed) {
		e = -ENOMEM;
		goto out;
	}
	for (i = 0; i < b.n; i++) {
		struct proc_node *nd = &b.nodes[i];
		size_t t;

		nd->parent = nd->ppid != nd->pid ? node_of(b.nodes, b.n, nd->ppid) : PROC_TREE_NO_PARENT;
		nd->comm = nd->latest->comm;
		nd->threads = nd->latest->thread_count;
		if (!s)
			continue;
		t = first_thread(s, nd->pid);
		if (t < s->thread_count && s->threads[t].pid == nd->pid)
			nd->threads = 0;
		for (; t < s->thread_count && s->threads[t].pid == nd->pid; t++) {
			nd->threads++;
			nd->on_cpu_ns += s->threads[t].on_cpu_ns;
			if (s->threads[t].tid == nd->pid && s->threads[t].comm[0])
				nd->comm = s->threads[t].comm;
		}
	}
	for (i = 0; i < b.n; i++)
		b.kids[i] = i;
	qsort_r(b.kids, b.n, sizeof(*b.kids), by_parent, b.nodes);
	/* kids_start[p + 1] .. kids_start[p + 2]: the children of node p;
	 * [0] .. [1]: the roots (PROC_TREE_NO_PARENT + 1 wraps to 0) */
	for (i = 0; i < b.n; i++)
		b.kids_start[b.nodes[i].parent + 2]++;
	for (i = 1; i < b.n + 2; i++)
		b.kids_start[i] += b.kids_start[i - 1];
	/* the roots first; then, were there a cycle (a file is untrusted),
	 * its smallest pid as a root */
	for (size_t k = 0; k < b.kids_start[1] && !e; k++) {
		b.nodes[b.kids[k]].parent = PROC_TREE_NO_PARENT;
		e = place_subtree(&b, b.kids[k], out->nodes, &placed);
		out->roots++;
	}
	for (i = 0; i < b.n && !e; i++) {
		if (b.placed[i])
			continue;
		b.nodes[i].parent = PROC_TREE_NO_PARENT;
		e = place_subtree(&b, i, out->nodes, &placed);
		out->roots++;
	}
	out->count = placed;
	for (i = 0; i < out->count; i++) {
		struct proc_node *nd = &out->nodes[i];
		struct proc_node *parent = nd->parent == PROC_TREE_NO_PARENT ? NULL : &out->nodes[nd->parent];

		nd->role = role_of(nd, parent, s);
		if (parent)
			parent->children++;
	}
	for (i = 0; i < out->count; i++) {
		const struct proc_node *nd = &out->nodes[i];

		if (nd->role == PROC_ROLE_DATALOADER_WORKER && nd->parent != PROC_TREE_NO_PARENT &&
		    out->nodes[nd->parent].role == PROC_ROLE_NONE)
			out->nodes[nd->parent].role = PROC_ROLE_DATALOADER_PARENT;
	}
	e = e ?: fold(out, s);
out:
	free(b.nodes);
	free(b.kids);
	free(b.kids_start);
	free(b.placed);
	return e;
}

void proc_tree__free(struct proc_tree *t)
{
	free(t->nodes);
	t->nodes = NULL;
	t->count = 0;
	t->roots = 0;
	t->folded = 0;
	t->wrappers = 0;
}
