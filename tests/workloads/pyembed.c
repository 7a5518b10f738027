// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A Python interpreter that loads libpython as a shared library (Debian's
 * own python3 has it linked into the executable): the shared-libpython case
 * of the GIL tests, from Debian's libpython3-dev.
 *
 *   pyembed SCRIPT [ARGS...]   runs SCRIPT like `python3 SCRIPT ARGS...`
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

int main(int argc, char **argv)
{
	PyConfig config;
	PyStatus st;

	PyConfig_InitPythonConfig(&config);
	st = PyConfig_SetBytesArgv(&config, argc, argv);
	if (PyStatus_Exception(st))
		goto fail;
	st = Py_InitializeFromConfig(&config);
	if (PyStatus_Exception(st))
		goto fail;
	PyConfig_Clear(&config);
	return Py_RunMain();
fail:
	PyConfig_Clear(&config);
	Py_ExitStatusException(st);
}
