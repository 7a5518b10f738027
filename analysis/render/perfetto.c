// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The Perfetto trace (docs/outputs.md): TracePackets of Perfetto's own
 * protobuf format (analysis/proto/, encoded by protobuf-c), each written as
 * it is made, length-delimited as the `packet` field of a Trace, so that
 * memory holds the tracks and the open Python frames, never the events.
 *
 * A pass of its own over the recording (pass.h) feeds a timeline and an
 * attribution; the thread states are the timeline's spans, the GPU idle
 * gaps the attribution's split; every other event is exported as it comes.
 * One packet sequence: event and argument names are interned. The packets
 * are deflated in chunks into compressed_packets, as Perfetto's own service
 * writes them: a trace is then about the size of its recording, not 10 to
 * 20 times it. A thread's states shorter than a pixel of a 10 ms window,
 * next to each other, are one slice with their count and time by state.
 *
 * Several recordings (report__write_perfetto_set) are written one after
 * the other into one trace: recording i's times shifted onto recording 0's
 * CLOCK_MONOTONIC through their CLOCK_REALTIME offsets (ranks.h), its
 * processes and threads given ids of their own (i * PASS_PID_LIMIT plus
 * the pid or tid: two hosts can have the same pid), its processes named
 * with their rank and real pid.
 *
 * An NCCL call is probed at its entry only: a collective that other ranks
 * reached is a slice from the rank's arrival to the last rank's (what the
 * collective waited for), cut at the thread's next NCCL call; any other
 * call is an instant.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "report.h"
#include "perfetto.h"
#include "devmem.h"
#include "htab.h"
#include "text.h"
#include "gpu_summary.h"
#include "py_report.h"
#include "protos/perfetto/trace/trace_packet.pb-c.h"

#define SEQ_ID		1
#define MAX_ARGS	12
#define RATE_WINDOW_NS	10000000ull	/* launch rate: launches per 10 ms */
#define PY_RUN_GAP_NS	50000000ull	/* a stack sample this much after the last one starts afresh */
#define PY_TAIL_NS	10000000ull	/* a sample stands for this long at most */
#define PY_DEPTH	64
#define CHUNK_BYTES	(256u << 10)	/* packets deflated together into one compressed_packets */
/* A thread state shorter than this, next to another, is merged with it
 * (docs/outputs.md): a pixel of a 10 ms window on a 1000-pixel track. */
#define SHORT_STATE_NS	10000ull

typedef Perfetto__Protos__TracePacket Packet;
typedef Perfetto__Protos__TrackEvent Event;
typedef Perfetto__Protos__TrackDescriptor Track;
typedef Perfetto__Protos__DebugAnnotation Arg;

enum track_kind { TK_PROCESS = 1, TK_THREAD, TK_CUDA, TK_CUPTI, TK_FAULTS, TK_GIL, TK_PYTHON, TK_DEVICE, TK_STREAM,
		  TK_MEMORY, TK_BUSY, TK_RATE, TK_FINDINGS, TK_NVTX, TK_NVTX_RANGE, TK_STEPS, TK_NCCL };

static const char *const track_names[] = {
	[TK_CUDA] = "CUDA calls", [TK_CUPTI] = "CUDA launches (CUPTI)", [TK_FAULTS] = "page faults",
	[TK_GIL] = "GIL waits",	  [TK_PYTHON] = "Python",		    [TK_MEMORY] = "device memory",
	[TK_RATE] = "launches/s", [TK_FINDINGS] = "inferscope-bpf findings",
	[TK_NVTX] = "NVTX",	  [TK_STEPS] = "steps",
	[TK_NCCL] = "NCCL calls",
};

struct interned {
	char *s;		/* the name as the analysis gave it: the key */
	char *text;		/* as written (lib/text.h) */
	__u64 iid;
};

struct arg {
	const char *name;
	enum { A_U64, A_I64, A_DBL, A_STR, A_PTR, A_BOOL } kind;
	union {
		__u64 u;
		__s64 i;
		double d;
		const char *s;
	};
};

struct pystate {
	__u32 pid, tid;
	__u64 last;			/* the latest sample */
	size_t depth;			/* open frames, outermost first */
	__u64 codes[PY_DEPTH];
};

/* A thread's NCCL slice still open: it ends at the collective's last
 * arrival or at the thread's next NCCL call, whichever comes first. */
struct nccl_open {
	__u32 pid, tid;
	__u64 track, end;
	bool open;
};

/* A thread's states shorter than SHORT_STATE_NS, one after the other,
 * not yet written: one slice if more than one, else the state itself. */
struct short_run {
	struct tl_span first;
	__u64 end;
	__u64 n;			/* states in it */
	__u64 ns[TL_CAT_MAX];
};

struct rate {
	__u32 pid;
	__u64 window;			/* index of the window being counted */
	__u64 count;
};

struct bytes {
	unsigned char *v;
	size_t len, cap;
};

struct pf {
	FILE *f;
	int err;
	char errmsg[256];	/* why the second pass could not open */
	const struct analysis *a;
	struct pass *pass;
	struct timeline *tl;
	struct attribution *attr;
	struct tl_observer obs;
	struct devmem *dm;
	struct htab names, arg_names;	/* struct interned */
	__u64 next_iid;
	/* interned data new in the packet being built */
	Perfetto__Protos__EventName new_name, *new_names[1];
	Perfetto__Protos__DebugAnnotationName new_args[MAX_ARGS], *new_arg_ptrs[MAX_ARGS];
	size_t n_new_args;
	struct htab tracks;		/* key -> uuid */
	__u64 next_uuid;
	struct pystate *py;
	size_t npy;
	struct rate *rates;
	size_t nrates;
	struct nccl_open *nccl;
	size_t nnccl;
	struct short_run *runs;
	size_t nruns;
	struct htab run_of;		/* thread (its tl_thread's address) -> index in runs */
	/* the recording being written, and where it stands among the ranks */
	const struct ranks *ranks;	/* NULL: no ranks lined up */
	size_t source;			/* its index in ranks */
	size_t next_arrival;		/* its NCCL arrivals (nccl_calls.arrivals) met so far */
	const char *rec_name;		/* its file (several recordings), else NULL */
	__u32 id_base;			/* added to its pids and tids */
	__s64 shift_ns;			/* added to its times */
	struct bytes chunk;		/* framed packets not yet deflated */
	struct bytes out;		/* the compressed packet being written */
	unsigned char *z;		/* deflate's output */
	size_t zcap;
	bool first;
	struct perfetto_stats st;
};

static __u64 interned_hash(const void *e)
{
	return hash__str(((const struct interned *)e)->s);
}

static bool interned_equal(const void *a, const void *b)
{
	return strcmp(((const struct interned *)a)->s, ((const struct interned *)b)->s) == 0;
}

/* --- packets ------------------------------------------------------------------------------ */

static void put_varint(unsigned char *p, size_t *n, __u64 v)
{
	while (v >= 0x80) {
		p[(*n)++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	p[(*n)++] = (unsigned char)v;
}

/* Appends pk to b as one `packet` (field 1, length-delimited) of a Trace. */
static void append(struct pf *p, struct bytes *b, const Packet *pk)
{
	size_t len = perfetto__protos__trace_packet__get_packed_size(pk);

	if (b->len + len + 16 > b->cap) {
		size_t cap = b->len + len + 16 > 2 * b->cap ? b->len + len + 16 : 2 * b->cap;
		unsigned char *v = realloc(b->v, cap);

		if (!v) {
			p->err = -ENOMEM;
			return;
		}
		b->v = v;
		b->cap = cap;
	}
	b->v[b->len++] = 0x0a;	/* Trace.packet: field 1, length-delimited */
	put_varint(b->v, &b->len, len);
	b->len += perfetto__protos__trace_packet__pack(pk, b->v + b->len);
}

/* Deflates the packets of the chunk into one packet of compressed_packets
 * (zlib's format, what Perfetto's service writes and trace_processor
 * inflates: a Trace of the packets, in their order) and writes it. */
static void flush_chunk(struct pf *p)
{
	Packet pk = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	uLongf zlen = compressBound(p->chunk.len);

	if (p->err || !p->chunk.len)
		return;
	if (zlen > p->zcap) {
		unsigned char *z = realloc(p->z, zlen);

		if (!z) {
			p->err = -ENOMEM;
			return;
		}
		p->z = z;
		p->zcap = zlen;
	}
	if (compress2(p->z, &zlen, p->chunk.v, p->chunk.len, Z_DEFAULT_COMPRESSION) != Z_OK) {
		p->err = -ENOMEM;	/* zlib fails only for want of memory here */
		return;
	}
	pk.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_COMPRESSED_PACKETS;
	pk.compressed_packets.data = p->z;
	pk.compressed_packets.len = zlen;
	p->out.len = 0;
	append(p, &p->out, &pk);
	if (!p->err && fwrite(p->out.v, 1, p->out.len, p->f) != p->out.len)
		p->err = -EIO;
	p->st.raw_bytes += p->chunk.len;
	p->st.bytes += p->out.len;
	p->st.compressed++;
	p->chunk.len = 0;
}

/* Adds pk to the trace (in the chunk being deflated). */
static void emit(struct pf *p, Packet *pk)
{
	Perfetto__Protos__InternedData in = PERFETTO__PROTOS__INTERNED_DATA__INIT;

	if (p->err)
		return;
	pk->optional_trusted_packet_sequence_id_case =
		PERFETTO__PROTOS__TRACE_PACKET__OPTIONAL_TRUSTED_PACKET_SEQUENCE_ID_TRUSTED_PACKET_SEQUENCE_ID;
	pk->trusted_packet_sequence_id = SEQ_ID;
	if (p->first) {
		pk->has_sequence_flags = 1;
		pk->sequence_flags = PERFETTO__PROTOS__TRACE_PACKET__SEQUENCE_FLAGS__SEQ_INCREMENTAL_STATE_CLEARED;
		p->first = false;
	} else if (pk->data_case == PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_EVENT &&
		   (pk->track_event->name_field_case || pk->track_event->n_debug_annotations)) {
		/* it names interned data */
		pk->has_sequence_flags = 1;
		pk->sequence_flags = PERFETTO__PROTOS__TRACE_PACKET__SEQUENCE_FLAGS__SEQ_NEEDS_INCREMENTAL_STATE;
	}
	if (p->new_names[0] || p->n_new_args) {
		in.n_event_names = p->new_names[0] ? 1 : 0;
		in.event_names = p->new_names;
		in.n_debug_annotation_names = p->n_new_args;
		in.debug_annotation_names = p->new_arg_ptrs;
		pk->interned_data = &in;
	}
	append(p, &p->chunk, pk);
	p->st.packets++;
	p->new_names[0] = NULL;
	p->n_new_args = 0;
	if (p->chunk.len >= CHUNK_BYTES)
		flush_chunk(p);
}

/* The iid of s in table t; a new one is added to the packet being built. */
static __u64 intern(struct pf *p, struct htab *t, const char *s, bool is_arg)
{
	struct interned key = { .s = (char *)s }, *e;
	bool added;

	e = htab__insert(t, &key, &added);
	if (!e) {
		p->err = -ENOMEM;
		return 0;
	}
	if (!added)
		return e->iid;
	e->s = strdup(s);
	e->text = text__dup(s, SIZE_MAX, TEXT_UTF8, NULL);
	if (!e->s || !e->text) {
		free(e->s);
		free(e->text);
		htab__remove(t, &key, NULL);
		p->err = -ENOMEM;
		return 0;
	}
	e->iid = ++p->next_iid;
	if (is_arg) {
		Perfetto__Protos__DebugAnnotationName init = PERFETTO__PROTOS__DEBUG_ANNOTATION_NAME__INIT;
		Perfetto__Protos__DebugAnnotationName *n = &p->new_args[p->n_new_args];

		*n = init;
		n->has_iid = 1;
		n->iid = e->iid;
		n->name = e->text;
		p->new_arg_ptrs[p->n_new_args++] = n;
	} else {
		Perfetto__Protos__EventName init = PERFETTO__PROTOS__EVENT_NAME__INIT;

		p->new_name = init;
		p->new_name.has_iid = 1;
		p->new_name.iid = e->iid;
		p->new_name.name = e->text;
		p->new_names[0] = &p->new_name;
	}
	return e->iid;
}

/* A time of the recording being written on the trace's clock (the first
 * recording's). */
static __u64 on_trace_clock(const struct pf *p, __u64 ts)
{
	__s64 t = (__s64)ts + p->shift_ns;

	return p->shift_ns < 0 && t < 0 ? 0 : (__u64)t;
}

/* One track event: a slice's begin (name set) or end, an instant, or a
 * counter value. */
static void event(struct pf *p, __u64 track, __u64 ts, Perfetto__Protos__TrackEvent__Type type, const char *name,
		  const struct arg *args, size_t nargs, __u64 flow_out, __u64 flow_in)
{
	Packet pk = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Event ev = PERFETTO__PROTOS__TRACK_EVENT__INIT;
	Arg a[MAX_ARGS], *ap[MAX_ARGS];
	char *text[MAX_ARGS] = { NULL };
	uint64_t out = flow_out, in = flow_in;

	ev.has_type = 1;
	ev.type = type;
	ev.has_track_uuid = 1;
	ev.track_uuid = track;
	if (name) {
		ev.name_field_case = PERFETTO__PROTOS__TRACK_EVENT__NAME_FIELD_NAME_IID;
		ev.name_iid = intern(p, &p->names, name, false);
	}
	for (size_t i = 0; i < nargs && i < MAX_ARGS; i++) {
		Arg init = PERFETTO__PROTOS__DEBUG_ANNOTATION__INIT;

		a[i] = init;
		a[i].name_field_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__NAME_FIELD_NAME_IID;
		a[i].name_iid = intern(p, &p->arg_names, args[i].name, true);
		switch (args[i].kind) {
		case A_U64:
			a[i].value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_UINT_VALUE;
			a[i].uint_value = args[i].u;
			break;
		case A_I64:
			a[i].value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_INT_VALUE;
			a[i].int_value = args[i].i;
			break;
		case A_DBL:
			a[i].value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_DOUBLE_VALUE;
			a[i].double_value = args[i].d;
			break;
		case A_PTR:
			a[i].value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_POINTER_VALUE;
			a[i].pointer_value = args[i].u;
			break;
		case A_BOOL:
			a[i].value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_BOOL_VALUE;
			a[i].bool_value = args[i].u != 0;
			break;
		default:
			a[i].value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_STRING_VALUE;
			text[i] = text__dup(args[i].s, SIZE_MAX, TEXT_UTF8, NULL);
			if (!text[i])
				p->err = -ENOMEM;
			a[i].string_value = text[i] ? text[i] : "";
		}
		ap[i] = &a[i];
	}
	ev.n_debug_annotations = nargs < MAX_ARGS ? nargs : MAX_ARGS;
	ev.debug_annotations = ap;
	if (flow_out) {
		ev.n_flow_ids = 1;
		ev.flow_ids = &out;
		p->st.flows++;
	}
	if (flow_in) {
		ev.n_terminating_flow_ids = 1;
		ev.terminating_flow_ids = &in;
	}
	pk.has_timestamp = 1;
	pk.timestamp = on_trace_clock(p, ts);
	pk.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_EVENT;
	pk.track_event = &ev;
	emit(p, &pk);
	for (size_t i = 0; i < nargs && i < MAX_ARGS; i++)
		free(text[i]);
}

static void slice(struct pf *p, __u64 track, const char *name, __u64 start, __u64 end, const struct arg *args,
		  size_t nargs, __u64 flow_out, __u64 flow_in)
{
	if (end < start)
		end = start;
	event(p, track, start, PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN, name, args, nargs, flow_out,
	      flow_in);
	event(p, track, end, PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END, NULL, NULL, 0, 0, 0);
	p->st.slices++;
}

static void instant(struct pf *p, __u64 track, const char *name, __u64 ts, const struct arg *args, size_t nargs)
{
	event(p, track, ts, PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_INSTANT, name, args, nargs, 0, 0);
	p->st.instants++;
}

static void counter(struct pf *p, __u64 track, __u64 ts, double v)
{
	Packet pk = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Event ev = PERFETTO__PROTOS__TRACK_EVENT__INIT;

	ev.has_type = 1;
	ev.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_COUNTER;
	ev.has_track_uuid = 1;
	ev.track_uuid = track;
	ev.counter_value_field_case = PERFETTO__PROTOS__TRACK_EVENT__COUNTER_VALUE_FIELD_DOUBLE_COUNTER_VALUE;
	ev.double_counter_value = v;
	pk.has_timestamp = 1;
	pk.timestamp = on_trace_clock(p, ts);
	pk.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_EVENT;
	pk.track_event = &ev;
	emit(p, &pk);
	p->st.counters++;
}

/* --- tracks --------------------------------------------------------------------------------- */

static __u64 track_key(enum track_kind k, __u32 pid, __u64 id)
{
	return (__u64)k << 58 ^ (__u64)pid << 34 ^ id;
}

static const struct rec_process *process_of(const struct recording *r, __u32 pid)
{
	const struct rec_process *found = NULL;

	for (size_t i = 0; i < r->process_count; i++)
		if (r->processes[i].pid == pid)
			found = &r->processes[i];
	return found;
}

static __u64 process_track(struct pf *p, __u32 pid);

/* pid's rank in the recording being written; -1: none. */
static int rank_of(const struct pf *p, __u32 pid)
{
	for (size_t i = 0; p->ranks && i < p->ranks->nrows; i++)
		if (p->ranks->rows[i].source == p->source && p->ranks->rows[i].pid == pid)
			return p->ranks->rows[i].rank;
	return -1;
}

/* The uuid of track (kind, pid, id), described on first use. */
static __u64 track(struct pf *p, enum track_kind k, __u32 pid, __u64 id, __u64 parent, const char *name)
{
	Perfetto__Protos__ProcessDescriptor pd = PERFETTO__PROTOS__PROCESS_DESCRIPTOR__INIT;
	Perfetto__Protos__ThreadDescriptor td = PERFETTO__PROTOS__THREAD_DESCRIPTOR__INIT;
	Perfetto__Protos__CounterDescriptor cd = PERFETTO__PROTOS__COUNTER_DESCRIPTOR__INIT;
	Packet pk = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Track t = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
	__u64 key = track_key(k, pid, id), uuid;
	char pname[320], *text = NULL, *comm_text = NULL;

	if (htab_u64__get(&p->tracks, key, &uuid))
		return uuid;
	uuid = ++p->next_uuid;
	if (htab_u64__put(&p->tracks, key, uuid)) {
		p->err = -ENOMEM;
		return uuid;
	}
	t.has_uuid = 1;
	t.uuid = uuid;
	if (parent) {
		t.has_parent_uuid = 1;
		t.parent_uuid = parent;
	}
	/* names as written (lib/text.h) */
	if (name && !(text = text__dup(name, SIZE_MAX, TEXT_UTF8, NULL)))
		p->err = -ENOMEM;
	if (text) {
		t.static_or_dynamic_name_case = PERFETTO__PROTOS__TRACK_DESCRIPTOR__STATIC_OR_DYNAMIC_NAME_NAME;
		t.name = text;
	}
	if (k == TK_PROCESS) {
		const struct rec_process *rp = process_of(p->a->r, pid);
		const char *comm = rp && rp->comm ? rp->comm : NULL;
		int rank = rank_of(p, pid);

		pd.has_pid = 1;
		pd.pid = (int32_t)(pid + p->id_base);
		if (rank >= 0)
			snprintf(pname, sizeof(pname), "rank %d: %s (pid %u)", rank, comm ? comm : "?", pid);
		else if (p->rec_name)
			snprintf(pname, sizeof(pname), "%s: %s (pid %u)", p->rec_name, comm ? comm : "?", pid);
		if (rank >= 0 || p->rec_name)
			comm = pname;
		if (comm && !(comm_text = text__dup(comm, SIZE_MAX, TEXT_UTF8, NULL)))
			p->err = -ENOMEM;
		pd.process_name = comm_text;
		t.process = &pd;
	} else if (k == TK_THREAD) {
		td.has_pid = 1;
		td.pid = (int32_t)(pid + p->id_base);
		td.has_tid = 1;
		td.tid = (int64_t)(id + p->id_base);
		td.thread_name = text;
		t.thread = &td;
		t.static_or_dynamic_name_case = PERFETTO__PROTOS__TRACK_DESCRIPTOR__STATIC_OR_DYNAMIC_NAME__NOT_SET;
	} else if (k == TK_MEMORY || k == TK_BUSY || k == TK_RATE) {
		cd.has_unit = k == TK_MEMORY;
		cd.unit = PERFETTO__PROTOS__COUNTER_DESCRIPTOR__UNIT__UNIT_SIZE_BYTES;
		cd.unit_name = k == TK_RATE ? "launches/s" : NULL;
		t.counter = &cd;
	}
	pk.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_DESCRIPTOR;
	pk.track_descriptor = &t;
	emit(p, &pk);
	free(text);
	free(comm_text);
	p->st.tracks++;
	return uuid;
}

static __u64 process_track(struct pf *p, __u32 pid)
{
	return track(p, TK_PROCESS, pid, 0, 0, NULL);
}

static __u64 thread_track(struct pf *p, __u32 pid, __u32 tid, const char *comm)
{
	char shown[16], name[TASK_NAME_LEN];

	snprintf(shown, sizeof(shown), "%s", comm && *comm ? comm : "thread");
	task_name__format(name, sizeof(name), shown, summary__process_name(p->a->sum, pid),
			  py_report__thread_entry(p->a->py, pid, tid));
	process_track(p, pid);
	return track(p, TK_THREAD, pid, tid, 0, name);
}

/* A track of one kind of a thread's events, under the thread. */
static __u64 thread_child(struct pf *p, enum track_kind k, __u32 pid, __u32 tid, const char *comm)
{
	__u64 parent = thread_track(p, pid, tid, comm);

	return track(p, k, pid, tid, parent, track_names[k]);
}

static __u64 device_track(struct pf *p, __u32 pid, __u32 device)
{
	char name[32];

	snprintf(name, sizeof(name), "GPU %u", device);
	return track(p, TK_DEVICE, pid, device, process_track(p, pid), name);
}

static __u64 stream_track(struct pf *p, __u32 pid, __u32 device, __u32 stream)
{
	__u64 parent = device_track(p, pid, device);
	char name[32];

	snprintf(name, sizeof(name), "GPU %u stream %u", device, stream);
	return track(p, TK_STREAM, pid, (__u64)device << 32 | stream, parent, name);
}

static __u64 process_counter(struct pf *p, enum track_kind k, __u32 pid, __u64 id, const char *name)
{
	return track(p, k, pid, id, process_track(p, pid), name);
}

/* --- events ------------------------------------------------------------------------------------ */

static const char *comm_of(const struct tl_thread *th)
{
	return th ? th->comm : NULL;
}

static const char *fn_name(__u16 func)
{
	const struct isr_cuda_fn *fn = isr_cuda_fn(func);

	return fn ? fn->symbol : "cuda call";
}

/* The arguments a CUDA call's family decodes. */
static size_t cuda_args(const struct isr_ev_cuda_call *c, struct arg *a)
{
	const struct isr_cuda_fn *fn = isr_cuda_fn(c->func);
	size_t n = 0;

	switch (fn ? fn->family : 0) {
	case ISR_CUDA_FAM_LAUNCH:
		a[n++] = (struct arg){ .name = "function", .kind = A_PTR, .u = c->args[0] };
		a[n++] = (struct arg){ .name = "grid_x", .kind = A_U64, .u = c->args[1] };
		a[n++] = (struct arg){ .name = "block_x", .kind = A_U64, .u = c->args[4] };
		break;
	case ISR_CUDA_FAM_COPY:
		a[n++] = (struct arg){ .name = "dst", .kind = A_PTR, .u = c->args[0] };
		a[n++] = (struct arg){ .name = "src", .kind = A_PTR, .u = c->args[1] };
		a[n++] = (struct arg){ .name = "bytes", .kind = A_U64, .u = c->args[2] };
		break;
	case ISR_CUDA_FAM_SET:
		a[n++] = (struct arg){ .name = "dst", .kind = A_PTR, .u = c->args[0] };
		a[n++] = (struct arg){ .name = "count", .kind = A_U64, .u = c->args[2] };
		break;
	case ISR_CUDA_FAM_ALLOC:
	case ISR_CUDA_FAM_VMM_CREATE:
	case ISR_CUDA_FAM_REGISTER:
		a[n++] = (struct arg){ .name = "address", .kind = A_PTR, .u = c->args[0] };
		a[n++] = (struct arg){ .name = "bytes", .kind = A_U64, .u = c->args[1] };
		break;
	case ISR_CUDA_FAM_FREE:
	case ISR_CUDA_FAM_VMM_RELEASE:
	case ISR_CUDA_FAM_UNREGISTER:
	case ISR_CUDA_FAM_SYNC:
	case ISR_CUDA_FAM_GRAPH:
	case ISR_CUDA_FAM_LAUNCH_EX:
		a[n++] = (struct arg){ .name = "handle", .kind = A_PTR, .u = c->args[0] };
		break;
	default:
		for (; n < 3; n++)
			a[n] = (struct arg){ .name = n == 0 ? "arg0" : n == 1 ? "arg1" : "arg2", .kind = A_U64,
					     .u = c->args[n] };
	}
	if (c->flags & ISR_CUDA_RETURNED) {
		const char *err = c->status ? summary__cuda_error_name(c->status) : NULL;

		a[n++] = (struct arg){ .name = "status", .kind = A_I64, .i = c->status };
		if (err)
			a[n++] = (struct arg){ .name = "error", .kind = A_STR, .s = err };
	}
	return n;
}

static struct rate *rate_of(struct pf *p, __u32 pid)
{
	struct rate *n;

	for (size_t i = 0; i < p->nrates; i++)
		if (p->rates[i].pid == pid)
			return &p->rates[i];
	n = reallocarray(p->rates, p->nrates + 1, sizeof(*n));
	if (!n)
		return NULL;
	p->rates = n;
	p->rates[p->nrates] = (struct rate){ .pid = pid, .window = UINT64_MAX };
	return &p->rates[p->nrates++];
}

/* Ends the window being counted: its rate, and 0 after it if the next
 * launch comes later. */
static void rate_flush(struct pf *p, struct rate *r, __u64 next_window)
{
	__u64 track, start = pass__start(p->pass);

	if (r->window == UINT64_MAX)
		return;
	track = process_counter(p, TK_RATE, r->pid, 0, track_names[TK_RATE]);
	counter(p, track, start + r->window * RATE_WINDOW_NS, (double)r->count * (1e9 / RATE_WINDOW_NS));
	if (next_window > r->window + 1)
		counter(p, track, start + (r->window + 1) * RATE_WINDOW_NS, 0);
	r->count = 0;
}

static void count_launch(struct pf *p, __u32 pid, __u64 ts)
{
	struct rate *r = rate_of(p, pid);
	__u64 w = (ts - pass__start(p->pass)) / RATE_WINDOW_NS;

	if (!r) {
		p->err = -ENOMEM;
		return;
	}
	if (w != r->window) {
		rate_flush(p, r, w);
		r->window = w;
	}
	r->count++;
}

/* A traced process's call: a slice once its return was probed, else an
 * instant; a launch counted in its process's rate. */
static void on_cuda_call(struct pf *p, const struct pass_event *e, const struct tl_thread *th)
{
	const struct isr_ev_cuda_call *c = (const void *)e->h;
	struct arg a[MAX_ARGS];
	size_t n;
	__u64 t;

	if (!pass__is_target(p->pass, c->hdr.pid))
		return;
	n = cuda_args(c, a);
	t = thread_child(p, TK_CUDA, c->hdr.pid, c->hdr.tid, comm_of(th));
	if (c->flags & ISR_CUDA_RETURNED)
		slice(p, t, fn_name(c->func), e->start, e->end, a, n, 0, 0);
	else
		instant(p, t, fn_name(c->func), e->start, a, n);
	if (isr_cuda_is(c->func, ISR_CUDA_K_LAUNCH))
		count_launch(p, c->hdr.pid, e->start);
}

static __u64 flow_id(__u32 pid, __u32 corr)
{
	return (__u64)pid << 32 | corr;
}

/* GPU work on its stream's track (a kernel or a copy starts the flow of
 * its launch), and the launches CUPTI saw on their thread's: a record the
 * clock fit could not map is counted, not shown. */
static bool mapped(struct pf *p, const struct pass_event *e)
{
	if (e->unmapped)
		p->st.unmapped++;
	return !e->unmapped;
}

static void on_gpu_kernel(struct pf *p, const struct pass_event *e, const struct tl_thread *th)
{
	const struct isr_ev_gpu_kernel *k = (const void *)e->h;
	struct arg a[MAX_ARGS];
	const char *kn;
	char name[48];

	(void)th;
	if (!mapped(p, e))
		return;
	kn = summary__gpu_kernel_name(p->a->sum, k->hdr.pid, k->name_id);
	a[0] = (struct arg){ .name = "grid", .kind = A_U64, .u = (__u64)k->grid[0] * k->grid[1] * k->grid[2] };
	a[1] = (struct arg){ .name = "block", .kind = A_U64, .u = (__u64)k->block[0] * k->block[1] * k->block[2] };
	a[2] = (struct arg){ .name = "registers", .kind = A_U64, .u = k->registers };
	if (!kn) {
		snprintf(name, sizeof(name), "kernel#%u", k->name_id);
		kn = name;
	}
	/* the correlation id is the flow's */
	slice(p, stream_track(p, k->hdr.pid, k->device_id, k->stream_id), kn, e->start, e->end, a, 3, 0,
	      k->correlation_id ? flow_id(k->hdr.pid, k->correlation_id) : 0);
}

static void on_gpu_memcpy(struct pf *p, const struct pass_event *e, const struct tl_thread *th)
{
	const struct isr_ev_gpu_memcpy *m = (const void *)e->h;
	static const char *const kinds[] = { "?", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
					     "AtoD", "DtoA", "DtoD", "HtoH", "PtoP" };
	struct arg a[MAX_ARGS];
	char name[48];

	(void)th;
	if (!mapped(p, e))
		return;
	snprintf(name, sizeof(name), "memcpy %s", m->copy_kind < 11 ? kinds[m->copy_kind] : "?");
	a[0] = (struct arg){ .name = "bytes", .kind = A_U64, .u = m->bytes };
	a[1] = (struct arg){ .name = "src_kind", .kind = A_U64, .u = m->src_kind };
	a[2] = (struct arg){ .name = "dst_kind", .kind = A_U64, .u = m->dst_kind };
	slice(p, stream_track(p, m->hdr.pid, m->device_id, m->stream_id), name, e->start, e->end, a, 3, 0,
	      m->correlation_id ? flow_id(m->hdr.pid, m->correlation_id) : 0);
}

static void on_gpu_memset(struct pf *p, const struct pass_event *e, const struct tl_thread *th)
{
	const struct isr_ev_gpu_memset *m = (const void *)e->h;
	struct arg a[2] = {
		{ .name = "bytes", .kind = A_U64, .u = m->bytes },
		{ .name = "value", .kind = A_U64, .u = m->value },
	};

	(void)th;
	if (mapped(p, e))
		slice(p, stream_track(p, m->hdr.pid, m->device_id, m->stream_id), "memset", e->start, e->end, a, 2, 0,
		      0);
}

static void on_gpu_api(struct pf *p, const struct pass_event *e, const struct tl_thread *th)
{
	const struct isr_ev_gpu_api *api = (const void *)e->h;
	const struct tl_thread *caller;

	(void)th;
	if (!mapped(p, e) || !gpu_launch_cbid(api->api, api->cbid) || !api->thread_id)
		return;
	caller = timeline__thread(p->tl, api->hdr.pid, api->thread_id);
	slice(p, thread_child(p, TK_CUPTI, api->hdr.pid, api->thread_id, comm_of(caller)), "launch", e->start,
	      e->end, NULL, 0, flow_id(api->hdr.pid, api->correlation_id), 0);
}

/* --- Python stacks as slices: frames that stay from sample to sample are one slice -------------- */

static struct pystate *py_of(struct pf *p, __u32 pid, __u32 tid)
{
	struct pystate *n;

	for (size_t i = 0; i < p->npy; i++)
		if (p->py[i].tid == tid && p->py[i].pid == pid)
			return &p->py[i];
	n = reallocarray(p->py, p->npy + 1, sizeof(*n));
	if (!n)
		return NULL;
	p->py = n;
	memset(&p->py[p->npy], 0, sizeof(*p->py));
	p->py[p->npy].pid = pid;
	p->py[p->npy].tid = tid;
	return &p->py[p->npy++];
}

static int stack_cmp(const void *key, const void *elem)
{
	__u32 id = *(const __u32 *)key, other = ((const struct py_stack *)elem)->id;

	return (id > other) - (id < other);
}

static void py_close(struct pf *p, struct pystate *s, size_t keep, __u64 at)
{
	__u64 t = track(p, TK_PYTHON, s->pid, s->tid, 0, NULL);

	for (; s->depth > keep; s->depth--)
		event(p, t, at, PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END, NULL, NULL, 0, 0, 0);
}

static void on_py_sample(struct pf *p, const struct pass_event *e, const struct tl_thread *th)
{
	const struct isr_ev_py_sample *smp = (const void *)e->h;
	const struct py_report *py = p->a->py;
	const struct py_stack *st;
	struct pystate *s;
	size_t depth, same = 0;
	__u64 t;

	if (smp->kind != ISR_PY_KIND_TIMER || !th || !py || !py->nstacks)
		return;
	st = bsearch(&smp->stack_id, py->stacks, py->nstacks, sizeof(*py->stacks), stack_cmp);
	s = py_of(p, th->pid, th->tid);
	if (!s) {
		p->err = -ENOMEM;
		return;
	}
	t = thread_child(p, TK_PYTHON, th->pid, th->tid, th->comm);
	if (s->depth && e->start - s->last > PY_RUN_GAP_NS)
		py_close(p, s, 0, s->last + PY_TAIL_NS);
	depth = st ? (st->depth < PY_DEPTH ? st->depth : PY_DEPTH) : 0;
	/* frames are innermost first: compare from the outermost */
	while (same < s->depth && same < depth && s->codes[same] == st->frames[st->depth - 1 - same].code)
		same++;
	py_close(p, s, same, e->start);
	for (size_t i = same; i < depth; i++) {
		const struct isr_py_frame *f = &st->frames[st->depth - 1 - i];
		const struct py_code *code = py_report__code(py, th->pid, f->code);
		char name[48], site[PY_SITE_LEN];
		struct arg a[1];

		if (code) {
			snprintf(site, sizeof(site), "%s:%u", code->filename, py_code__line(code, f->instr));
		} else {
			snprintf(name, sizeof(name), "<code 0x%" PRIx64 ">", (uint64_t)f->code);
			snprintf(site, sizeof(site), "?");
		}
		a[0] = (struct arg){ .name = "site", .kind = A_STR, .s = site };
		event(p, t, e->start, PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN,
		      code ? code->qualname : name, a, 1, 0, 0);
		p->st.slices++;
		s->codes[i] = f->code;
	}
	s->depth = depth;
	s->last = e->start;
}

/* --- NCCL calls -------------------------------------------------------------------------------------- */

static struct nccl_open *nccl_of(struct pf *p, __u32 pid, __u32 tid)
{
	struct nccl_open *n;

	for (size_t i = 0; i < p->nnccl; i++)
		if (p->nccl[i].tid == tid && p->nccl[i].pid == pid)
			return &p->nccl[i];
	n = reallocarray(p->nccl, p->nnccl + 1, sizeof(*n));
	if (!n)
		return NULL;
	p->nccl = n;
	p->nccl[p->nnccl] = (struct nccl_open){ .pid = pid, .tid = tid };
	return &p->nccl[p->nnccl++];
}

/* Ends the thread's open NCCL slice, at its end or at `at` if sooner. */
static void nccl_close(struct pf *p, struct nccl_open *o, __u64 at)
{
	if (!o->open)
		return;
	event(p, o->track, o->end < at ? o->end : at, PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END, NULL, NULL,
	      0, 0, 0);
	p->st.slices++;
	o->open = false;
}

/* The collective call as the ranks lined it up: NULL when it is not one
 * of the recording's arrivals or no other rank reached it. */
static const struct ranks_arrival *nccl_arrival(struct pf *p, const struct pass_event *e,
						const struct isr_ev_nccl_call *c, const struct nccl_arrival **arr)
{
	const struct nccl_calls *nc = &p->a->nccl;
	size_t k;

	*arr = NULL;
	if (!nccl_func_is_collective(c->func) || !c->seq)
		return NULL;
	/* the pass serves the events in the order the analysis's did */
	k = p->next_arrival++;
	if (k >= nc->narrivals || nc->arrivals[k].pid != c->hdr.pid || nc->arrivals[k].tid != c->hdr.tid ||
	    nc->arrivals[k].seq != c->seq || nc->arrivals[k].ns != e->start)
		return NULL;
	*arr = &nc->arrivals[k];
	if (!p->ranks || !p->ranks->arrivals[p->source][k].last_ns)
		return NULL;
	return &p->ranks->arrivals[p->source][k];
}

static void on_nccl_call(struct pf *p, const struct pass_event *e, const struct tl_thread *th)
{
	const struct isr_ev_nccl_call *c = (const void *)e->h;
	const struct nccl_arrival *arr;
	const struct ranks_arrival *ra = nccl_arrival(p, e, c, &arr);
	struct nccl_open *o = nccl_of(p, c->hdr.pid, c->hdr.tid);
	const char *name = nccl_func_name(c->func);
	struct arg a[MAX_ARGS];
	char hash[24];
	size_t n = 0;
	__u64 t;

	if (!o) {
		p->err = -ENOMEM;
		return;
	}
	t = thread_child(p, TK_NCCL, c->hdr.pid, c->hdr.tid, comm_of(th));
	nccl_close(p, o, e->start);
	a[n++] = (struct arg){ .name = "collective", .kind = A_STR, .s = name };
	if (arr && p->a->nccl.comms[arr->comm].id_hash) {
		snprintf(hash, sizeof(hash), "%016llx", (unsigned long long)p->a->nccl.comms[arr->comm].id_hash);
		a[n++] = (struct arg){ .name = "communicator", .kind = A_STR, .s = hash };
	} else {
		a[n++] = (struct arg){ .name = "comm", .kind = A_PTR, .u = c->comm };
	}
	a[n++] = (struct arg){ .name = "seq", .kind = A_U64, .u = c->seq };
	a[n++] = (struct arg){ .name = "bytes", .kind = A_U64, .u = c->count * ISR_NCCL_DTYPE_SIZE(c->dtype) };
	if (arr && arr->joined) {	/* its NCCL kernel (analysis/model/nccl.h): its wait shows on the GPU too */
		a[n++] = (struct arg){ .name = "gpu_ms", .kind = A_DBL,
				       .d = (double)(arr->gpu_end - arr->gpu_start) / 1e6 };
		a[n++] = (struct arg){ .name = "gpu_grouped", .kind = A_BOOL, .u = arr->grouped };
	}
	if (!ra) {
		instant(p, t, name, e->start, a, n);
		return;
	}
	a[n++] = (struct arg){ .name = "straggler", .kind = A_BOOL, .u = ra->straggler };
	a[n++] = (struct arg){ .name = "late", .kind = A_BOOL, .u = ra->late };
	a[n++] = (struct arg){ .name = "last_rank", .kind = A_I64, .i = ra->last_rank };
	a[n++] = (struct arg){ .name = "wait_for_last_ms", .kind = A_DBL,
			       .d = ra->last_ns > e->start ? (double)(ra->last_ns - e->start) / 1e6 : 0 };
	event(p, t, e->start, PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN, name, a, n, 0, 0);
	*o = (struct nccl_open){ .pid = c->hdr.pid, .tid = c->hdr.tid, .track = t, .open = true,
				 .end = ra->last_ns > e->start ? ra->last_ns : e->start };
}

/* A communicator's set-up: a slice of its duration. */
static void on_nccl_comm(struct pf *p, const struct pass_event *e, const struct tl_thread *th)
{
	const struct isr_ev_nccl_comm *c = (const void *)e->h;
	struct nccl_open *o = nccl_of(p, c->hdr.pid, c->hdr.tid);
	char hash[24];
	struct arg a[4] = {
		{ .name = "communicator", .kind = A_STR, .s = hash },
		{ .name = "rank", .kind = A_I64, .i = c->rank },
		{ .name = "nranks", .kind = A_I64, .i = c->nranks },
		{ .name = "status", .kind = A_I64, .i = c->status },
	};

	if (!o) {
		p->err = -ENOMEM;
		return;
	}
	nccl_close(p, o, e->start);
	snprintf(hash, sizeof(hash), "%016llx", (unsigned long long)c->id_hash);
	slice(p, thread_child(p, TK_NCCL, c->hdr.pid, c->hdr.tid, comm_of(th)), nccl_func_name(c->func), e->start,
	      e->start + c->duration_ns, a, 4, 0, 0);
}

/* --- the observer ---------------------------------------------------------------------------------- */

static const char *const state_names[TL_CAT_MAX] = {
	[TL_GIL] = "waiting for the GIL",	[TL_SYNC] = "CUDA synchronization",
	[TL_CUDA_MEM] = "CUDA memory call",	[TL_CUDA] = "CUDA call",
	[TL_FAULT] = "page fault",		[TL_RECLAIM] = "memory reclaim",
	[TL_RUNQUEUE] = "waiting for a CPU",	[TL_IO] = "uninterruptible sleep",
	[TL_BLOCKED] = "blocked",		[TL_RUNNING] = "running",
	[TL_UNKNOWN] = "unknown",
};

static void state_slice(struct pf *p, const struct tl_span *s)
{
	struct arg a[2];
	size_t n = 0;

	if (s->other.tid)
		a[n++] = (struct arg){ .name = s->cat == TL_RUNQUEUE ? "cpu_taken_by" :
					       s->cat == TL_GIL ? "gil_holder" : "woken_by",
				       .kind = A_U64, .u = s->other.tid };
	if (s->cuda_fn)
		a[n++] = (struct arg){ .name = "function", .kind = A_STR, .s = fn_name(s->cuda_fn) };
	slice(p, thread_track(p, s->thread->pid, s->thread->tid, s->thread->comm), state_names[s->cat], s->start,
	      s->end, a, n, 0, 0);
}

/* Writes the run: its state alone, or one slice of its states with the
 * time of each category. */
static void run_flush(struct pf *p, struct short_run *r)
{
	const struct tl_thread *th = r->first.thread;
	struct arg a[MAX_ARGS];
	char names[TL_CAT_MAX][32];
	size_t n = 0;

	if (r->n == 1)
		state_slice(p, &r->first);
	if (r->n < 2) {
		r->n = 0;
		return;
	}
	a[n++] = (struct arg){ .name = "states", .kind = A_U64, .u = r->n };
	for (int c = 0; c < TL_CAT_MAX && n < MAX_ARGS; c++) {
		if (!r->ns[c])
			continue;
		snprintf(names[c], sizeof(names[c]), "%s_ns", tl_cat_name((enum tl_cat)c));
		a[n++] = (struct arg){ .name = names[c], .kind = A_U64, .u = r->ns[c] };
	}
	slice(p, thread_track(p, th->pid, th->tid, th->comm), "states under 10 us", r->first.start, r->end, a, n, 0,
	      0);
	p->st.merged_states += r->n;
	p->st.merged_slices++;
	memset(r->ns, 0, sizeof(r->ns));
	r->n = 0;
}

/* The thread's run, made if it has none; NULL: out of memory. */
static struct short_run *run_of(struct pf *p, const struct tl_thread *th, bool make)
{
	__u64 key = (__u64)(uintptr_t)th, i;
	struct short_run *n;

	if (htab_u64__get(&p->run_of, key, &i))
		return &p->runs[i];
	if (!make)
		return NULL;
	n = reallocarray(p->runs, p->nruns + 1, sizeof(*n));
	if (!n || htab_u64__put(&p->run_of, key, p->nruns)) {
		if (n)
			p->runs = n;
		p->err = -ENOMEM;
		return NULL;
	}
	p->runs = n;
	memset(&p->runs[p->nruns], 0, sizeof(*p->runs));
	return &p->runs[p->nruns++];
}

/* A thread state: a slice, or, shorter than SHORT_STATE_NS, into the
 * thread's run of short states (written when a longer state or a gap
 * ends it). */
static void on_span(void *ctx, const struct tl_span *s)
{
	struct pf *p = ctx;
	struct short_run *r;

	if (p->err)
		return;
	p->st.states++;
	r = run_of(p, s->thread, s->end - s->start < SHORT_STATE_NS);
	if (r && r->n && r->end != s->start)
		run_flush(p, r);
	if (s->end - s->start >= SHORT_STATE_NS) {
		if (r)
			run_flush(p, r);
		state_slice(p, s);
		return;
	}
	if (!r)
		return;
	if (!r->n)
		r->first = *s;
	r->end = s->end;
	r->n++;
	r->ns[s->cat] += s->end - s->start;
}

/* NVTX: pushed ranges nest on the thread's NVTX track; a start/end range
 * has a track of its own under its process (they may overlap without
 * nesting); marks are instants. */
static void on_nvtx(struct pf *p, const struct pass_event *e, const struct tl_thread *th)
{
	const struct isr_ev_nvtx *n = (const void *)e->h;
	char name[ISR_NVTX_NAME_LEN];
	__u64 t;

	if (!th)
		return;
	memcpy(name, n->name, sizeof(name));
	name[sizeof(name) - 1] = '\0';
	switch (n->kind) {
	case ISR_NVTX_PUSH:
		event(p, thread_child(p, TK_NVTX, th->pid, th->tid, th->comm), e->start,
		      PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN, name[0] ? name : "(unnamed)", NULL, 0, 0, 0);
		break;
	case ISR_NVTX_POP:
		event(p, thread_child(p, TK_NVTX, th->pid, th->tid, th->comm), e->start,
		      PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END, NULL, NULL, 0, 0, 0);
		p->st.slices++;
		break;
	case ISR_NVTX_START:
	case ISR_NVTX_END:
		t = track(p, TK_NVTX_RANGE, th->pid, n->id, process_track(p, th->pid), n->kind == ISR_NVTX_START && name[0] ?
			  name : "NVTX range");
		event(p, t, e->start, n->kind == ISR_NVTX_START ? PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN :
		      PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END, n->kind == ISR_NVTX_START ?
		      (name[0] ? name : "(unnamed)") : NULL, NULL, 0, 0, 0);
		if (n->kind == ISR_NVTX_END)
			p->st.slices++;
		break;
	case ISR_NVTX_MARK:
		instant(p, thread_child(p, TK_NVTX, th->pid, th->tid, th->comm), name[0] ? name : "(unnamed)", e->start,
			NULL, 0);
		break;
	default:
		break;
	}
}

/* A page fault whose start was seen: a slice on its thread's faults. */
static void on_page_fault(struct pf *p, const struct pass_event *e, const struct tl_thread *th)
{
	const struct isr_ev_page_fault *f = (const void *)e->h;
	struct arg a = { .name = "address", .kind = A_PTR, .u = f->address };

	if (th && (f->flags & ISR_FAULT_HAS_START))
		slice(p, thread_child(p, TK_FAULTS, th->pid, th->tid, th->comm),
		      f->flags & ISR_FAULT_MAJOR ? "major fault" : "minor fault", e->start, e->end, &a, 1, 0, 0);
}

/* --gil's wait for the GIL: an acquire that waited. */
static void on_gil(struct pf *p, const struct pass_event *e, const struct tl_thread *th)
{
	const struct isr_ev_gil *g = (const void *)e->h;

	if (th && g->kind == ISR_GIL_ACQUIRE && e->end > e->start)
		slice(p, thread_child(p, TK_GIL, th->pid, th->tid, th->comm), "GIL wait", e->start, e->end, NULL, 0, 0,
		      0);
}

/* A thread blocked on the GIL, with its holder when known: inside --gil's
 * wait of the same take, when both are on, nested. */
static void on_gil_wait(struct pf *p, const struct pass_event *e, const struct tl_thread *th)
{
	const struct isr_ev_gil_wait *g = (const void *)e->h;
	struct arg a = { .name = "gil_holder", .kind = A_U64, .u = g->holder_tid };

	if (th && e->end > e->start)
		slice(p, thread_child(p, TK_GIL, th->pid, th->tid, th->comm), "GIL blocked", e->start, e->end, &a,
		      (g->flags & ISR_GIL_WAIT_HOLDER) ? 1 : 0, 0, 0);
}

static void ignored(struct pf *p, const struct pass_event *e, const struct tl_thread *th)
{
	(void)p;
	(void)e;
	(void)th;
}

/* What the trace makes of each event type (format/registry.h,
 * ISR_EV_EVERY_TYPE); device memory is devmem's counter, of every event. */
#define ON_TYPE(X)												\
	/* slices, instants and flows of their own */								\
	X(CUDA_CALL, on_cuda_call) X(PAGE_FAULT, on_page_fault) X(GIL, on_gil) X(GIL_WAIT, on_gil_wait)		\
	X(PY_SAMPLE, on_py_sample) X(NCCL_CALL, on_nccl_call) X(NCCL_COMM, on_nccl_comm)			\
	X(NVTX, on_nvtx) X(GPU_KERNEL, on_gpu_kernel) X(GPU_MEMCPY, on_gpu_memcpy)				\
	X(GPU_MEMSET, on_gpu_memset) X(GPU_API, on_gpu_api)							\
	/* the thread states: the timeline's spans (on_span) */							\
	X(SCHED_SWITCH, ignored) X(SCHED_WAKEUP, ignored) X(SCHED_WAKEUP_NEW, ignored)				\
	X(PROC_FORK, ignored) X(PROC_EXEC, ignored) X(PROC_EXIT, ignored) X(TASK_RENAME, ignored)		\
	X(PROC_HOLD, ignored) X(RECLAIM, ignored)								\
	/* names and stacks, read through the analysis */							\
	X(CUDA_NAME, ignored) X(GPU_NAME, ignored) X(PY_STACK, ignored) X(PY_CODE, ignored)			\
	X(PY_STATUS, ignored) X(TASK_INFO, ignored) X(RANK_ENV, ignored)					\
	/* in the report only */										\
	X(SAMPLING, ignored) X(MEM_SAMPLE, ignored) X(GPU_SYNC, ignored) X(GPU_CLOCK, ignored)			\
	X(GPU_STATUS, ignored) X(GPU_WINDOW, ignored)
static void (*const on_type[ISR_EV_TYPE_MAX])(struct pf *p, const struct pass_event *e,
					      const struct tl_thread *th) = { ON_TYPE(ISR_EV_ENTRY) };
ISR_EV_EVERY_TYPE(ON_TYPE);

static void on_event(void *ctx, const struct pass_event *e, const struct tl_thread *th)
{
	struct pf *p = ctx;
	__u32 pid;
	__u64 live;
	int r;

	if (p->err)
		return;
	p->st.events++;
	on_type[e->h->type](p, e, th);
	r = devmem__event(p->dm, e->h, e->tasks, &pid, &live);
	if (r < 0)
		p->err = r;
	else if (r)
		counter(p, process_counter(p, TK_MEMORY, pid, 0, track_names[TK_MEMORY]), e->start, (double)live);
}

/* The steps (analysis/model/steps.h) on a track of their process: one slice a
 * step, with its duration against the median. */
static void steps_events(struct pf *p)
{
	const struct steps_result *r = steps__result(p->a->ex->steps);
	char name[96];
	__u64 t;

	if (!r->count)
		return;
	snprintf(name, sizeof(name), "steps (%s%s)", r->source == STEPS_INFERRED ? "inferred from " : "NVTX ", r->name);
	t = track(p, TK_STEPS, r->pid, 0, process_track(p, r->pid), name);
	for (size_t i = 0; i < r->count; i++) {
		const struct step *st = &r->steps[i];
		struct arg a[3] = {
			{ .name = "duration_ms", .kind = A_DBL, .d = (double)(st->end - st->start) / 1e6 },
			{ .name = "ratio_to_median", .kind = A_DBL,
			  .d = r->median_ns ? (double)(st->end - st->start) / (double)r->median_ns : 0 },
			{ .name = "launches", .kind = A_U64, .u = st->launches },
		};
		char sname[32];

		snprintf(sname, sizeof(sname), "step %zu", st->index);
		slice(p, t, sname, st->start, st->end, a, 3, 0, 0);
	}
}

/* Each idle gap of a device: a slice named by its largest cause, and the
 * busy counter down at its start and up at its end. */
static void on_gap(void *ctx, const struct tl_gap *g, const __u64 split[CAUSE_MAX])
{
	struct pf *p = ctx;
	struct arg a[MAX_ARGS];
	size_t n = 0;
	int top = -1;
	char name[96], busy[32];
	__u64 bt;

	if (p->err)
		return;
	for (int c = 0; c < CAUSE_MAX; c++)
		if (split[c] && (top < 0 || split[c] > split[top]))
			top = c;
	for (int c = 0; c < CAUSE_MAX && n < MAX_ARGS; c++)
		if (split[c])
			a[n++] = (struct arg){ .name = cause_name((enum cause)c), .kind = A_DBL, .d = split[c] / 1e6 };
	snprintf(name, sizeof(name), "GPU idle: %s", g->leading ? "before its first work" :
						     top < 0 ? "unknown" : cause_label((enum cause)top));
	slice(p, device_track(p, g->pid, g->device), name, g->start, g->end, a, n, 0, 0);
	snprintf(busy, sizeof(busy), "GPU %u busy", g->device);
	bt = process_counter(p, TK_BUSY, g->pid, g->device, busy);
	counter(p, bt, g->start, 0);
	if (!g->trailing)
		counter(p, bt, g->end, 1);
}

static void findings_events(struct pf *p, const struct findings *fs, __u64 id, const char *name)
{
	__u64 t;

	if (!fs->n)
		return;
	t = track(p, TK_FINDINGS, 0, id, 0, name);
	for (size_t i = 0; i < fs->n; i++) {
		const struct finding *f = &fs->v[i];
		struct arg a[4] = {
			{ .name = "rule", .kind = A_STR, .s = f->rule },
			{ .name = "severity", .kind = A_STR, .s = finding_severity_name(f->severity) },
			{ .name = "cost_s", .kind = A_DBL, .d = f->cost_s },
			{ .name = "summary", .kind = A_STR, .s = f->summary },
		};

		instant(p, t, explain__rule_title(f->rule), pass__start(p->pass), a, 4);
	}
}

/* What a recording's part of the trace needs, freed before the next. */
static void pf_free_recording(struct pf *p)
{
	attribution__free(p->attr);
	timeline__free(p->tl);
	pass__free(p->pass);
	devmem__free(p->dm);
	free(p->py);
	free(p->rates);
	free(p->nccl);
	free(p->runs);
	htab__free(&p->run_of);
	memset(&p->run_of, 0, sizeof(p->run_of));
	p->runs = NULL;
	p->nruns = 0;
	p->attr = NULL;
	p->tl = NULL;
	p->pass = NULL;
	p->dm = NULL;
	p->py = NULL;
	p->rates = NULL;
	p->nccl = NULL;
	p->npy = p->nrates = p->nnccl = 0;
	p->next_arrival = 0;
}

static void pf_free(struct pf *p)
{
	size_t pos = 0;
	struct interned *e;

	for (int k = 0; k < 2; k++) {
		struct htab *t = k ? &p->arg_names : &p->names;

		pos = 0;
		while ((e = htab__next(t, &pos))) {
			free(e->s);
			free(e->text);
		}
		htab__free(t);
	}
	htab__free(&p->tracks);
	pf_free_recording(p);
	free(p->chunk.v);
	free(p->out.v);
	free(p->z);
}

/* The part of the trace of the recording that p->a is, written from a
 * pass of its own. set_findings: the findings of several recordings
 * together, written before the first's (NULL: none). */
static void write_recording(struct pf *p, const struct findings *set_findings)
{
	const struct analysis *a = p->a;
	struct attr_gap_hook hook = { .ctx = p, .gap = on_gap };
	struct pass_event ev;
	char name[320];
	int n;

	/* a second pass: the first (the analysis) found the findings it marks */
	p->err = pass__reopen(a->pass, &p->pass, p->errmsg, sizeof(p->errmsg));
	if (p->err)
		fprintf(stderr, "inferscope-bpf: cannot read the recording%s%s again for the trace: %s\n",
			p->rec_name ? " " : "", p->rec_name ? p->rec_name : "", p->errmsg);
	if (!p->err) {
		p->tl = timeline__new(p->pass, a->r);
		p->attr = p->tl ? attribution__new(p->tl, p->pass) : NULL;
		p->dm = devmem__new();
		if (!p->attr || !p->dm)
			p->err = -ENOMEM;
	}
	p->obs = (struct tl_observer){ .ctx = p, .span = on_span, .event = on_event };
	if (!p->err)
		p->err = timeline__observe(p->tl, attribution__observer(p->attr));
	if (!p->err)
		p->err = timeline__observe(p->tl, &p->obs);
	if (!p->err) {
		attribution__on_gap(p->attr, &hook);
		for (size_t i = 0; i < a->r->process_count; i++)
			process_track(p, a->r->processes[i].pid);
		if (set_findings)
			findings_events(p, set_findings, 1, "inferscope-bpf findings across the recordings");
		if (p->rec_name)
			snprintf(name, sizeof(name), "%s: %s", track_names[TK_FINDINGS], p->rec_name);
		findings_events(p, &a->ex->findings, 0, p->rec_name ? name : track_names[TK_FINDINGS]);
	}
	while (!p->err && (n = pass__next(p->pass, &ev)) > 0)
		p->err = timeline__event(p->tl, &ev);
	if (!p->err)
		p->err = timeline__finish(p->tl);
	for (size_t i = 0; i < p->nruns && !p->err; i++)
		run_flush(p, &p->runs[i]);
	for (size_t i = 0; i < p->npy && !p->err; i++)
		py_close(p, &p->py[i], 0, p->py[i].last + PY_TAIL_NS);
	for (size_t i = 0; i < p->nrates && !p->err; i++)
		rate_flush(p, &p->rates[i], UINT64_MAX);
	for (size_t i = 0; i < p->nnccl && !p->err; i++)
		nccl_close(p, &p->nccl[i], UINT64_MAX);
	if (!p->err)
		steps_events(p);
}

static void pf_init(struct pf *p, FILE *f)
{
	*p = (struct pf){ .f = f, .first = true };
	htab__init(&p->names, sizeof(struct interned), interned_hash, interned_equal);
	htab__init(&p->arg_names, sizeof(struct interned), interned_hash, interned_equal);
}

static int pf_finish(struct pf *p, struct perfetto_stats *stats)
{
	int err;

	flush_chunk(p);
	err = p->err;
	if (!err && (fflush(p->f) == EOF || ferror(p->f)))
		err = -EIO;
	if (stats)
		*stats = p->st;
	pf_free(p);
	return err;
}

int perfetto__write(FILE *f, const struct analysis *a, struct perfetto_stats *stats)
{
	struct pf p;

	pf_init(&p, f);
	p.a = a;
	p.ranks = a->ranks;
	write_recording(&p, NULL);
	return pf_finish(&p, stats);
}

int perfetto__write_set(FILE *f, const struct analysis_set *set, struct perfetto_stats *stats)
{
	struct ranks_clock c0, ci;
	struct pf p;

	pf_init(&p, f);
	if (set->n > (size_t)INT32_MAX / PASS_PID_LIMIT) {
		fprintf(stderr, "inferscope-bpf: a trace holds at most %zu recordings, not %zu: give fewer\n",
			(size_t)INT32_MAX / PASS_PID_LIMIT, set->n);
		p.err = -E2BIG;
	}
	if (set->n)
		ranks__clock(set->a[0]->r, &c0);
	for (size_t i = 0; i < set->n && !p.err; i++) {
		ranks__clock(set->a[i]->r, &ci);
		p.a = set->a[i];
		p.ranks = set->ranks;
		p.source = i;
		p.rec_name = set->names[i];
		p.id_base = (__u32)(i * PASS_PID_LIMIT);
		p.shift_ns = ci.offset_ns - c0.offset_ns;
		/* the tracks of each recording: its own (their uuids stay unique) */
		htab__free(&p.tracks);
		memset(&p.tracks, 0, sizeof(p.tracks));
		write_recording(&p, i == 0 ? &set->findings : NULL);
		if (!p.err)
			pf_free_recording(&p);
	}
	return pf_finish(&p, stats);
}

int report__write_perfetto(FILE *f, const struct analysis *a)
{
	return perfetto__write(f, a, NULL);
}

int report__write_perfetto_set(FILE *f, const struct analysis_set *set)
{
	return perfetto__write_set(f, set, NULL);
}
