// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The flight recorder's live checks (user/record/flight.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "flight.h"
#include "registry.h"

void flight_check__init(struct flight_check *fc, const struct flight_triggers *trig, __u64 drops_now)
{
	memset(fc, 0, sizeof(*fc));
	fc->trig = *trig;
	fc->drops_seen = drops_now;
}

static bool check_sync(const struct flight_check *fc, const struct isr_ev_hdr *h, char *why, size_t len)
{
	const struct isr_ev_cuda_call *c = (const void *)h;

	if (c->duration_ns < fc->trig.sync_ns || !isr_cuda_is(c->func, ISR_CUDA_K_SYNC))
		return false;
	snprintf(why, len, "sync: %s took %.1f ms (pid %u, tid %u)", isr_cuda_fn(c->func)->symbol,
		 c->duration_ns / 1e6, h->pid, h->tid);
	return true;
}

static bool check_gpu_idle(struct flight_check *fc, const struct isr_ev_hdr *h, char *why, size_t len)
{
	struct isr_gpu_work w;
	__u64 start, end, gap;
	size_t i;

	if (!isr_ev_gpu_work(h, &w))
		return false;
	start = w.start_ns;
	end = w.end_ns;
	for (i = 0; i < fc->ngpu && fc->gpu[i].pid != h->pid; i++)
		;
	if (i == fc->ngpu) {
		if (fc->ngpu == FLIGHT_GPU_PIDS)
			return false;	/* followed processes only: the check stays cheap */
		fc->gpu[fc->ngpu].pid = h->pid;
		fc->gpu[fc->ngpu++].end = end;
		return false;
	}
	gap = start > fc->gpu[i].end ? start - fc->gpu[i].end : 0;
	if (end > fc->gpu[i].end)
		fc->gpu[i].end = end;
	if (gap < fc->trig.gpu_idle_ns)
		return false;
	snprintf(why, len, "gpu-idle: the GPU of pid %u was idle %.1f ms", h->pid, gap / 1e6);
	return true;
}

bool flight_check__event(struct flight_check *fc, const struct isr_ev_hdr *h, size_t size, char *why,
			 size_t len)
{
	if (!isr_event_usable(h, size))
		return false;
	if (fc->trig.sync_ns && h->type == ISR_EV_CUDA_CALL)
		return check_sync(fc, h, why, len);
	if (fc->trig.gpu_idle_ns)
		return check_gpu_idle(fc, h, why, len);
	return false;
}

bool flight_check__drops(struct flight_check *fc, __u64 drops_total, char *why, size_t len)
{
	__u64 burst = drops_total > fc->drops_seen ? drops_total - fc->drops_seen : 0;

	fc->drops_seen = drops_total;
	if (!fc->trig.drop_burst || burst < fc->trig.drop_burst)
		return false;
	snprintf(why, len, "drops: %llu events lost within a second", (unsigned long long)burst);
	return true;
}

int flight__window_path(const char *base, unsigned int n, char *out, size_t len)
{
	size_t bl = strlen(base);
	int w;

	if (bl > 4 && strcmp(base + bl - 4, ".isr") == 0)
		w = snprintf(out, len, "%.*s.%u.isr", (int)(bl - 4), base, n);
	else
		w = snprintf(out, len, "%s.%u", base, n);
	return w < 0 || (size_t)w >= len ? -ENAMETOOLONG : 0;
}

bool flight__name_taken(const char *path, int err)
{
	struct stat st;

	return (err == -ELOOP || err == -EISDIR || err == -EINVAL) && lstat(path, &st) == 0 &&
	       !S_ISREG(st.st_mode) && !S_ISCHR(st.st_mode);
}

int flight__parse_trigger(const char *arg, struct flight_triggers *trig)
{
	static const struct {
		const char *name;
		size_t off;
		double scale;	/* what one unit of the value is */
	} kinds[] = {
		{ "sync=", offsetof(struct flight_triggers, sync_ns), 1e6 },
		{ "gpu-idle=", offsetof(struct flight_triggers, gpu_idle_ns), 1e6 },
		{ "drops=", offsetof(struct flight_triggers, drop_burst), 1 },
	};
	char *end;

	if (strcmp(arg, "none") == 0) {
		memset(trig, 0, sizeof(*trig));
		return 0;
	}
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		size_t nl = strlen(kinds[i].name);
		unsigned long long v;

		if (strncmp(arg, kinds[i].name, nl) != 0)
			continue;
		errno = 0;
		v = strtoull(arg + nl, &end, 10);
		if (errno || end == arg + nl || *end || arg[nl] == '-' || v > 1000000000ULL)
			return -EINVAL;
		*(__u64 *)((char *)trig + kinds[i].off) = (__u64)(v * kinds[i].scale);
		return 0;
	}
	return -EINVAL;
}
