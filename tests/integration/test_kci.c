// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * `inferscope-bpf bench --kci --ktap` as a kernel-CI harness runs it, on
 * the running kernel, cut down to seconds: its KTAP is well-formed and
 * every test passes, its JSON carries a figure per round, every call made
 * was a hit counted; against a baseline of 1 ns a hit it fails (exit
 * 1, the test "not ok"), against a baseline of itself it passes. And
 * `bench --ktap` speaks KTAP for the recorder workloads and their
 * thresholds too. And scripts/kci-vm.sh builds the VM's initramfs
 * (INFERSCOPE_KCI_KERNEL=IMAGE: boots it and runs two tests there).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <cmocka.h>
#include "harness.h"
#include "../unit/ktap_check.h"

#define KCI_TESTS "uprobe_push,uprobe_multi,ringbuf_no_wakeup,delivery_threads,delivery_ringbuf_full," \
		  "delivery_attach_churn,delivery_page_faults"

struct kci_files {
	char dir[256], json[512], ktap[512], err[512], base[512];
};

static void files_init(struct kci_files *f)
{
	th_tmpdir(f->dir, sizeof(f->dir));
	snprintf(f->json, sizeof(f->json), "%s/kci.json", f->dir);
	snprintf(f->ktap, sizeof(f->ktap), "%s/kci.ktap", f->dir);
	snprintf(f->err, sizeof(f->err), "%s/kci.err", f->dir);
	snprintf(f->base, sizeof(f->base), "%s/baseline.json", f->dir);
}

/* Runs the quick suite's tests named by only; its KTAP, checked
 * well-formed, with *status the wait status. */
static char *run_kci(const struct kci_files *f, const char *only, const char *baseline, int *status)
{
	char *argv[] = { TRACER, "bench", "--kci", "--quick", "--ktap", "--rounds", "7", "--only", (char *)only,
			 "-o", (char *)f->json, baseline ? "--baseline" : NULL, (char *)baseline, NULL };
	struct ktap_summary s;
	char *text;

	*status = th_run_to(argv, f->ktap, f->err);
	text = th_slurp(f->ktap);
	assert_non_null(text);
	if (ktap_check(text, &s)) {
		fprintf(stderr, "%s\nline %d: %s\n", text, s.line, s.why);
		fail();
	}
	return text;
}

static json_t *find(json_t *doc, const char *list, const char *name)
{
	json_t *t;
	size_t i;

	json_array_foreach(json_object_get(doc, list), i, t)
		if (!strcmp(json_string_value(json_object_get(t, "name")), name))
			return t;
	fail_msg("no %s in %s", name, list);
	return NULL;
}

static void test_kci_suite(void **state)
{
	struct kci_files f;
	struct ktap_summary s;
	json_error_t jerr;
	json_t *doc, *m, *c;
	char *text;
	int status;

	(void)state;
	files_init(&f);
	text = run_kci(&f, KCI_TESTS, NULL, &status);
	ktap_check(text, &s);
	assert_int_equal(s.plan, 7);
	if (s.not_ok) {
		fprintf(stderr, "%s", text);
		fail();
	}
	th_expect_exit(status, 0, f.err);
	assert_non_null(strstr(text, "# Totals: pass:"));
	free(text);

	doc = json_load_file(f.json, 0, &jerr);
	assert_non_null(doc);
	assert_non_null(json_string_value(json_object_get(json_object_get(doc, "machine"), "kernel")));
	/* A figure per round, and every call a hit. */
	m = find(doc, "mechanisms", "uprobe_push");
	assert_int_equal(json_array_size(json_object_get(json_object_get(m, "ns_per_hit"), "samples")), 7);
	assert_true(th_num(json_object_get(m, "ns_per_hit"), "median") > 0);
	assert_int_equal(json_integer_value(json_object_get(m, "hits")), json_integer_value(json_object_get(m, "ops")));
	c = find(doc, "checks", "delivery_ringbuf_full");
	assert_string_equal(json_string_value(json_object_get(c, "status")), "ok");
	assert_true(json_integer_value(json_object_get(c, "drops")) > 0);
	assert_int_equal(json_integer_value(json_object_get(c, "hits")), json_integer_value(json_object_get(c, "calls")));
	json_decref(doc);
	th_rmrf(f.dir);
}

/* Writes doc to path, with every sample of name's ns_per_hit set to ns
 * (0: as it is). doc is left as it was. */
static void write_baseline(json_t *doc, const char *name, double ns, const char *path)
{
	json_t *copy = json_deep_copy(doc), *x, *samples;
	size_t i;

	assert_non_null(copy);
	samples = json_object_get(json_object_get(find(copy, "mechanisms", name), "ns_per_hit"), "samples");
	if (ns > 0)
		json_array_foreach(samples, i, x)
			json_real_set(x, ns);
	assert_int_equal(json_dump_file(copy, path, 0), 0);
	json_decref(copy);
}

static void test_kci_baseline(void **state)
{
	struct kci_files f;
	json_error_t jerr;
	json_t *doc;
	char *text;
	int status;

	(void)state;
	files_init(&f);
	text = run_kci(&f, "uprobe_push", NULL, &status);
	th_expect_exit(status, 0, f.err);
	free(text);
	doc = json_load_file(f.json, 0, &jerr);
	assert_non_null(doc);

	/* A kernel whose hit cost 1 ns as the baseline: a regression. (Not
	 * the run's own costs scaled down: halved, quartered and even a tenth
	 * of them were not always one on a loaded 2-CPU machine, whose runs a
	 * minute apart read 551 to 749 ns a hit, single rounds up to 3,156
	 * ns. The comparison itself is tested on planted data in
	 * tests/unit/test_bench_stats.c.) */
	write_baseline(doc, "uprobe_push", 1.0, f.base);
	text = run_kci(&f, "uprobe_push", f.base, &status);
	if (ktap_result_of(text, "uprobe_push"))
		fprintf(stderr, "against 1 ns a hit, not a regression:\n%s\n", text);
	assert_int_equal(ktap_result_of(text, "uprobe_push"), 0);
	assert_non_null(strstr(text, "REGRESSION"));
	assert_non_null(strstr(text, "# baseline "));
	th_expect_exit(status, 1, f.err);
	free(text);

	/* The run itself as the baseline: noise, not a regression. */
	write_baseline(doc, "uprobe_push", 0, f.base);
	text = run_kci(&f, "uprobe_push", f.base, &status);
	if (ktap_result_of(text, "uprobe_push") != 1)
		fprintf(stderr, "against its own costs, not the same:\n%s\n", text);
	assert_int_equal(ktap_result_of(text, "uprobe_push"), 1);
	th_expect_exit(status, 0, f.err);
	free(text);
	json_decref(doc);
	th_rmrf(f.dir);
}

static void test_workloads_ktap(void **state)
{
	struct kci_files f;
	struct ktap_summary s;
	char th[600], *text;
	FILE *tf;
	int status;

	(void)state;
	files_init(&f);
	snprintf(th, sizeof(th), "%s/thresholds.json", f.dir);
	tf = fopen(th, "w");
	assert_non_null(tf);
	fputs("{\"sched_switch.overhead_pct\": -1000}\n", tf);
	fclose(tf);
	{
		char *argv[] = { TRACER, "bench", "--ktap", "--only", "sched_switch", "--rounds", "1", "--seconds", "0.3",
				 "--tmpdir", f.dir, "--check", th, NULL };

		status = th_run_to(argv, f.ktap, f.err);
	}
	text = th_slurp(f.ktap);
	assert_non_null(text);
	assert_int_equal(ktap_check(text, &s), 0);
	assert_int_equal(s.plan, 1);
	/* The threshold it cannot meet fails its line, as a diagnostic says. */
	assert_int_equal(ktap_result_of(text, "sched_switch"), 0);
	assert_non_null(strstr(text, "# REGRESSION sched_switch.overhead_pct"));
	th_expect_exit(status, 1, f.err);
	free(text);
	th_rmrf(f.dir);
}

/* Runs a shell command line; its output in out (if not NULL). */
static int sh(const char *cmd, const char *out, const char *err)
{
	char *argv[] = { "sh", "-c", (char *)cmd, NULL };

	return th_run_to(argv, out, err);
}

/* scripts/kci-vm.sh builds the initramfs and the QEMU command; with
 * INFERSCOPE_KCI_KERNEL=IMAGE (and QEMU) it boots it and runs a few tests. */
static void test_vm_script(void **state)
{
	struct kci_files f;
	char cmd[2048], out[600], *text;
	const char *kernel = getenv("INFERSCOPE_KCI_KERNEL");
	json_t *doc;
	int status;

	(void)state;
	files_init(&f);
	snprintf(out, sizeof(out), "%s/out.txt", f.dir);
	doc = json_pack("{s:[]}", "mechanisms");
	assert_int_equal(json_dump_file(doc, f.base, 0), 0);
	json_decref(doc);
	snprintf(cmd, sizeof(cmd), "scripts/kci-vm.sh --dry-run --baseline %s build/kci-init %s/vm -- --kci --quick "
		 "--ktap --only uprobe_push", f.base, f.dir);
	status = sh(cmd, out, f.err);
	th_expect_exit(status, 0, f.err);
	text = th_slurp(out);
	assert_non_null(strstr(text, "qemu-system-x86_64 "));
	assert_non_null(strstr(text, "-kernel build/kci-init "));
	assert_non_null(strstr(text, "/vm/kci.ktap -serial file:"));
	free(text);
	/* The initramfs: the binary, /init, the arguments one a line, the
	 * baseline. */
	snprintf(cmd, sizeof(cmd), "cd %s/vm && gzip -dc initramfs.cpio.gz | cpio -it --quiet | sort | tr '\n' ' ' && "
		 "gzip -dc initramfs.cpio.gz | cpio -i --quiet --to-stdout kci-args", f.dir);
	status = sh(cmd, out, f.err);
	th_expect_exit(status, 0, f.err);
	text = th_slurp(out);
	assert_string_equal(text, ". baseline.json dev inferscope-bpf init kci-args proc sys tmp --kci\n--quick\n--ktap\n"
			    "--only\nuprobe_push\n--baseline\n/baseline.json\n");
	free(text);
	/* A bad option is refused before anything is built. */
	status = sh("scripts/kci-vm.sh --cpus two build/kci-init /nonexistent", NULL, f.err);
	th_expect_exit(status, 2, f.err);

	if (kernel && *kernel) {
		struct ktap_summary s;

		snprintf(cmd, sizeof(cmd), "scripts/kci-vm.sh --timeout 300 %s %s/boot -- --kci --quick --ktap --rounds 3 "
			 "--only uprobe_push,delivery_threads", kernel, f.dir);
		status = sh(cmd, NULL, f.err);
		th_expect_exit(status, 0, f.err);
		snprintf(out, sizeof(out), "%s/boot/kci.ktap", f.dir);
		text = th_slurp(out);
		assert_non_null(text);
		assert_int_equal(ktap_check(text, &s), 0);
		assert_int_equal(s.plan, 2);
		assert_int_equal(s.not_ok, 0);
		free(text);
	}
	th_rmrf(f.dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kci_suite),
		cmocka_unit_test(test_kci_baseline),
		cmocka_unit_test(test_workloads_ktap),
		cmocka_unit_test(test_vm_script),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
