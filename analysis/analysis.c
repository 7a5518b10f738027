// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>

#include "analysis.h"

int analysis__run(const struct recording *r, struct analysis **out)
{
	struct analysis *a = calloc(1, sizeof(*a));
	int err;

	*out = NULL;
	if (!a)
		return -ENOMEM;
	a->r = r;
	err = summary__compute(r, &a->sum);
	if (!err)
		err = py_report__compute(r, &a->py);
	if (!err)
		err = explain__run(r, a->sum, a->py, &a->ex);
	if (err) {
		analysis__free(a);
		return err;
	}
	*out = a;
	return 0;
}

void analysis__free(struct analysis *a)
{
	if (!a)
		return;
	explain__free(a->ex);
	py_report__free(a->py);
	summary__free(a->sum);
	free(a);
}
