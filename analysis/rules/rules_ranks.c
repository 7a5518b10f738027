// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * nccl_straggler: the rank whose late arrivals at NCCL collectives kept the
 * others waiting, with the host reason from its own timeline. A rule of
 * ranks: it needs every rank's calls, which one recording may not hold, so
 * it finishes on the ranks lined up (analysis/rules/ranks.h) once each
 * recording is explained, one recording's or several's.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include "rules.h"

static double share(const struct tl_acc *a, enum tl_cat c)
{
	__u64 t = tl_acc__total(a);

	/* waiting for a CPU: inside a call too (a synchronization preempted
	 * is a wait for the CPU, which the straggler's reason is about) */
	return t ? (double)(c == TL_RUNQUEUE ? a->cpu_wait_ns : a->ns[c]) / (double)t : 0;
}

/* The category the straggler's late windows had most more of than the
 * others' windows, in share of the window; waiting for a CPU counted
 * inside calls too (share()): a straggler preempted while it spun in a
 * synchronization waited for its CPU, not for its GPU. */
static enum tl_cat reason_of(const struct rank_row *row, const struct tl_acc *others)
{
	enum tl_cat best = TL_UNKNOWN;
	double best_d = 0;

	/* none when no category has more of the straggler's windows than of
	 * the others' (its timeline unknown there: no scheduling events) */
	for (int c = 0; c < TL_CAT_MAX; c++) {
		double d = share(&row->when_late, (enum tl_cat)c) - share(others, (enum tl_cat)c);

		if (c != TL_UNKNOWN && d > best_d) {
			best_d = d;
			best = (enum tl_cat)c;
		}
	}
	return best;
}

/* The cost's measures, said: which each late arrival had (ranks.h). */
static void say_cost(struct finding *f, const struct rank_row *row)
{
	const char *sep = "";

	finding__say(f, " Of that wait, %.3f s held the job back (the finding's cost), measured ", row->cost_ns / 1e9);
	if (row->cost_by_gpu) {
		finding__say(f, "on the GPU at %llu late arrivals (how much longer the other ranks' NCCL kernels ran "
			     "than its own)", (unsigned long long)row->cost_by_gpu);
		sep = "; ";
	}
	if (row->cost_by_steps) {
		finding__say(f, "%sby the first rank's steps at %llu (how much longer its step from there to the next "
			     "collective was than its median step after on-time ones, %.2f ms)", sep,
			     (unsigned long long)row->cost_by_steps, row->cost_step_base_ns / 1e6);
		sep = "; ";
	}
	if (row->cost_by_arrival)
		finding__say(f, "%sby the wait itself at %llu (nothing better measured)", sep,
			     (unsigned long long)row->cost_by_arrival);
	finding__say(f, ".");
}

/* The advice, by the reason. */
static void suggest(struct finding *f, const struct rank_row *row, enum tl_cat cat)
{
	switch (cat) {
	case TL_RUNQUEUE:
		finding__suggest(f, "Give rank %d's calling thread a CPU of its own: move what competes with it "
				 "(the tasks named) elsewhere, or pin the ranks to separate cores (taskset, "
				 "the launcher's --cpu-bind).", row->rank);
		break;
	case TL_BLOCKED:
	case TL_IO:
		finding__suggest(f, "Rank %d's calling thread sleeps or waits before its collectives where the others "
				 "do not: look at what it waits for there (data loading, I/O, a lock, a sleep) in its "
				 "timeline.", row->rank);
		break;
	case TL_UNKNOWN:
		finding__suggest(f, "Rank %d's timeline does not tell why it came late: look at its own findings, or "
				 "record its host with the scheduler's events (not left out).", row->rank);
		break;
	default:
		finding__suggest(f, "Rank %d has more host work before its collectives than the others: balance the "
				 "work between ranks or look at its own findings.", row->rank);
		break;
	}
}

/* The straggler's finding being made: its row and the reason. */
struct fold_ctx {
	const struct ranks *r;
	const struct rank_row *row;
	enum tl_cat cat;
};

static bool is_rank_thread(const struct ranks *r, __u32 pid, __u32 tid)
{
	for (size_t i = 0; i < r->nrows; i++)
		if (r->rows[i].pid == pid && r->rows[i].tid == tid)
			return true;
	return false;
}

/* Whether finding f tells of the straggler's lateness again, so that it is
 * this finding's (one finding per cause):
 * - cpu_contention of its calling thread, when waiting for a CPU is why it
 *   came late: its thread alone, or a group whose wait is mostly (80%) its
 *   own;
 * - blocked_on_thread of another rank's calling thread, woken by it: the
 *   first rank's wait at the collectives, where the collective blocks. */
static bool folds(const struct finding *f, void *ctx)
{
	const struct fold_ctx *x = ctx;
	const struct rank_row *row = x->row;

	if (!strcmp(f->rule, "cpu_contention") && x->cat == TL_RUNQUEUE) {
		json_t *t;
		size_t i;

		if (f->tid)
			return f->pid == row->pid && f->tid == row->tid;
		json_array_foreach(json_object_get(f->evidence, "threads"), i, t)
			if (json_integer_value(json_object_get(t, "pid")) == row->pid &&
			    json_integer_value(json_object_get(t, "tid")) == row->tid)
				return row->cpu_wait_ns / 1e9 >= 0.8 * f->cost_s;
		return false;
	}
	if (!strcmp(f->rule, "blocked_on_thread"))
		return json_integer_value(json_object_get(f->evidence, "waker_pid")) == row->pid &&
		       f->pid != row->pid && is_rank_thread(x->r, f->pid, f->tid);
	return false;
}

/* Folds the findings that tell of the straggler's lateness (folds()) into
 * its finding, the last of out: named in its summary and evidence. */
static int fold(const struct ranks *r, const struct rank_row *row, enum tl_cat cat, struct findings *out)
{
	struct fold_ctx x = { .r = r, .row = row, .cat = cat };
	json_t *list = json_array();
	struct finding *f = &out->v[out->n - 1];
	const char *sep = " Folded into this finding, as the same cause: ";

	if (!list)
		return -ENOMEM;
	for (size_t i = 0; i + 1 < out->n; i++) {
		const struct finding *o = &out->v[i];
		json_t *e;

		if (!folds(o, &x))
			continue;
		e = json_object();
		if (!e || json_array_append_new(list, e)) {
			json_decref(list);
			return -ENOMEM;
		}
		ev_set(e, "rule", json_string(o->rule));
		ev_set(e, "cost_s", json_real(o->cost_s));
		ev_set(e, "pid", ev_u64(o->pid));
		ev_set(e, "tid", ev_u64(o->tid));
		if (o->tid)
			finding__say(f, "%s%s of thread %u", sep, o->rule, o->tid);
		else
			finding__say(f, "%s%s of %zu threads, its own among them", sep, o->rule,
				     json_array_size(json_object_get(o->evidence, "threads")));
		finding__say(f, ", %.3f s (%s)", o->cost_s,
			     !strcmp(o->rule, "cpu_contention") ? "its wait for a CPU in all" :
								   "a rank blocked in the collectives, waiting for it");
		sep = "; ";
	}
	if (json_array_size(list))
		finding__say(f, ". The job lost the cost above.");
	ev_set(f->evidence, "folded", list);
	findings__remove_if(out, folds, &x);
	return 0;
}

/* The rank that kept the others waiting most, when it did at least
 * NCCL_STRAGGLER_MIN_NS (of rows in rank order: the first of equals). */
static int straggler_finish(const struct ranks *r, struct findings *out)
{
	const struct rank_row *row = NULL;
	struct tl_acc others = { .cpu_wait_ns = 0 };
	__u64 all_collectives = 0, late_total = 0;
	struct finding *f;
	enum tl_cat cat;
	json_t *ev, *reason, *list;
	double job_s, others_gpu_s = 0;
	size_t others_gpu_n = 0;

	/* most cost, then most wait */
	for (size_t i = 0; i < r->nrows; i++)
		if (!row || r->rows[i].cost_ns > row->cost_ns ||
		    (r->rows[i].cost_ns == row->cost_ns && r->rows[i].late_ns > row->late_ns))
			row = &r->rows[i];
	for (size_t i = 0; i < r->ncomms; i++) {
		all_collectives += r->comms[i].collectives;
		late_total += r->comms[i].late;
	}
	if (!row || row->waited_ns < NCCL_STRAGGLER_MIN_NS || !row->late)
		return 0;
	for (size_t i = 0; i < r->nrows; i++)
		if (&r->rows[i] != row) {
			for (int c = 0; c < TL_CAT_MAX; c++)
				others.ns[c] += r->rows[i].when_on_time.ns[c];
			others.cpu_wait_ns += r->rows[i].when_on_time.cpu_wait_ns;
			/* the GPU side, where NCCL kernels were joined: a
			 * rank's kernels wait on the GPU for the last to arrive */
			if (r->rows[i].nccl_joined) {
				others_gpu_s += r->rows[i].nccl_gpu_ns / 1e9;
				others_gpu_n++;
			}
		}
	cat = reason_of(row, &others);
	job_s = row->cost_ns / 1e9;
	f = findings__add(out, "nccl_straggler", row->cost_ns < NCCL_STRAGGLER_MIN_NS ? SEV_INFO :
			  row->late * 2 >= late_total && row->late * 10 >= row->collectives ? SEV_CRITICAL : SEV_WARNING,
			  job_s, row->pid, row->tid);
	if (!f)
		return -ENOMEM;
	finding__say(f, "Rank %d (pid %u) arrived last at %llu of its %llu collectives, late by %.0f ms or more at "
		     "%llu of them: the first rank waited %.3f s for it in total, the other ranks %.3f s together.",
		     row->rank, row->pid, (unsigned long long)row->last, (unsigned long long)row->collectives,
		     NCCL_LATE_NS / 1e6, (unsigned long long)row->late, row->late_ns / 1e9, row->waited_ns / 1e9);
	say_cost(f, row);
	if (row->late_windows && cat == TL_UNKNOWN)
		finding__say(f, " Before those late arrivals its calling thread (tid %u) did nothing the other "
			     "ranks' did not, as far as its timeline tells (it does not cover %.0f%% of that time).",
			     row->tid, 100 * share(&row->when_late, TL_UNKNOWN));
	else if (row->late_windows) {
		finding__say(f, " Before those late arrivals (from the first rank's arrival to its own) its calling "
			     "thread (tid %u) was %s %.0f%% of the time", row->tid,
			     cause_label(cause_of_category(cat)), 100 * share(&row->when_late, cat));
		if (cat == TL_RUNQUEUE && row->nothers) {
			const struct ranks_other *o = &row->others[0];

			finding__say(f, " (pid %u `%s` had its CPU for %.3f s)", o->pid,
				     o->process_comm[0] ? o->process_comm : o->comm[0] ? o->comm : "?", o->ns / 1e9);
		}
		finding__say(f, "; the other ranks' calling threads, over as long before their own arrivals: %.0f%%.",
			     100 * share(&others, cat));
	}
	if (row->nccl_joined && others_gpu_n)
		finding__say(f, " On the GPU its NCCL kernels ran %.3f s, the other ranks' %.3f s on average: their "
			     "kernels waited there for it.", row->nccl_gpu_ns / 1e9, others_gpu_s / (double)others_gpu_n);
	suggest(f, row, cat);
	ev = f->evidence;
	ev_set(ev, "rank", json_integer(row->rank));
	ev_set(ev, "recording", ev_text(r->names[row->source] ? r->names[row->source] : "", SIZE_MAX));
	ev_set(ev, "collectives", ev_u64(row->collectives));
	ev_set(ev, "last_arrivals", ev_u64(row->last));
	ev_set(ev, "late_arrivals", ev_u64(row->late));
	ev_set(ev, "late_threshold_s", ev_seconds(NCCL_LATE_NS));
	ev_set(ev, "first_rank_wait_s", ev_seconds(row->late_ns));
	ev_set(ev, "cost_s", ev_seconds(row->cost_ns));
	list = json_object();
	ev_set(list, "gpu", ev_u64(row->cost_by_gpu));
	ev_set(list, "steps", ev_u64(row->cost_by_steps));
	ev_set(list, "arrival", ev_u64(row->cost_by_arrival));
	ev_set(ev, "cost_measured_by", list);
	ev_set(ev, "first_rank_step_base_s", row->cost_by_steps ? ev_seconds(row->cost_step_base_ns) : json_null());
	ev_set(ev, "others_wait_s", ev_seconds(row->waited_ns));
	ev_set(ev, "all_collectives", ev_u64(all_collectives));
	ev_set(ev, "nccl_gpu_s", row->nccl_joined ? ev_seconds(row->nccl_gpu_ns) : json_null());
	ev_set(ev, "others_nccl_gpu_s", others_gpu_n ? json_real(others_gpu_s / (double)others_gpu_n) : json_null());
	reason = json_object();
	ev_set(reason, "category", json_string(tl_cat_name(cat)));
	ev_set(reason, "cause", json_string(cause_name(cause_of_category(cat))));
	ev_set(reason, "share", json_real(share(&row->when_late, cat)));
	ev_set(reason, "others_share", json_real(share(&others, cat)));
	ev_set(reason, "windows", ev_u64(row->late_windows));
	ev_set(reason, "window_s", ev_seconds(tl_acc__total(&row->when_late)));
	list = json_array();
	for (size_t k = 0; k < row->nothers; k++) {
		json_t *o = json_object();

		ev_set(o, "pid", json_integer(row->others[k].pid));
		ev_set(o, "tid", json_integer(row->others[k].tid));
		ev_set(o, "comm", ev_text(row->others[k].comm, sizeof(row->others[k].comm)));
		ev_set(o, "process_comm", ev_text(row->others[k].process_comm, sizeof(row->others[k].process_comm)));
		ev_set(o, "seconds", ev_seconds(row->others[k].ns));
		json_array_append_new(list, o);
	}
	ev_set(reason, "cpu_taken_by", list);
	ev_set(ev, "reason", reason);
	return fold(r, row, cat, out);
}

const struct rule rule_nccl_straggler = {
	.id = "nccl_straggler",
	.title = "A rank kept the others waiting at NCCL collectives",
	.phase = RULE_PHASE_CAUSE,
	.finish_ranks = straggler_finish,
};
