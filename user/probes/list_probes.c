// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * --list-probes: the probe sites the CUDA and Python families would choose
 * (user/probes/probed_lib.h, user/probes/py_libs.h), printed without loading BPF.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include "recorder.h"
#include "probed_lib.h"
#include "py_libs.h"

int record__list_probes(const struct record_config *cfg)
{
	struct probed_mapping mapped[PROBED_MAX_LIBS];
	struct py_mapping py[PY_MAX_LIBS];
	struct probed_mapping extra[PROBED_MAX_LIBS], cand[PROBED_MAX_LIBS];
	char **cmd = cfg->targets.command;
	struct probed_libs *libs = probed_libs__new(&probed_cuda);
	struct py_libs *pys = cfg->python.gil ? py_libs__new() : NULL;
	size_t i, nextra = 0, ncand = 0;
	int e = 0, n, j;

	if (!libs || (cfg->python.gil && !pys)) {
		e = -errno;
		fprintf(stderr, "inferscope-bpf: cannot set up the ELF reader: %s\n", strerror(-e));
		goto out;
	}
	n = probed_libs__resolve_paths(libs, cfg->cuda.libs, cfg->cuda.lib_count, extra, PROBED_MAX_LIBS, stderr);
	if (n < 0) {
		e = n;
		goto out;
	}
	nextra = (size_t)n;
	if (cmd) {
		n = probed_libs__candidates(libs, cmd[0], cand, PROBED_MAX_LIBS, cfg->verbose ? stderr : NULL);
		ncand = n > 0 ? (size_t)n : 0;
	}
	for (i = 0; i < cfg->targets.pid_count; i++) {
		n = probed_libs__mapped(libs, cfg->targets.pids[i], mapped, PROBED_MAX_LIBS, stderr);
		if (n < 0) {
			e = n;
			fprintf(stderr, "inferscope-bpf: cannot read the mappings of pid %u: %s\n", cfg->targets.pids[i],
				strerror(-e));
			goto out;
		}
		printf("pid %u:%s\n", cfg->targets.pids[i], n ? "" : " no CUDA driver library mapped");
		for (j = 0; j < n; j++)
			probed_lib__describe(mapped[j].lib, mapped[j].path, stdout);
		if (cfg->python.gil) {
			n = py_libs__mapped(pys, cfg->targets.pids[i], py, PY_MAX_LIBS, stderr);
			if (n == 0)
				printf("pid %u: no Python 3.%d-3.%d interpreter mapped\n", cfg->targets.pids[i], PY_MIN_MINOR,
				       PY_MAX_MINOR);
			for (j = 0; j < n; j++)
				py_lib__describe(py[j].lib, py[j].path, stdout);
		}
	}
	if (cmd && cfg->python.gil)
		printf("%s: its Python interpreter is probed once it has started (not known before exec)\n",
		       cmd[0]);
	if (cmd) {
		printf("%s: %s\n", cmd[0], ncand ? "libcuda.so.1 candidates (probed before it starts)" :
			"no libcuda.so.1 found where it would load one from");
		for (i = 0; i < ncand; i++)
			probed_lib__describe(cand[i].lib, cand[i].path, stdout);
	}
	if (nextra)
		printf("--cuda-lib:\n");
	for (i = 0; i < nextra; i++)
		probed_lib__describe(extra[i].lib, extra[i].path, stdout);
out:
	py_libs__free(pys);
	probed_libs__free(libs);
	return e;
}
