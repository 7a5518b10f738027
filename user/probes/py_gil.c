// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "py_gil.h"
#include "py_stacks.h"

/*
 * Where the main interpreter's GIL is, per version (x86-64, offsetof in
 * the headers named in py_gil.h), and struct _gil_runtime_state itself,
 * the same in 3.10-3.13 (without Py_GIL_DISABLED): interval (unsigned
 * long) 0, last_holder 8, locked (int) 16, switch_number 24, cond 32,
 * mutex 80, switch_cond 120, switch_mutex 168; 208 bytes. glibc's
 * pthread_cond_t is 48 bytes, pthread_mutex_t 40.
 */
struct gil_version {
	int minor;
	__u16 runtime_gil;	/* 3.10, 3.11: _PyRuntime.ceval.gil (0: not there) */
	__u16 interp_gil;	/* 3.12, 3.13: PyInterpreterState.ceval.gil, a pointer (0: not there) */
	__u16 own_gil;		/* 3.12, 3.13: PyInterpreterState._gil, the main interpreter's own */
};

static const struct gil_version gil_versions[] = {
	{ .minor = 10, .runtime_gil = 352 },
	{ .minor = 11, .runtime_gil = 360 },
	{ .minor = 12, .interp_gil = 384, .own_gil = 1040 },
	/* both checked against _Py_DebugOffsets, which wins for own_gil */
	{ .minor = 13, .interp_gil = 16, .own_gil = 7752 },
};

enum {
	GIL_INTERVAL = 0,
	GIL_LAST_HOLDER = 8,
	GIL_LOCKED = 16,
	GIL_COND = 32,
	GIL_MUTEX = 80,
	GIL_SWITCH_COND = 120,
	GIL_SWITCH_MUTEX = 168,
	GIL_SIZE = 208,
	MUTEX_SIZE = 40,
};

/* glibc x86-64: the kernel tid in struct pthread (what pthread_self()
 * points at), the same since glibc 2.26. */
#define GLIBC_PTHREAD_TID	720

#define MAX_THREADS		256
#define VALIDATE_ATTEMPTS	5

static const struct gil_version *gil_version_of(int minor)
{
	size_t i;

	for (i = 0; i < sizeof(gil_versions) / sizeof(gil_versions[0]); i++)
		if (gil_versions[i].minor == minor)
			return &gil_versions[i];
	return NULL;
}

/* The interpreter's thread states (at most MAX_THREADS): how many, or
 * -errno. */
static int thread_states(__u32 pid, const struct isr_py_layout *l, __u64 interp, __u64 *out)
{
	int n = 0, err = 0;
	__u64 t = py_mem__u64(pid, interp + l->interp_threads_head, &err);

	while (t && n < MAX_THREADS && !err) {
		out[n++] = t;
		t = py_mem__u64(pid, t + l->tstate_next, &err);
	}
	return err ? err : n;
}

/* A glibc pthread_mutex_t of pid, unlocked or held by one of its threads:
 * __lock 0..2, __count 0, __owner a thread of pid (0 unlocked), __kind
 * without the recursive/error-check/robust/priority bits, __list empty. */
static bool plausible_mutex(__u32 pid, const unsigned char *m)
{
	__s32 lock, owner, kind;
	__u32 count;
	__u64 list[2];

	memcpy(&lock, m, 4);
	memcpy(&count, m + 4, 4);
	memcpy(&owner, m + 8, 4);
	memcpy(&kind, m + 16, 4);
	memcpy(list, m + 24, 16);
	if (lock < 0 || lock > 2 || count || (kind & 0x7f) || list[0] || list[1])
		return false;
	return owner == 0 || (owner > 0 && py_thread__exists(pid, (__u64)owner));
}

/* One look at the GIL at addr. 0, -EAGAIN (not initialized), -ESRCH, or
 * -EPROTO with why filled. */
static int gil_check(__u32 pid, __u64 addr, const __u64 *tstates, int ntstates, char *why, size_t len)
{
	unsigned char g[GIL_SIZE];
	__u64 interval, holder;
	__s32 locked;
	bool known = false;
	int e, i;

	e = py_mem__read(pid, addr, g, sizeof(g));
	if (e == -ESRCH)
		return e;
	if (e) {
		snprintf(why, len, "cannot read the GIL at %#llx: %s", (unsigned long long)addr, strerror(-e));
		return -EPROTO;
	}
	memcpy(&interval, g + GIL_INTERVAL, 8);
	memcpy(&holder, g + GIL_LAST_HOLDER, 8);
	memcpy(&locked, g + GIL_LOCKED, 4);
	if (locked == -1)
		return -EAGAIN; /* created, never taken */
	for (i = 0; i < ntstates; i++)
		known |= tstates[i] == holder;
	if (locked != 0 && locked != 1) {
		snprintf(why, len, "the GIL at %#llx has lock flag %d, not 0 or 1", (unsigned long long)addr, locked);
		return -EPROTO;
	}
	if (!interval || interval > 1000000000ULL || !holder || (holder & 7) || (locked && !known)) {
		snprintf(why, len, "the GIL at %#llx has switch interval %llu us and holder %#llx (%s, lock flag %d)",
			 (unsigned long long)addr, (unsigned long long)interval, (unsigned long long)holder,
			 known ? "a thread state" : "not a thread state of the interpreter", locked);
		return -EPROTO;
	}
	if (!plausible_mutex(pid, g + GIL_MUTEX) || !plausible_mutex(pid, g + GIL_SWITCH_MUTEX)) {
		snprintf(why, len, "the mutexes of the GIL at %#llx do not look like glibc's", (unsigned long long)addr);
		return -EPROTO;
	}
	return 0;
}

/* 3.10: the offset of the kernel tid in glibc's struct pthread, checked
 * against every thread state; 0 when it does not hold. */
static __u16 pthread_tid_offset(__u32 pid, const struct isr_py_layout *l, const __u64 *tstates, int n)
{
	int i, err = 0;

	for (i = 0; i < n; i++) {
		__u64 self = py_mem__u64(pid, tstates[i] + l->tstate_tid, &err);
		__u32 tid = 0;

		if (err || !self || py_mem__read(pid, self + GLIBC_PTHREAD_TID, &tid, sizeof(tid)) || !py_thread__exists(pid, tid))
			return 0;
	}
	return n ? GLIBC_PTHREAD_TID : 0;
}

/* 3.13: the interpreter's GIL offsets from _Py_DebugOffsets, which must
 * agree with the table. */
static int debug_offsets(__u32 pid, const struct isr_py_layout *l, const struct gil_version *v, __u64 *own_gil,
			 char *why, size_t len)
{
	__u64 w[PY_DBG_INTERP_GIL_HOLDER + 1];	/* up to the GIL's words */
	int e = py_mem__read(pid, l->runtime, w, sizeof(w));

	if (e == -ESRCH)
		return e;
	if (e) {
		snprintf(why, len, "cannot read _Py_DebugOffsets: %s", strerror(-e));
		return -EPROTO;
	}
	if (w[PY_DBG_INTERP_CEVAL_GIL] != v->interp_gil ||
	    w[PY_DBG_INTERP_GIL_LOCKED] != w[PY_DBG_INTERP_OWN_GIL] + GIL_LOCKED ||
	    w[PY_DBG_INTERP_GIL_HOLDER] != w[PY_DBG_INTERP_OWN_GIL] + GIL_LAST_HOLDER ||
	    w[PY_DBG_INTERP_OWN_GIL] > 65536) {
		snprintf(why, len, "_Py_DebugOffsets of the GIL (ceval.gil %llu, _gil %llu, locked %llu, holder %llu) "
			 "differ from the 3.13 table", (unsigned long long)w[PY_DBG_INTERP_CEVAL_GIL],
			 (unsigned long long)w[PY_DBG_INTERP_OWN_GIL], (unsigned long long)w[PY_DBG_INTERP_GIL_LOCKED],
			 (unsigned long long)w[PY_DBG_INTERP_GIL_HOLDER]);
		return -EPROTO;
	}
	*own_gil = w[PY_DBG_INTERP_OWN_GIL];
	return 0;
}

/* Where the GIL is, and one check of it. */
static int gil_locate(__u32 pid, const struct isr_py_layout *l, const struct gil_version *v, __u64 own_gil,
		      __s64 skew, __u64 *addr, __u64 *tstates, int *ntstates, char *why, size_t len)
{
	__u64 interp;
	int err = 0, n;

	interp = py_mem__u64(pid, l->runtime + l->runtime_interp_head, &err);
	if (err == -ESRCH)
		return err;
	if (!interp)
		return -EAGAIN;
	n = thread_states(pid, l, interp, tstates);
	if (n < 0)
		return n == -ESRCH ? n : -EAGAIN;
	*ntstates = n;
	if (v->runtime_gil) {
		*addr = l->runtime + v->runtime_gil;
	} else {
		*addr = py_mem__u64(pid, interp + v->interp_gil, &err);
		if (err == -ESRCH)
			return err;
		if (!*addr)
			return -EAGAIN;
		if (*addr != interp + own_gil) {
			snprintf(why, len, "the main interpreter %#llx points at GIL %#llx, not at its own (%#llx)",
				 (unsigned long long)interp, (unsigned long long)*addr,
				 (unsigned long long)(interp + own_gil));
			return -EPROTO;
		}
	}
	*addr += (__u64)skew;
	return gil_check(pid, *addr, tstates, n, why, len);
}

int py_gil__setup(__u32 pid, const struct py_mapping *m, struct isr_py_gil *gil, struct isr_ev_py_status *status)
{
	const struct gil_version *v = gil_version_of(m->lib->minor);
	const char *env = getenv("INFERSCOPE_TEST_GIL_SKEW");
	char why[sizeof(status->detail)] = "";
	__u64 tstates[MAX_THREADS], addr = 0, own_gil;
	struct isr_py_layout l;
	int e, i, n = 0;
	__s64 skew = 0;

	e = py_layout__find(pid, m, &l, why, sizeof(why));
	if (!e && !v) {
		snprintf(why, sizeof(why), "no known GIL layout for Python 3.%d", m->lib->minor);
		e = -ENOTSUP;
	}
	if (e == -EAGAIN || e == -ESRCH)
		return e;
	if (e)
		goto fail;
	own_gil = v->own_gil;
	if (v->minor == 13) {
		e = debug_offsets(pid, &l, v, &own_gil, why, sizeof(why));
		if (e == -ESRCH)
			return e;
		if (e)
			goto fail;
	}
	if (env) {
		char *end;
		long k = strtol(env, &end, 10);

		if (end != env && !*end && k > -4096 && k < 4096)
			skew = k;
	}
	/* The target runs while it is read: a torn read may fail one look. */
	for (i = 0; i < VALIDATE_ATTEMPTS; i++) {
		e = gil_locate(pid, &l, v, own_gil, skew, &addr, tstates, &n, why, sizeof(why));
		if (e != -EPROTO)
			break;
		usleep(2000);
	}
	if (e == -EAGAIN || e == -ESRCH)
		return e;
	if (e)
		goto fail;
	memset(gil, 0, sizeof(*gil));
	gil->cond = addr + GIL_COND;
	gil->mutex = addr + GIL_MUTEX;
	gil->end = addr + GIL_MUTEX + MUTEX_SIZE;
	gil->last_holder = addr + GIL_LAST_HOLDER;
	gil->minor = (__u16)v->minor;
	gil->tstate_tid = l.tstate_tid;
	if (v->minor == 10)
		gil->pthread_tid = pthread_tid_offset(pid, &l, tstates, n);
	snprintf(why, sizeof(why), "Python 3.%d: the GIL at %#llx checked with %d thread states%s", v->minor,
		 (unsigned long long)addr, n,
		 v->minor == 10 && !gil->pthread_tid ? "; its holders are not named (glibc's struct pthread "
						      "does not hold the tid where expected)" : "");
	py_status__fill(status, pid, ISR_PY_SUBJECT_GIL, ISR_PY_STATUS_SAMPLING, v->minor, l.runtime, why);
	return 0;
fail:
	py_status__fill(status, pid, ISR_PY_SUBJECT_GIL,
			e == -ENOTSUP ? ISR_PY_STATUS_UNSUPPORTED : ISR_PY_STATUS_LAYOUT_MISMATCH, m->lib->minor,
			l.runtime, why);
	return e == -ENOTSUP ? e : -EPROTO;
}
