// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include "clock.h"
#include "proc.h"
#include "py_stacks.h"
#include "htab.h"

/*
 * Struct layouts of CPython 3.10-3.13 on x86-64 (3.11's checked with
 * offsetof against Debian's python3.11-dev headers) (Include/cpython/pystate.h,
 * Include/internal/pycore_interp.h, pycore_runtime.h, pycore_frame.h,
 * Include/cpython/code.h, frameobject.h and unicodeobject.h of each
 * version). 3.13 publishes its own offsets at the start of _PyRuntime
 * (_Py_DebugOffsets): they are read from the target and must agree.
 */
struct py_version {
	struct isr_py_layout l;		/* runtime and code_type left 0 */
	__u16 code_first_line, code_filename, code_name, code_qualname, code_linetable;
	__u16 ascii_size;		/* sizeof(PyASCIIObject): compact ASCII text follows */
	__u16 compact_size;		/* sizeof(PyCompactUnicodeObject) */
};

static const struct py_version versions[] = {
	{ .l = { .minor = 10, .runtime_interp_head = 32, .interp_threads_head = 8, .tstate_next = 8,
		 .tstate_interp = 16, .tstate_tid = 176, .tstate_frame = 24, .frame_previous = 24,
		 .frame_code = 32, .frame_instr = 96, .owner_cstack = 0xff },
	  .code_first_line = 40, .code_filename = 104, .code_name = 112, .code_linetable = 120,
	  .ascii_size = 48, .compact_size = 72 },
	{ .l = { .minor = 11, .runtime_interp_head = 40, .interp_threads_head = 16, .tstate_next = 8,
		 .tstate_interp = 16, .tstate_tid = 160, .tstate_cframe = 56, .cframe_frame = 8,
		 .frame_previous = 48, .frame_code = 32, .frame_instr = 56, .owner_cstack = 0xff,
		 .code_adaptive = 184 },
	  .code_first_line = 72, .code_filename = 112, .code_name = 120, .code_qualname = 128,
	  .code_linetable = 136, .ascii_size = 48, .compact_size = 72 },
	{ .l = { .minor = 12, .runtime_interp_head = 40, .interp_threads_head = 72, .tstate_next = 8,
		 .tstate_interp = 16, .tstate_tid = 144, .tstate_cframe = 56, .cframe_frame = 0,
		 .frame_previous = 8, .frame_code = 0, .frame_instr = 56, .frame_owner = 70, .owner_cstack = 3,
		 .code_adaptive = 192 },
	  .code_first_line = 68, .code_filename = 112, .code_name = 120, .code_qualname = 128,
	  .code_linetable = 136, .ascii_size = 40, .compact_size = 56 },
	/* runtime_interp_head and interp_threads_head from _Py_DebugOffsets */
	{ .l = { .minor = 13, .tstate_next = 8, .tstate_interp = 16, .tstate_tid = 160, .tstate_frame = 72,
		 .frame_previous = 8, .frame_code = 0, .frame_instr = 56, .frame_owner = 70, .owner_cstack = 3,
		 .code_adaptive = 200 },
	  .code_first_line = 68, .code_filename = 112, .code_name = 120, .code_qualname = 128,
	  .code_linetable = 136, .ascii_size = 40, .compact_size = 56 },
};

#define MAX_THREADS_CHECKED	256
#define MAX_FRAMES_CHECKED	16
#define VALIDATE_ATTEMPTS	5
#define MAX_TEXT		1024	/* bytes of a file or qualified name kept */
#define MAX_RECORD		(UINT16_MAX & ~7U)

struct py_proc {
	__u32 pid;
	const struct py_version *v;
	__u64 code_type;
};

struct code_key {
	__u32 pid;
	__u64 code;
};

struct stack_entry {
	__u32 pid;
	__u32 id;
	__u16 flags, depth;
	__u64 hash;
	struct isr_py_frame *frames;
};

static __u64 code_key__hash(const void *e)
{
	const struct code_key *k = e;

	return hash__mix(k->pid, k->code);
}

static bool code_key__equal(const void *a, const void *b)
{
	const struct code_key *x = a, *y = b;

	return x->pid == y->pid && x->code == y->code;
}

static __u64 stack_entry__hash(const void *e)
{
	return ((const struct stack_entry *)e)->hash;
}

static bool stack_entry__equal(const void *a, const void *b)
{
	const struct stack_entry *x = a, *y = b;

	return x->hash == y->hash && x->pid == y->pid && x->flags == y->flags && x->depth == y->depth &&
	       memcmp(x->frames, y->frames, x->depth * sizeof(*x->frames)) == 0;
}

struct py_stacks {
	struct py_proc *procs;
	size_t nprocs, cap_procs;
	struct htab codes;		/* struct code_key: the code objects emitted */
	struct htab stacks;		/* struct stack_entry: the stacks interned */
	__u32 next_id;
	__u64 code_failures;
	unsigned char buf[MAX_RECORD + 8];
};

struct py_stacks *py_stacks__new(void)
{
	struct py_stacks *ps = calloc(1, sizeof(*ps));

	if (!ps) {
		errno = ENOMEM;
		return NULL;
	}
	htab__init(&ps->codes, sizeof(struct code_key), code_key__hash, code_key__equal);
	htab__init(&ps->stacks, sizeof(struct stack_entry), stack_entry__hash, stack_entry__equal);
	ps->next_id = 1;
	return ps;
}

void py_stacks__free(struct py_stacks *ps)
{
	struct stack_entry *s;
	size_t pos = 0;

	if (!ps)
		return;
	while ((s = htab__next(&ps->stacks, &pos)))
		free(s->frames);
	htab__free(&ps->stacks);
	htab__free(&ps->codes);
	free(ps->procs);
	free(ps);
}

__u64 py_stacks__code_failures(const struct py_stacks *ps)
{
	return ps->code_failures;
}

int py_mem__read(__u32 pid, __u64 addr, void *buf, size_t len)
{
	struct iovec local = { .iov_base = buf, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = len };
	ssize_t n;

	if (!addr)
		return -EFAULT;
	n = process_vm_readv((pid_t)pid, &local, 1, &remote, 1, 0);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

__u64 py_mem__u64(__u32 pid, __u64 addr, int *err)
{
	__u64 v = 0;
	int e = py_mem__read(pid, addr, &v, sizeof(v));

	if (e && !*err)
		*err = e;
	return e ? 0 : v;
}

static const struct py_version *version_of(int minor)
{
	size_t i;

	for (i = 0; i < sizeof(versions) / sizeof(versions[0]); i++)
		if (versions[i].l.minor == minor)
			return &versions[i];
	return NULL;
}

bool py_thread__exists(__u32 pid, __u64 tid)
{
	char path[64];
	struct stat st;

	if (tid == 0 || tid > UINT32_MAX)
		return false;
	snprintf(path, sizeof(path), "/proc/%u/task/%llu", pid, (unsigned long long)tid);
	return stat(path, &st) == 0;
}

/* 3.13: takes the two offsets the table leaves open from _Py_DebugOffsets
 * and checks that it agrees with the table on the others. */
static int debug_offsets_apply(__u32 pid, struct isr_py_layout *l, const struct py_version *v, char *why,
			       size_t len)
{
	static const struct {
		int word;
		size_t field;
	} same[] = {
		{ PY_DBG_TSTATE_NEXT, offsetof(struct isr_py_layout, tstate_next) },
		{ PY_DBG_TSTATE_INTERP, offsetof(struct isr_py_layout, tstate_interp) },
		{ PY_DBG_TSTATE_FRAME, offsetof(struct isr_py_layout, tstate_frame) },
		{ PY_DBG_TSTATE_NATIVE_ID, offsetof(struct isr_py_layout, tstate_tid) },
		{ PY_DBG_FRAME_PREVIOUS, offsetof(struct isr_py_layout, frame_previous) },
		{ PY_DBG_FRAME_EXECUTABLE, offsetof(struct isr_py_layout, frame_code) },
		{ PY_DBG_FRAME_INSTR, offsetof(struct isr_py_layout, frame_instr) },
		{ PY_DBG_FRAME_OWNER, offsetof(struct isr_py_layout, frame_owner) },
		{ PY_DBG_CODE_ADAPTIVE, offsetof(struct isr_py_layout, code_adaptive) },
	};
	__u64 w[PY_DBG_WORDS];
	size_t i;
	int e;

	e = py_mem__read(pid, l->runtime, w, sizeof(w));
	if (e) {
		snprintf(why, len, "cannot read _Py_DebugOffsets at %#llx: %s", (unsigned long long)l->runtime,
			 strerror(-e));
		return e;
	}
	if (memcmp(&w[0], "xdebugpy", 8) || (w[PY_DBG_VERSION] >> 16) != 0x030d) {
		snprintf(why, len, "_PyRuntime does not begin with the 3.13 _Py_DebugOffsets (version %#llx)",
			 (unsigned long long)w[PY_DBG_VERSION]);
		return -EPROTO;
	}
	if (w[PY_DBG_FREE_THREADED]) {
		snprintf(why, len, "a free-threaded build (no GIL): its layout is not known");
		return -ENOTSUP;
	}
	for (i = 0; i < sizeof(same) / sizeof(same[0]); i++) {
		__u16 mine;

		memcpy(&mine, (const char *)l + same[i].field, sizeof(mine));
		if (w[same[i].word] != mine) {
			snprintf(why, len, "_Py_DebugOffsets word %d is %llu, the 3.13 table says %u", same[i].word,
				 (unsigned long long)w[same[i].word], mine);
			return -EPROTO;
		}
	}
	if (w[PY_DBG_CODE_FILENAME] != v->code_filename || w[PY_DBG_CODE_QUALNAME] != v->code_qualname ||
	    w[PY_DBG_CODE_LINETABLE] != v->code_linetable || w[PY_DBG_CODE_FIRST_LINE] != v->code_first_line ||
	    w[PY_DBG_RUNTIME_INTERP_HEAD] > 4096 || w[PY_DBG_INTERP_THREADS_HEAD] > 65536) {
		snprintf(why, len, "_Py_DebugOffsets of the code object or thread list differ from the 3.13 table");
		return -EPROTO;
	}
	l->runtime_interp_head = (__u16)w[PY_DBG_RUNTIME_INTERP_HEAD];
	l->interp_threads_head = (__u16)w[PY_DBG_INTERP_THREADS_HEAD];
	return 0;
}

/* One pass over the interpreter's threads and their innermost frames.
 * 0, -EAGAIN (not initialized, or its thread states name its parent's
 * threads yet: a child just forked), or -EPROTO with why filled. */
static int validate_once(__u32 pid, const struct isr_py_layout *l, char *why, size_t len, unsigned int *nthreads,
			 unsigned int *nframes)
{
	unsigned int threads = 0, live = 0, parents = 0, frames = 0;
	__u32 ppid = 0;
	__u64 interp, t, v;
	char state;
	int err = 0;

	interp = py_mem__u64(pid, l->runtime + l->runtime_interp_head, &err);
	if (err == -ESRCH)
		return err;
	if (!interp)
		return -EAGAIN;
	t = py_mem__u64(pid, interp + l->interp_threads_head, &err);
	if (!t)
		return err == -ESRCH ? err : -EAGAIN;
	for (; t && threads < MAX_THREADS_CHECKED; threads++) {
		__u64 frame, code;
		unsigned int k;

		v = py_mem__u64(pid, t + l->tstate_interp, &err);
		if (v != interp) {
			snprintf(why, len, "thread state %#llx points at interpreter %#llx, not %#llx",
				 (unsigned long long)t, (unsigned long long)v, (unsigned long long)interp);
			return err == -ESRCH ? err : -EPROTO;
		}
		v = py_mem__u64(pid, t + l->tstate_tid, &err);
		if (l->minor >= 11) {
			live += py_thread__exists(pid, v);
			if (!ppid && proc__stat(pid, &ppid, &state))
				ppid = 0;
			parents += ppid && py_thread__exists(ppid, v);
		} else {
			live += v >= 4096; /* pthread_self(): an address */
		}
		if (l->tstate_cframe) {
			__u64 cf = py_mem__u64(pid, t + l->tstate_cframe, &err);

			frame = cf ? py_mem__u64(pid, cf + l->cframe_frame, &err) : 0;
		} else {
			frame = py_mem__u64(pid, t + l->tstate_frame, &err);
		}
		for (k = 0; frame && k < MAX_FRAMES_CHECKED; k++) {
			if (l->frame_owner) {
				__u8 owner = 0;

				if (py_mem__read(pid, frame + l->frame_owner, &owner, 1) == 0 && owner == l->owner_cstack) {
					frame = py_mem__u64(pid, frame + l->frame_previous, &err);
					continue;
				}
			}
			code = py_mem__u64(pid, frame + l->frame_code, &err);
			v = code ? py_mem__u64(pid, code + 8, &err) : 0;
			if (v != l->code_type) {
				snprintf(why, len, "frame %#llx of thread state %#llx: its code %#llx has type %#llx, "
					 "PyCode_Type is %#llx", (unsigned long long)frame, (unsigned long long)t,
					 (unsigned long long)code, (unsigned long long)v,
					 (unsigned long long)l->code_type);
				return err == -ESRCH ? err : -EPROTO;
			}
			frames++;
			frame = py_mem__u64(pid, frame + l->frame_previous, &err);
		}
		t = py_mem__u64(pid, t + l->tstate_next, &err);
	}
	if (err == -ESRCH)
		return err;
	/* None, but its parent's threads: a child just forked, whose
	 * interpreter has not yet taken its new thread ids
	 * (PyOS_AfterFork_Child): not ready yet. */
	if (!live && parents)
		return -EAGAIN;
	if (!live || live * 2 < threads) {
		snprintf(why, len, "%u of the interpreter's %u thread states name a thread of pid %u (thread id at "
			 "offset %u)", live, threads, pid, l->tstate_tid);
		return -EPROTO;
	}
	*nthreads = threads;
	*nframes = frames;
	return 0;
}

void py_status__fill(struct isr_ev_py_status *st, __u32 pid, __u16 subject, __u32 status, int minor, __u64 runtime,
		     const char *detail)
{
	memset(st, 0, sizeof(*st));
	st->hdr.type = ISR_EV_PY_STATUS;
	st->hdr.size = sizeof(*st);
	st->hdr.ts_ns = clock__mono_ns();
	st->hdr.pid = pid;
	st->hdr.tid = pid;
	st->status = status;
	st->py_minor = minor < 0 ? 0 : (__u16)minor;
	st->subject = subject;
	st->runtime = runtime;
	snprintf(st->detail, sizeof(st->detail), "%s", detail);
}

static int proc_remember(struct py_stacks *ps, __u32 pid, const struct py_version *v, __u64 code_type)
{
	size_t i;

	for (i = 0; i < ps->nprocs; i++) {
		if (ps->procs[i].pid == pid) {
			ps->procs[i].v = v;
			ps->procs[i].code_type = code_type;
			return 0;
		}
	}
	if (ps->nprocs == ps->cap_procs) {
		size_t cap = ps->cap_procs ? 2 * ps->cap_procs : 16;
		struct py_proc *n = realloc(ps->procs, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		ps->procs = n;
		ps->cap_procs = cap;
	}
	ps->procs[ps->nprocs].pid = pid;
	ps->procs[ps->nprocs].v = v;
	ps->procs[ps->nprocs].code_type = code_type;
	ps->nprocs++;
	return 0;
}

static const struct py_proc *proc_find(const struct py_stacks *ps, __u32 pid)
{
	size_t i;

	for (i = 0; i < ps->nprocs; i++)
		if (ps->procs[i].pid == pid)
			return &ps->procs[i];
	return NULL;
}

int py_layout__find(__u32 pid, const struct py_mapping *m, struct isr_py_layout *layout, char *why, size_t len)
{
	const struct py_lib *lib = m->lib;
	const struct py_version *v = version_of(lib->minor);
	const char *skew = getenv("INFERSCOPE_TEST_PY_SKEW");
	unsigned int threads = 0, frames = 0;
	__u64 bias;
	int e = -EPROTO, i;

	memset(layout, 0, sizeof(*layout));
	if (!v) {
		snprintf(why, len, "no known layout for Python 3.%d (supported: 3.10 to 3.13)", lib->minor);
		return -ENOTSUP;
	}
	if (!lib->runtime_vaddr || !lib->code_type_vaddr || !m->base) {
		snprintf(why, len, "the interpreter file has no %s",
			 !lib->runtime_vaddr ? "symbol _PyRuntime" : !lib->code_type_vaddr ? "symbol PyCode_Type" :
			 "mapping at offset 0");
		return -ENOTSUP;
	}
	bias = m->base - (lib->load_vaddr & ~0xfffULL);
	*layout = v->l;
	layout->runtime = bias + lib->runtime_vaddr;
	layout->code_type = bias + lib->code_type_vaddr;
	if (skew) {
		char *end;
		long k = strtol(skew, &end, 10);

		if (end != skew && !*end && k > -4096 && k < 4096)
			layout->tstate_tid = (__u16)(layout->tstate_tid + k);
	}
	if (v->l.minor == 13) {
		e = debug_offsets_apply(pid, layout, v, why, len);
		if (e)
			return e == -ESRCH || e == -ENOTSUP ? e : -EPROTO;
	}
	/* The target runs while it is read: a torn read may fail one pass. */
	for (i = 0; i < VALIDATE_ATTEMPTS; i++) {
		e = validate_once(pid, layout, why, len, &threads, &frames);
		if (e != -EPROTO)
			break;
		usleep(2000);
	}
	if (e)
		return e;
	snprintf(why, len, "Python 3.%d: %u thread states and %u frames checked", lib->minor, threads, frames);
	return 0;
}

int py_stacks__setup(struct py_stacks *ps, __u32 pid, const struct py_mapping *m, struct isr_py_layout *layout,
		     struct isr_ev_py_status *status)
{
	char why[sizeof(status->detail)] = "";
	int minor = m->lib->minor, e;

	e = py_layout__find(pid, m, layout, why, sizeof(why));
	if (e == -EAGAIN || e == -ESRCH)
		return e;
	if (e) {
		py_status__fill(status, pid, ISR_PY_SUBJECT_STACKS,
				e == -ENOTSUP ? ISR_PY_STATUS_UNSUPPORTED : ISR_PY_STATUS_LAYOUT_MISMATCH, minor,
				layout->runtime, why);
		return e == -ENOTSUP ? e : -EPROTO;
	}
	e = proc_remember(ps, pid, version_of(minor), layout->code_type);
	if (e)
		return e;
	py_status__fill(status, pid, ISR_PY_SUBJECT_STACKS, ISR_PY_STATUS_SAMPLING, minor, layout->runtime, why);
	return 0;
}

/* Adds (pid, code) to the set: 1 when new, 0 when known, -ENOMEM. */
static int code_insert(struct py_stacks *ps, __u32 pid, __u64 code)
{
	const struct code_key key = { .pid = pid, .code = code };
	bool added;

	if (!htab__insert(&ps->codes, &key, &added))
		return -ENOMEM;
	return added;
}

/* Appends UTF-8 for code point c to out (room for 4 more bytes). */
static size_t utf8_put(char *out, __u32 c)
{
	if (c < 0x80) {
		out[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		out[0] = (char)(0xc0 | (c >> 6));
		out[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000) {
		out[0] = (char)(0xe0 | (c >> 12));
		out[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		out[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | (c >> 18));
	out[1] = (char)(0x80 | ((c >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((c >> 6) & 0x3f));
	out[3] = (char)(0x80 | (c & 0x3f));
	return 4;
}

/* A str object of pid as UTF-8 into out (at most MAX_TEXT bytes): its
 * length, or -errno. Compact strings only (what code objects hold). */
static int read_str(__u32 pid, const struct py_version *v, __u64 obj, char *out)
{
	unsigned char hdr[40];
	unsigned char raw[MAX_TEXT * 4];
	__u64 length;
	__u32 state, kind, i;
	size_t n = 0, want;
	int e;

	e = py_mem__read(pid, obj, hdr, sizeof(hdr));
	if (e)
		return e;
	memcpy(&length, hdr + 16, 8);
	memcpy(&state, hdr + 32, 4);
	kind = (state >> 2) & 7;
	if (!((state >> 5) & 1) || (kind != 1 && kind != 2 && kind != 4))
		return -EPROTO; /* not compact, or not a str */
	if (length > MAX_TEXT)
		length = MAX_TEXT;
	if ((state >> 6) & 1) { /* ASCII: the text follows the object */
		e = length ? py_mem__read(pid, obj + v->ascii_size, out, length) : 0;
		return e ? e : (int)length;
	}
	want = length * kind;
	e = want ? py_mem__read(pid, obj + v->compact_size, raw, want) : 0;
	if (e)
		return e;
	for (i = 0; i < length && n + 4 <= MAX_TEXT; i++) {
		__u32 c;

		if (kind == 1) {
			c = raw[i];
		} else if (kind == 2) {
			__u16 c16;

			memcpy(&c16, raw + 2 * i, 2);
			c = c16;
		} else {
			memcpy(&c, raw + 4 * i, 4);
		}
		n += utf8_put(out + n, c);
	}
	return (int)n;
}

/* Writes one isr_ev_py_code for code of pid (read from the target). 0,
 * -errno from emit, or 1 when the object could not be read (counted). */
static int code_emit(struct py_stacks *ps, const struct py_proc *p, __u64 code, __u64 ts, py_emit_fn emit,
		     void *ctx)
{
	const struct py_version *v = p->v;
	struct isr_ev_py_code *c = (struct isr_ev_py_code *)ps->buf;
	unsigned char obj[256];
	__u64 type, filename, qualname, linetable, table_len = 0;
	char *text = (char *)ps->buf + sizeof(*c);
	int first_line, fl, ql, e;
	size_t room, size;

	memset(c, 0, sizeof(*c));
	if (py_mem__read(p->pid, code, obj, sizeof(obj)))
		goto unreadable;
	memcpy(&type, obj + 8, 8);
	if (type != p->code_type)
		goto unreadable;
	memcpy(&filename, obj + v->code_filename, 8);
	memcpy(&qualname, obj + (v->code_qualname ? v->code_qualname : v->code_name), 8);
	memcpy(&linetable, obj + v->code_linetable, 8);
	memcpy(&first_line, obj + v->code_first_line, 4);
	fl = read_str(p->pid, v, filename, text);
	if (fl < 0)
		goto unreadable;
	ql = read_str(p->pid, v, qualname, text + fl);
	if (ql < 0)
		goto unreadable;
	/* bytes: ob_size at 16, the data at 32 */
	if (linetable && py_mem__read(p->pid, linetable + 16, &table_len, 8))
		goto unreadable;
	room = MAX_RECORD - sizeof(*c) - (size_t)fl - (size_t)ql;
	if (table_len > room) {
		table_len = room;
		c->flags |= ISR_PY_CODE_LINETABLE_CUT;
	}
	if (table_len && py_mem__read(p->pid, linetable + 32, text + fl + ql, table_len))
		goto unreadable;
	size = (sizeof(*c) + (size_t)fl + (size_t)ql + table_len + 7) & ~(size_t)7;
	memset(ps->buf + sizeof(*c) + fl + ql + table_len, 0, size - (sizeof(*c) + fl + ql + table_len));
	c->hdr.type = ISR_EV_PY_CODE;
	c->hdr.size = (__u16)size;
	c->hdr.ts_ns = ts;
	c->hdr.pid = p->pid;
	c->hdr.tid = p->pid;
	c->code = code;
	c->first_line = first_line < 0 ? 0 : (__u32)first_line;
	c->py_minor = v->l.minor;
	c->filename_len = (__u16)fl;
	c->qualname_len = (__u16)ql;
	c->linetable_len = (__u32)table_len;
	e = emit(ctx, c, size);
	return e;
unreadable:
	ps->code_failures++;
	return 1;
}

static __u64 stack_hash(__u32 pid, __u16 flags, __u16 depth, const struct isr_py_frame *f)
{
	__u64 h = hash__mix(pid, ((__u64)flags << 16) | depth);
	__u16 i;

	for (i = 0; i < depth; i++)
		h = hash__mix(h, f[i].code ^ ((__u64)(__u32)f[i].instr << 48));
	return h;
}

/* The id of the stack (new: *is_new). 0 on -ENOMEM. */
static __u32 stack_intern(struct py_stacks *ps, const struct isr_ev_py_frames *e, __u16 depth, bool *is_new)
{
	struct stack_entry key = {
		.pid = e->hdr.pid,
		.flags = e->flags,
		.depth = depth,
		.hash = stack_hash(e->hdr.pid, e->flags, depth, e->frames),
		.frames = (struct isr_py_frame *)e->frames,	/* compared, not kept */
	};
	struct stack_entry *s;
	struct isr_py_frame *frames;

	s = htab__insert(&ps->stacks, &key, is_new);
	if (!s || !*is_new)
		return s ? s->id : 0;
	frames = malloc(depth ? depth * sizeof(*frames) : 1);
	if (!frames) {
		htab__remove(&ps->stacks, &key, NULL);
		*is_new = false;
		return 0;
	}
	memcpy(frames, e->frames, depth * sizeof(*frames));
	s->frames = frames;
	s->id = ps->next_id++;
	return s->id;
}

int py_stacks__convert(struct py_stacks *ps, const struct isr_ev_py_frames *e, py_emit_fn emit, void *ctx)
{
	const struct py_proc *p = proc_find(ps, e->hdr.pid);
	__u16 depth = e->depth > ISR_PY_MAX_DEPTH ? ISR_PY_MAX_DEPTH : e->depth, i;
	struct isr_ev_py_sample sample;
	bool is_new;
	__u32 id;
	int r;

	if (!p) {
		/* captured before an exec the recorder has seen since: its code
		 * objects are gone with the old image */
		ps->code_failures++;
		return 0;
	}
	id = stack_intern(ps, e, depth, &is_new);
	if (!id)
		return -ENOMEM;
	if (is_new) {
		struct isr_ev_py_stack *s = (struct isr_ev_py_stack *)ps->buf;
		size_t size = sizeof(*s) + depth * sizeof(struct isr_py_frame);

		for (i = 0; i < depth; i++) {
			r = code_insert(ps, e->hdr.pid, e->frames[i].code);
			if (r < 0)
				return r;
			if (r == 1) {
				r = code_emit(ps, p, e->frames[i].code, e->hdr.ts_ns, emit, ctx);
				if (r < 0)
					return r;
				/* unreadable now: the next new stack with it tries
				 * again (kept as emitted, a function whose first
				 * read failed went unnamed in every later stack) */
				if (r == 1) {
					const struct code_key key = { .pid = e->hdr.pid, .code = e->frames[i].code };

					htab__remove(&ps->codes, &key, NULL);
				}
			}
		}
		memset(s, 0, sizeof(*s));
		s->hdr = e->hdr;
		s->hdr.type = ISR_EV_PY_STACK;
		s->hdr.size = (__u16)size;
		s->stack_id = id;
		s->flags = e->flags;
		s->depth = depth;
		memcpy(ps->buf + sizeof(*s), e->frames, depth * sizeof(struct isr_py_frame));
		r = emit(ctx, s, size);
		if (r)
			return r;
	}
	memset(&sample, 0, sizeof(sample));
	sample.hdr = e->hdr;
	sample.hdr.type = ISR_EV_PY_SAMPLE;
	sample.hdr.size = sizeof(sample);
	sample.stack_id = id;
	sample.kind = e->kind;
	return emit(ctx, &sample, sizeof(sample));
}

static bool code_key__of_pid(void *entry, void *pid)
{
	return ((struct code_key *)entry)->pid == *(__u32 *)pid;
}

static bool stack_entry__drop_of_pid(void *entry, void *pid)
{
	struct stack_entry *s = entry;

	if (s->pid != *(__u32 *)pid)
		return false;
	free(s->frames);
	return true;
}

void py_stacks__forget(struct py_stacks *ps, __u32 pid)
{
	size_t i;

	for (i = 0; i < ps->nprocs; i++) {
		if (ps->procs[i].pid == pid) {
			ps->procs[i] = ps->procs[--ps->nprocs];
			break;
		}
	}
	/* Its code addresses may name other objects after an exec: drop them
	 * and its stacks. */
	htab__remove_if(&ps->codes, code_key__of_pid, &pid);
	htab__remove_if(&ps->stacks, stack_entry__drop_of_pid, &pid);
}
