// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdarg.h>
#include <string.h>
#include "ktap.h"

void ktap__begin(struct ktap *k, FILE *out, unsigned int plan)
{
	memset(k, 0, sizeof(*k));
	k->out = out;
	k->plan = plan;
	k->next = 1;
	if (!out)
		return;
	fprintf(out, "KTAP version 1\n1..%u\n", plan);
	fflush(out);
}

static void vdiag(struct ktap *k, const char *fmt, va_list ap)
{
	char buf[2048], *line, *save = NULL;

	vsnprintf(buf, sizeof(buf), fmt, ap);
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		fprintf(k->out, "# %s\n", line);
}

void ktap__diag(struct ktap *k, const char *fmt, ...)
{
	va_list ap;

	if (!k->out)
		return;
	va_start(ap, fmt);
	vdiag(k, fmt, ap);
	va_end(ap);
	fflush(k->out);
}

static void print_name(FILE *out, const char *name)
{
	for (; *name; name++)
		fputc(*name == '#' || *name == '\n' || *name == '\r' ? '_' : *name, out);
}

void ktap__result(struct ktap *k, bool ok, const char *name)
{
	unsigned int n = k->next++;

	if (ok)
		k->pass++;
	else
		k->fail++;
	if (!k->out)
		return;
	fprintf(k->out, "%s %u ", ok ? "ok" : "not ok", n);
	print_name(k->out, name);
	fputc('\n', k->out);
	fflush(k->out);
}

void ktap__skip(struct ktap *k, const char *name, const char *fmt, ...)
{
	unsigned int n = k->next++;
	char why[512];
	va_list ap;

	k->skip++;
	if (!k->out)
		return;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	why[strcspn(why, "\n")] = '\0';
	fprintf(k->out, "ok %u ", n);
	print_name(k->out, name);
	fprintf(k->out, " # SKIP %s\n", why);
	fflush(k->out);
}

int ktap__end(struct ktap *k)
{
	unsigned int done = k->next - 1, error = done == k->plan ? 0 : 1;

	if (k->out) {
		if (error)
			fprintf(k->out, "# Planned tests != run tests (%u != %u)\n", k->plan, done);
		fprintf(k->out, "# Totals: pass:%u fail:%u xfail:0 xpass:0 skip:%u error:%u\n", k->pass, k->fail,
			k->skip, error);
		fflush(k->out);
	}
	return k->fail || error ? 1 : 0;
}
