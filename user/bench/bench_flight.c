// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* What the flight recorder's ring costs (user/bench/bench_flight.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "bench_flight.h"
#include "clock.h"
#include "cuda_funcs.h"
#include "events.h"
#include "isr_format.h"
#include "rec_writer.h"

#define SIM_SECONDS	60
#define WINDOW_NS	3000000000ULL
#define SEAL_NS		(WINDOW_NS / 10)	/* the recorder's cadence (user/record/recorder.c) */

static double cpu_ns(void)
{
	return (double)clock__now_ns(CLOCK_THREAD_CPUTIME_ID);
}

/* rate events a second for SIM_SECONDS of simulated time: a result, or NULL. */
static json_t *ring_at(const char *dir, double rate)
{
	struct rec_writer_opts o = { .zstd_level = 1, .ring_window_ns = WINDOW_NS, .ring_max_bytes = 1ULL << 30 };
	struct isr_ev_cuda_call call;
	struct isr_ev_sched_switch sw;
	struct rec_ring_stats st;
	struct rec_window win;
	struct rec_props *host = NULL;
	struct rec_writer *w;
	__u64 t = 1000000000ULL, step = (__u64)(1e9 / rate), next_seal = t, n = 0, end = t + SIM_SECONDS * 1000000000ULL;
	size_t peak = 0;
	double c0, c1, w0, w1;
	char path[512];
	int e = 0;

	w = rec_writer__open_ring(&o);
	if (!w) {
		fprintf(stderr, "bench: flight: cannot open a ring: %s\n", strerror(errno));
		return NULL;
	}
	memset(&call, 0, sizeof(call));
	call.hdr.type = ISR_EV_CUDA_CALL;
	call.hdr.size = sizeof(call);
	call.hdr.pid = call.hdr.tid = 4242;
	call.func = ISR_CUDA_FN_cuLaunchKernel;
	call.args[0] = 0x7f00deadb000ULL;
	memset(&sw, 0, sizeof(sw));
	sw.hdr.type = ISR_EV_SCHED_SWITCH;
	sw.hdr.size = sizeof(sw);
	sw.hdr.pid = sw.hdr.tid = 4242;
	c0 = cpu_ns();
	for (; t < end && !e; t += step, n++) {
		if (n & 1) {
			sw.hdr.ts_ns = t;
			sw.hdr.cpu = (__u32)(n >> 7) & 1;
			sw.next_tid = (n >> 3) & 1 ? 4242 : 0;
			e = rec_writer__append_event(w, &sw, sizeof(sw));
		} else {
			call.hdr.ts_ns = t;
			call.args[1] = (n >> 1) | 1ULL << 32;
			call.args[2] = 1 | 128ULL << 32;
			e = rec_writer__append_event(w, &call, sizeof(call));
		}
		if (!e && t >= next_seal) {
			next_seal = t + SEAL_NS;
			e = rec_writer__flush(w);
			rec_writer__ring_trim(w, t);
			rec_writer__ring_stats(w, &st);
			peak = st.bytes > peak ? st.bytes : peak;
		}
	}
	c1 = cpu_ns();
	snprintf(path, sizeof(path), "%s/flight-bench.isr", dir);
	host = rec_props__new();
	e = e ?: host ? rec_props__add_u64(host, ISR_PROP_HOST_START_MONO_NS, t - WINDOW_NS) : -ENOMEM;
	w0 = (double)clock__mono_ns();
	e = e ?: rec_writer__write_window(w, path, host, t, ISR_STOP_FLIGHT_TRIGGER, &win);
	w1 = (double)clock__mono_ns();
	unlink(path);
	rec_props__free(host);
	rec_writer__free(w);
	if (e) {
		fprintf(stderr, "bench: flight: the ring at %.0f events/s failed: %s\n", rate, strerror(-e));
		return NULL;
	}
	return json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:I}", "events_per_s", rate, "window_s",
			 WINDOW_NS / 1e9, "ring_mib", peak / 1048576.0, "bytes_per_event", peak / (rate * WINDOW_NS / 1e9),
			 "cpu_ns_per_event", (c1 - c0) / n, "cpu_pct_per_s", (c1 - c0) / n * rate / 1e7,
			 "write_window_ms", (w1 - w0) / 1e6, "window_events", (json_int_t)win.events);
}

json_t *bench_flight__run(const char *dir)
{
	static const double rates[] = { 10000, 100000, 1000000 };
	json_t *all = json_array();

	for (size_t i = 0; all && i < sizeof(rates) / sizeof(rates[0]); i++) {
		json_t *r = ring_at(dir, rates[i]);

		if (!r) {
			json_decref(all);
			return NULL;
		}
		json_array_append_new(all, r);
	}
	return all;
}
