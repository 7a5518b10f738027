// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "findings.h"
#include "text.h"

const char *finding_severity_name(enum finding_severity s)
{
	switch (s) {
	case SEV_CRITICAL:
		return "critical";
	case SEV_WARNING:
		return "warning";
	default:
		return "info";
	}
}

struct finding *findings__add(struct findings *fs, const char *rule, enum finding_severity sev, double cost_s,
			      __u32 pid, __u32 tid)
{
	struct finding *f;

	if (fs->n == fs->cap) {
		size_t cap = fs->cap ? 2 * fs->cap : 8;
		struct finding *v = reallocarray(fs->v, cap, sizeof(*v));

		if (!v)
			return NULL;
		fs->v = v;
		fs->cap = cap;
	}
	f = &fs->v[fs->n];
	memset(f, 0, sizeof(*f));
	f->rule = rule;
	f->severity = sev;
	f->cost_s = cost_s;
	f->pid = pid;
	f->tid = tid;
	f->summary = strdup("");
	f->suggestion = strdup("");
	f->evidence = json_object();
	if (!f->summary || !f->suggestion || !f->evidence) {
		free(f->summary);
		free(f->suggestion);
		json_decref(f->evidence);
		return NULL;
	}
	fs->n++;
	return f;
}

static int append(char **s, const char *fmt, va_list ap)
{
	size_t old = strlen(*s);
	va_list aq;
	int n;
	char *ns;

	va_copy(aq, ap);
	n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	if (n < 0)
		return -EINVAL;
	ns = realloc(*s, old + (size_t)n + 1);
	if (!ns)
		return -ENOMEM;
	vsnprintf(ns + old, (size_t)n + 1, fmt, ap);
	*s = ns;
	return 0;
}

int finding__say(struct finding *f, const char *fmt, ...)
{
	va_list ap;
	int err;

	va_start(ap, fmt);
	err = append(&f->summary, fmt, ap);
	va_end(ap);
	return err;
}

int finding__suggest(struct finding *f, const char *fmt, ...)
{
	va_list ap;
	int err;

	va_start(ap, fmt);
	err = append(&f->suggestion, fmt, ap);
	va_end(ap);
	return err;
}

int findings__not_judged(struct findings *fs, const char *rule, const char *needs)
{
	for (size_t i = 0; i < fs->nnj; i++)
		if (strcmp(fs->nj[i].rule, rule) == 0)
			return 0;
	if (fs->nnj == fs->njcap) {
		size_t cap = fs->njcap ? 2 * fs->njcap : 8;
		struct not_judged *v = reallocarray(fs->nj, cap, sizeof(*v));

		if (!v)
			return -ENOMEM;
		fs->nj = v;
		fs->njcap = cap;
	}
	fs->nj[fs->nnj].rule = rule;
	fs->nj[fs->nnj].needs = needs;
	fs->nnj++;
	return 0;
}

static int finding_cmp(const void *a, const void *b)
{
	const struct finding *x = a, *y = b;

	if (x->cost_s != y->cost_s)
		return x->cost_s > y->cost_s ? -1 : 1;
	if (x->severity != y->severity)
		return x->severity > y->severity ? -1 : 1;
	return strcmp(x->rule, y->rule);
}

void findings__rank(struct findings *fs)
{
	/* a summary is a sentence, whatever name it starts with */
	for (size_t i = 0; i < fs->n; i++)
		if (fs->v[i].summary[0] >= 'a' && fs->v[i].summary[0] <= 'z')
			fs->v[i].summary[0] = (char)(fs->v[i].summary[0] - 'a' + 'A');
	if (fs->n > 1)
		qsort(fs->v, fs->n, sizeof(*fs->v), finding_cmp);
}

static void finding_release(struct finding *f)
{
	free(f->summary);
	free(f->suggestion);
	json_decref(f->evidence);
}

void findings__remove_if(struct findings *fs, bool (*drop)(const struct finding *f, void *ctx), void *ctx)
{
	size_t kept = 0;

	for (size_t i = 0; i < fs->n; i++) {
		if (drop(&fs->v[i], ctx))
			finding_release(&fs->v[i]);
		else
			fs->v[kept++] = fs->v[i];
	}
	fs->n = kept;
}

void findings__free(struct findings *fs)
{
	for (size_t i = 0; i < fs->n; i++)
		finding_release(&fs->v[i]);
	free(fs->v);
	free(fs->nj);
	memset(fs, 0, sizeof(*fs));
}

void ev_set(json_t *obj, const char *key, json_t *val)
{
	if (val)
		json_object_set_new(obj, key, val);
}

json_t *ev_seconds(__u64 ns)
{
	return json_real((double)ns / 1e9);
}

json_t *ev_u64(__u64 v)
{
	return json_integer((json_int_t)v);
}

json_t *ev_text(const char *s, size_t maxlen)
{
	size_t len;
	char *u;
	json_t *j;

	if (!s)
		return json_null();
	u = text__dup(s, maxlen, TEXT_UTF8, &len);
	if (!u)
		return NULL;
	j = json_stringn(u, len);
	free(u);
	return j;
}

size_t findings__same_advice(const struct findings *fs, size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (strcmp(fs->v[j].rule, fs->v[i].rule) == 0 && strcmp(fs->v[j].suggestion, fs->v[i].suggestion) == 0)
			return j;
	return i;
}
