// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * `inferscope-bpf check`: what a first-time user runs. On this machine (no
 * GPU) it must say CPU tracing works and CUDA is absent, with reasons; as
 * an unprivileged user it names the missing capabilities and exits 1;
 * against a process on the stand-in libcuda it finds the library and the
 * classes of its probe sites; the support bundle holds what it promises.
 */
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <cmocka.h>
#include "harness.h"

struct ctx {
	struct th_files f;
	char out[600];
};

static int setup(void **state)
{
	struct ctx *c = calloc(1, sizeof(*c));

	th_files_init(&c->f);
	snprintf(c->out, sizeof(c->out), "%s/check.json", c->f.dir);
	*state = c;
	return 0;
}

static int teardown(void **state)
{
	struct ctx *c = *state;

	th_rmrf(c->f.dir);
	free(c);
	return 0;
}

static json_t *load_json(const char *path)
{
	json_error_t je;
	json_t *j = json_load_file(path, 0, &je);

	if (!j)
		print_error("%s: %s\n", path, je.text);
	assert_non_null(j);
	return j;
}

/* The item of the check's JSON with this id. */
static json_t *item(json_t *report, const char *id)
{
	json_t *checks = json_object_get(report, "checks"), *it;
	size_t i;

	json_array_foreach(checks, i, it)
		if (!strcmp(json_string_value(json_object_get(it, "id")), id))
			return it;
	print_error("no check \"%s\" in the output\n", id);
	fail();
	return NULL;
}

static const char *status_of(json_t *report, const char *id)
{
	return json_string_value(json_object_get(item(report, id), "status"));
}

static const char *detail_of(json_t *report, const char *id)
{
	return json_string_value(json_object_get(item(report, id), "detail"));
}

static void test_host_without_gpu(void **state)
{
	struct ctx *c = *state;
	char *argv[] = { TRACER, "check", "--json", NULL };
	bool gpu = access("/proc/driver/nvidia/version", F_OK) == 0;
	json_t *r;

	th_expect_exit(th_run_to(argv, c->out, c->f.err), 0, c->f.err);
	r = load_json(c->out);
	assert_true(json_is_true(json_object_get(r, "ready")));
	assert_string_equal(status_of(r, "privileges"), "ok");
	assert_string_equal(status_of(r, "btf"), "ok");
	assert_string_equal(status_of(r, "ringbuf"), "ok");
	assert_string_equal(status_of(r, "tp_btf:sched_switch"), "ok");
	if (!gpu) {
		/* CUDA absent, with the reason */
		assert_string_equal(status_of(r, "nvidia_driver"), "absent");
		assert_non_null(strstr(detail_of(r, "nvidia_driver"), "no NVIDIA driver loaded"));
		assert_non_null(strstr(detail_of(r, "nvidia_driver"), "CPU tracing works"));
	}
	json_decref(r);
}

/* As an unprivileged user, from a copy of the binary that user can run. */
static void test_unprivileged(void **state)
{
	char tmp[] = "/tmp/inferscope-check-XXXXXX", bin[128], out[160];
	char *text;
	int status;
	pid_t pid;

	(void)state;
	assert_non_null(mkdtemp(tmp));
	chmod(tmp, 0777);
	snprintf(bin, sizeof(bin), "%s/inferscope-bpf", tmp);
	snprintf(out, sizeof(out), "%s/out.txt", tmp);
	{
		char *cp[] = { "cp", TRACER, bin, NULL };

		assert_int_equal(th_run(cp, NULL), 0);
	}
	chmod(bin, 0755);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0666);

		dup2(fd, 1);
		dup2(fd, 2);
		if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
			_exit(99);
		execl(bin, bin, "check", (char *)NULL);
		_exit(98);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	text = th_slurp(out);
	{
		char *rm[] = { "rm", "-rf", tmp, NULL };

		th_run(rm, NULL);
	}
	assert_non_null(text);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 1 || !strstr(text, "fail   privileges") ||
	    !strstr(text, "missing CAP_BPF CAP_PERFMON") || !strstr(text, "setcap cap_bpf,cap_perfmon") ||
	    !strstr(text, "not ready")) {
		print_error("status 0x%x (expected exit 1), output:\n%s\n", status, text);
		free(text);
		fail();
	}
	free(text);
}

/* A process on the stand-in libcuda (60 functions begin with push %rbp,
 * some with endbr64, two are single-stepped: tests/standin/). */
static void test_cuda_process(void **state)
{
	struct ctx *c = *state;
	char *wl[] = { CUDA_WORKLOAD, "--wait-signal", NULL };
	char pidbuf[16], mapsp[64];
	char *argv[] = { TRACER, "check", "-p", pidbuf, "--json", NULL };
	pid_t pid = th_spawn(wl, NULL, NULL);
	unsigned int push = 0, endbr = 0, stepped = 0;
	json_t *r;

	snprintf(pidbuf, sizeof(pidbuf), "%d", pid);
	snprintf(mapsp, sizeof(mapsp), "/proc/%d/maps", pid);
	/* the workload maps libcuda at start (linked) */
	for (int i = 0; i < 200; i++) {
		char *m = th_slurp(mapsp);
		bool mapped = m && strstr(m, "libcuda.so.1");

		free(m);
		if (mapped)
			break;
		usleep(10000);
	}
	th_expect_exit(th_run_to(argv, c->out, c->f.err), 0, c->f.err);
	th_reap(pid);
	r = load_json(c->out);
	assert_string_equal(status_of(r, "target"), "ok");
	assert_string_equal(status_of(r, "libcuda"), "ok");
	assert_non_null(strstr(detail_of(r, "libcuda"), "libcuda.so.1"));
	assert_int_equal(sscanf(detail_of(r, "probe_sites"), "%u emulated (push), %u after endbr64, %u single-stepped",
				&push, &endbr, &stepped), 3);
	assert_true(push > 0 && endbr > 0 && stepped > 0);
	assert_string_equal(status_of(r, "probe_sites"), "warn");
	assert_string_equal(status_of(r, "libpython"), "absent");
	assert_string_equal(status_of(r, "cupti_subscriber"), "ok");
	json_decref(r);
}

static void test_gone_process(void **state)
{
	struct ctx *c = *state;
	char *argv[] = { TRACER, "check", "-p", "4194304", "--json", NULL };
	json_t *r;

	th_expect_exit(th_run_to(argv, c->out, c->f.err), 1, c->f.err);
	r = load_json(c->out);
	assert_false(json_is_true(json_object_get(r, "ready")));
	assert_string_equal(status_of(r, "target"), "fail");
	assert_non_null(strstr(detail_of(r, "target"), "no process with pid 4194304"));
	json_decref(r);
}

static void test_support_bundle(void **state)
{
	struct ctx *c = *state;
	char bundle[600], list[600], rec_txt[600];
	char *rec[] = { TRACER, "record", "-q", "-o", c->f.isr, "--", "/bin/true", NULL };
	char *argv[] = { TRACER, "check", "--support-bundle", bundle, "--recording", c->f.isr, NULL };
	char *tar_t[] = { "tar", "tzf", bundle, NULL };
	char *tar_x[] = { "tar", "xzOf", bundle, "recording.txt", NULL };
	char *t;

	snprintf(bundle, sizeof(bundle), "%s/bundle.tar.gz", c->f.dir);
	snprintf(list, sizeof(list), "%s/list.txt", c->f.dir);
	snprintf(rec_txt, sizeof(rec_txt), "%s/rec.txt", c->f.dir);
	th_expect_exit(th_run(rec, c->f.err), 0, c->f.err);
	th_expect_exit(th_run_to(argv, c->out, c->f.err), 0, c->f.err);
	th_expect_exit(th_run_to(tar_t, list, NULL), 0, NULL);
	t = th_slurp(list);
	assert_string_equal(t, "check.txt\ncheck.json\nversions.txt\nkernel-config.txt\nrecording.txt\n");
	free(t);
	th_expect_exit(th_run_to(tar_x, rec_txt, NULL), 0, NULL);
	t = th_slurp(rec_txt);
	assert_non_null(strstr(t, "stopped: "));
	assert_non_null(strstr(t, "events sched_process_exec"));
	assert_null(strstr(t, "/bin/true"));	/* nothing of the target's command line */
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_host_without_gpu, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unprivileged, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cuda_process, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gone_process, setup, teardown),
		cmocka_unit_test_setup_teardown(test_support_bundle, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
