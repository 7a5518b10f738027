// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <string.h>
#include "bench_opts.h"

bool bench_opts__selects(const struct bench_opts *o, const char *name)
{
	size_t n = strlen(name);
	const char *p;

	if (!o->only)
		return true;
	for (p = o->only; (p = strstr(p, name)); p += n)
		if ((p == o->only || p[-1] == ',') && (p[n] == '\0' || p[n] == ','))
			return true;
	return false;
}
