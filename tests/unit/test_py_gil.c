// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The GIL of each supported CPython (user/probes/py_gil.h), found in an
 * interpreter laid out in this process's own memory as each version's
 * headers lay it out: the offsets below come from offsetof on the headers
 * of 3.10.13, 3.11.7 (3.11.2 is the same), 3.12.1 and 3.13.0
 * (Include/internal/pycore_runtime.h, pycore_interp.h, pycore_gil.h,
 * pycore_ceval_state.h, Include/cpython/pystate.h), written here apart
 * from the tables of user/probes/py_stacks.c and user/probes/py_gil.c so that a wrong
 * entry there fails. A thread's id is a real thread of this process (its
 * tid; 3.10: its pthread_self(), glibc's struct pthread holding the tid).
 * The holder is read back as bpf/gil_wait.bpf.c reads it. A GIL that is
 * not where the layout says is refused.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <cmocka.h>

#include "py_gil.h"
#include "py_stacks.h"

/* One version's offsets, from its headers. */
struct layout {
	int minor;
	size_t runtime_interp_head;	/* _PyRuntime.interpreters.head */
	size_t interp_threads_head;	/* PyInterpreterState.threads.head */
	size_t tstate_tid;		/* native_thread_id; 3.10: thread_id */
	size_t runtime_gil;		/* _PyRuntime.ceval.gil (3.10, 3.11) */
	size_t interp_gil;		/* PyInterpreterState.ceval.gil, a pointer (3.12, 3.13) */
	size_t own_gil;			/* PyInterpreterState._gil (3.12, 3.13) */
};

static const struct layout layouts[] = {
	{ .minor = 10, .runtime_interp_head = 32, .interp_threads_head = 8, .tstate_tid = 176, .runtime_gil = 352 },
	{ .minor = 11, .runtime_interp_head = 40, .interp_threads_head = 16, .tstate_tid = 160, .runtime_gil = 360 },
	{ .minor = 12, .runtime_interp_head = 40, .interp_threads_head = 72, .tstate_tid = 144, .interp_gil = 384,
	  .own_gil = 1040 },
	/* 3.13: the interpreter heads come from _Py_DebugOffsets; any value */
	{ .minor = 13, .runtime_interp_head = 400, .interp_threads_head = 248, .tstate_tid = 160, .interp_gil = 16,
	  .own_gil = 7752 },
};

/* struct _gil_runtime_state, the same in 3.10-3.13 (pycore_gil.h). */
#define GIL_INTERVAL	0
#define GIL_HOLDER	8
#define GIL_LOCKED	16
#define GIL_COND	32
#define GIL_MUTEX	80
#define GIL_SWITCH_COND	120
#define GIL_SIZE	208
#define TSTATE_NEXT	8	/* PyThreadState.next */
#define TSTATE_INTERP	16	/* PyThreadState.interp */

struct image {
	unsigned char runtime[4096];
	unsigned char interp[8192];
	unsigned char tstate[2][512];
	struct py_lib lib;
	struct py_mapping m;
	__u32 tid[2];
	__u64 self[2];			/* pthread_self() */
	unsigned char *gil;
};

static pthread_t other;
static __u32 other_tid;
static __u64 other_self;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int stop, started;

static void *other_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);
	other_tid = (__u32)syscall(SYS_gettid);
	other_self = (__u64)(uintptr_t)pthread_self();
	started = 1;
	pthread_cond_broadcast(&cond);
	while (!stop)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	return NULL;
}

static int group_setup(void **state)
{
	(void)state;
	if (pthread_create(&other, NULL, other_main, NULL))
		return -1;
	pthread_mutex_lock(&lock);
	while (!started)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	pthread_mutex_lock(&lock);
	stop = 1;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
	return pthread_join(other, NULL);
}

static void put64(unsigned char *p, __u64 v)
{
	memcpy(p, &v, 8);
}

static __u64 addr(const void *p)
{
	return (__u64)(uintptr_t)p;
}

/* 3.13's _Py_DebugOffsets at the start of _PyRuntime: the words the
 * readers check (pycore_runtime.h, 3.13.0). */
static void debug_offsets(struct image *im, const struct layout *l)
{
	static const struct {
		int word;
		__u64 value;
	} words[] = {
		{ 21, 8 }, { 22, 16 }, { 23, 72 }, { 25, 160 },	/* thread state: next, interp, current_frame, native id */
		{ 29, 8 }, { 30, 0 }, { 31, 56 }, { 33, 70 },	/* frame: previous, executable, instr_ptr, owner */
		{ 35, 112 }, { 37, 128 }, { 38, 136 }, { 39, 68 }, { 43, 200 },	/* code object */
	};
	__u64 *w = (__u64 *)(void *)im->runtime;

	memcpy(w, "xdebugpy", 8);
	w[1] = 0x030d00f0;	/* 3.13.0 final */
	w[2] = 0;		/* not free-threaded */
	w[5] = l->runtime_interp_head;
	w[9] = l->interp_threads_head;
	w[14] = l->interp_gil;
	w[15] = l->own_gil;
	w[17] = l->own_gil + GIL_LOCKED;
	w[18] = l->own_gil + GIL_HOLDER;
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		w[words[i].word] = words[i].value;
}

/* An initialized interpreter of version l with two threads, the second
 * holding the GIL. */
static struct image *image_new(const struct layout *l)
{
	struct image *im = calloc(1, sizeof(*im));

	assert_non_null(im);
	im->tid[0] = (__u32)syscall(SYS_gettid);
	im->tid[1] = other_tid;
	im->self[0] = (__u64)(uintptr_t)pthread_self();
	im->self[1] = other_self;
	if (l->minor == 13)
		debug_offsets(im, l);
	put64(im->runtime + l->runtime_interp_head, addr(im->interp));
	put64(im->interp + l->interp_threads_head, addr(im->tstate[0]));
	for (int i = 0; i < 2; i++) {
		put64(im->tstate[i] + TSTATE_NEXT, i ? 0 : addr(im->tstate[1]));
		put64(im->tstate[i] + TSTATE_INTERP, addr(im->interp));
		put64(im->tstate[i] + l->tstate_tid, l->minor == 10 ? im->self[i] : im->tid[i]);
	}
	if (l->runtime_gil) {
		im->gil = im->runtime + l->runtime_gil;
	} else {
		im->gil = im->interp + l->own_gil;
		put64(im->interp + l->interp_gil, addr(im->gil));
	}
	put64(im->gil + GIL_INTERVAL, 5000);
	put64(im->gil + GIL_HOLDER, addr(im->tstate[1]));
	im->gil[GIL_LOCKED] = 1;
	/* the mutexes: glibc's, unlocked (all zero) */
	snprintf(im->lib.path, sizeof(im->lib.path), "libpython3.%d.so.1.0", l->minor);
	im->lib.minor = l->minor;
	im->lib.load_vaddr = 0;
	im->m.lib = &im->lib;
	im->m.base = 0x1000;
	/* bias = base - load_vaddr: the symbols are where the buffers are */
	im->lib.runtime_vaddr = addr(im->runtime) - im->m.base;
	im->lib.code_type_vaddr = addr(im->interp) - im->m.base;	/* no frame names a code object */
	return im;
}

/* The holder's tid, read as the BPF program reads it. */
static __u32 holder_tid(const struct isr_py_gil *g)
{
	__u64 tstate, id;
	__u32 tid = 0;

	memcpy(&tstate, (const void *)(uintptr_t)g->last_holder, 8);
	memcpy(&id, (const void *)(uintptr_t)(tstate + g->tstate_tid), 8);
	if (g->minor >= 11)
		return (__u32)id;
	if (g->pthread_tid)
		memcpy(&tid, (const void *)(uintptr_t)(id + g->pthread_tid), 4);
	return tid;
}

static void check_version(const struct layout *l)
{
	struct image *im = image_new(l);
	struct isr_ev_py_status st;
	struct isr_py_gil g;

	print_message("Python 3.%d\n", l->minor);
	assert_int_equal(py_gil__setup((__u32)getpid(), &im->m, &g, &st), 0);
	print_message("  %s\n", st.detail);
	assert_int_equal(st.hdr.type, ISR_EV_PY_STATUS);
	assert_int_equal(st.subject, ISR_PY_SUBJECT_GIL);
	assert_int_equal(st.status, ISR_PY_STATUS_SAMPLING);
	assert_int_equal(st.py_minor, l->minor);
	assert_int_equal(g.cond, addr(im->gil + GIL_COND));
	assert_int_equal(g.mutex, addr(im->gil + GIL_MUTEX));
	assert_int_equal(g.end, addr(im->gil + GIL_SWITCH_COND));
	assert_int_equal(g.last_holder, addr(im->gil + GIL_HOLDER));
	assert_int_equal(g.minor, l->minor);
	assert_int_equal(g.tstate_tid, l->tstate_tid);
	assert_int_equal(g.pthread_tid, l->minor == 10 ? 720 : 0);
	assert_int_equal(holder_tid(&g), im->tid[1]);
	free(im);
}

static void test_gil_3_10(void **state)
{
	(void)state;
	check_version(&layouts[0]);
}

static void test_gil_3_11(void **state)
{
	(void)state;
	check_version(&layouts[1]);
}

static void test_gil_3_12(void **state)
{
	(void)state;
	check_version(&layouts[2]);
}

static void test_gil_3_13(void **state)
{
	(void)state;
	check_version(&layouts[3]);
}

static int setup_expect(struct image *im, int want, __u32 status)
{
	struct isr_ev_py_status st;
	struct isr_py_gil g;
	int e;

	memset(&st, 0, sizeof(st));
	e = py_gil__setup((__u32)getpid(), &im->m, &g, &st);
	if (e != want)
		print_error("py_gil__setup: %d (%s), want %d\n", e, st.detail, want);
	assert_int_equal(e, want);
	if (status) {
		assert_int_equal(st.subject, ISR_PY_SUBJECT_GIL);
		assert_int_equal(st.status, status);
		print_message("  %s: %s\n", status == ISR_PY_STATUS_SAMPLING ? "traced" : "refused", st.detail);
	}
	return e;
}

/* What is not the GIL of the layout is refused, never used. */
static void test_mismatch_refused(void **state)
{
	struct image *im;

	(void)state;
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++) {
		const struct layout *l = &layouts[i];

		print_message("Python 3.%d\n", l->minor);
		/* 8 bytes off */
		im = image_new(l);
		setenv("INFERSCOPE_TEST_GIL_SKEW", "8", 1);
		setup_expect(im, -EPROTO, ISR_PY_STATUS_LAYOUT_MISMATCH);
		unsetenv("INFERSCOPE_TEST_GIL_SKEW");
		/* taken by something that is no thread state of the interpreter */
		put64(im->gil + GIL_HOLDER, addr(im->interp));
		setup_expect(im, -EPROTO, ISR_PY_STATUS_LAYOUT_MISMATCH);
		/* a mutex that is no glibc mutex */
		put64(im->gil + GIL_HOLDER, addr(im->tstate[0]));
		put64(im->gil + GIL_MUTEX + 24, 0x1234);
		setup_expect(im, -EPROTO, ISR_PY_STATUS_LAYOUT_MISMATCH);
		put64(im->gil + GIL_MUTEX + 24, 0);
		setup_expect(im, 0, ISR_PY_STATUS_SAMPLING);
		/* created, never taken: not initialized yet */
		memset(im->gil + GIL_LOCKED, 0xff, 4);
		setup_expect(im, -EAGAIN, 0);
		free(im);
	}
	/* 3.12+: the interpreter points at a GIL that is not its own */
	im = image_new(&layouts[2]);
	put64(im->interp + layouts[2].interp_gil, addr(im->runtime + 512));
	setup_expect(im, -EPROTO, ISR_PY_STATUS_LAYOUT_MISMATCH);
	free(im);
	/* 3.13: _Py_DebugOffsets that disagree with the table */
	im = image_new(&layouts[3]);
	((__u64 *)(void *)im->runtime)[18] += 8;
	setup_expect(im, -EPROTO, ISR_PY_STATUS_LAYOUT_MISMATCH);
	free(im);
	/* a version without a layout */
	im = image_new(&layouts[1]);
	im->lib.minor = 14;
	setup_expect(im, -ENOTSUP, ISR_PY_STATUS_UNSUPPORTED);
	free(im);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gil_3_10),
		cmocka_unit_test(test_gil_3_11),
		cmocka_unit_test(test_gil_3_12),
		cmocka_unit_test(test_gil_3_13),
		cmocka_unit_test(test_mismatch_refused),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
