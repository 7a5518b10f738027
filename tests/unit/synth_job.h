/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A fixed synthetic training job for the output tests (HTML, Perfetto,
 * diff): one process, a launching thread and a helper, two kernels per
 * step on one GPU stream, a copy, device memory, Python stacks, a GIL wait
 * and a page fault. With sync_stall planted, each step synchronizes after
 * its kernels and then spends 10 ms on the host before the next launches.
 * Include after synth.h.
 */
#ifndef INFERSCOPE_TEST_SYNTH_JOB_H
#define INFERSCOPE_TEST_SYNTH_JOB_H

#define JOB_MS		1000000ULL
#define JOB_T0		(1000 * JOB_MS)
#define JOB_PID		100
#define JOB_LAUNCHER	101
#define JOB_HELPER	102

static inline struct synth *synth_job(bool sync_stall, const char *comm)
{
	const __u32 tids[] = { JOB_LAUNCHER, JOB_HELPER };
	const char *const comms[] = { comm, "augment" };
	const __u64 code[2] = { 0x7f0000001000ULL, 0x7f0000002000ULL };
	__u64 period = (sync_stall ? 30 : 20) * JOB_MS;
	struct synth *b = synth__new(JOB_T0, JOB_T0 + 1000 * JOB_MS);
	__u32 corr = 1;

	synth__process(b, JOB_PID, "python3", 2, tids, comms);
	b->rec.processes[0].cmdline = strdup("python3 train.py --steps 50");
	ev_gpu_clock(b, JOB_T0 + 1 * JOB_MS, JOB_PID);
	ev_gpu_clock(b, JOB_T0 + 999 * JOB_MS, JOB_PID);
	/* the bridge's answer to the tracer's last flush: every record came */
	ev_gpu_flushed(b, JOB_T0 + 1000 * JOB_MS, JOB_PID);
	ev_gpu_name(b, JOB_T0 + 2 * JOB_MS, JOB_PID, 1, "_Z11gemm_kernelPfS_i");
	ev_gpu_name(b, JOB_T0 + 2 * JOB_MS, JOB_PID, 2, "relu_kernel");
	ev_py_code(b, JOB_T0, JOB_PID, code[0], "/home/u/train.py", "train_step", 40);
	ev_py_code(b, JOB_T0, JOB_PID, code[1], "/home/u/train.py", "main", 90);
	ev_py_stack(b, JOB_T0, JOB_PID, 1, 2, code);
	ev_py_stack(b, JOB_T0, JOB_PID, 2, 1, &code[1]);
	ev_mem(b, JOB_T0 + 3 * JOB_MS, JOB_PID, ISR_CUDA_FN_cuMemAlloc_v2, 0, 0x7000000000ULL, 256 * MIB);
	ev_mem(b, JOB_T0 + 500 * JOB_MS, JOB_PID, ISR_CUDA_FN_cuMemAlloc_v2, 0, 0x7100000000ULL, 64 * MIB);
	ev_mem(b, JOB_T0 + 700 * JOB_MS, JOB_PID, ISR_CUDA_FN_cuMemFree_v2, 0, 0x7100000000ULL, 0);
	for (__u64 t = JOB_T0 + 10 * JOB_MS; t + period <= JOB_T0 + 990 * JOB_MS; t += period) {
		/* gemm for 15 ms, relu right after it for 4.5 ms */
		gpu_launch(b, t, JOB_PID, JOB_LAUNCHER, corr++, 20 * (long long)SYNTH_US, 15 * JOB_MS, 1);
		gpu_launch(b, t + 100 * SYNTH_US, JOB_PID, JOB_LAUNCHER, corr++, 15000 * (long long)SYNTH_US,
			   4500 * SYNTH_US, 2);
		ev_py_sample(b, t + 1 * JOB_MS, JOB_PID, JOB_LAUNCHER, 1, ISR_PY_KIND_TIMER);
		ev_py_sample(b, t + 11 * JOB_MS, JOB_PID, JOB_LAUNCHER, 1, ISR_PY_KIND_TIMER);
		ev_py_sample(b, t + 5 * JOB_MS, JOB_PID, JOB_HELPER, 2, ISR_PY_KIND_TIMER);
		if (sync_stall) {
			/* returns when relu ends (t + 19.72 ms), then 10 ms of host work */
			ev_call(b, t + 200 * SYNTH_US, JOB_PID, JOB_LAUNCHER, ISR_CUDA_FN_cuCtxSynchronize_v2, 0,
				19520 * SYNTH_US + 5 * SYNTH_US);
			ev_switch(b, t + 210 * SYNTH_US, JOB_PID, JOB_LAUNCHER, 0, 0, 0x1, 0);
			ev_wakeup_by(b, t + 19720 * SYNTH_US, JOB_PID, JOB_LAUNCHER, 0, 0);
			ev_switch(b, t + 19720 * SYNTH_US, 0, 0, JOB_PID, JOB_LAUNCHER, 0, 0);
			ev_py_sample(b, t + 25 * JOB_MS, JOB_PID, JOB_LAUNCHER, 1, ISR_PY_KIND_TIMER);
		}
	}
	{
		struct isr_ev_gpu_memcpy *m = synth__event(b, ISR_EV_GPU_MEMCPY, sizeof(*m), JOB_T0 + 990 * JOB_MS,
							   JOB_PID, JOB_PID);

		m->start_ns = JOB_T0 + 4 * JOB_MS + GPU_AHEAD;
		m->end_ns = m->start_ns + 5 * JOB_MS;
		m->bytes = 64 * MIB;
		m->copy_kind = 1;
		m->src_kind = 3;
		m->dst_kind = 2;
		m->stream_id = 7;
	}
	ev_gil(b, JOB_T0 + 600 * JOB_MS, JOB_PID, JOB_HELPER, ISR_GIL_ACQUIRE, 3 * JOB_MS);
	ev_fault(b, JOB_T0 + 300 * JOB_MS, JOB_PID, JOB_HELPER, 2 * JOB_MS, ISR_FAULT_MAJOR | ISR_FAULT_HAS_START);
	return b;
}

#endif
