// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The fleet daemon (daemon.h): the loop of windows, the state directory,
 * signals, the log and the service manager's notifications.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "daemon.h"
#include "discover.h"
#include "flight.h"
#include "isr_format.h"
#include "notify.h"
#include "prom.h"
#include "recorder.h"
#include "rec_writer.h"
#include "state_dir.h"
#include "window.h"

static volatile sig_atomic_t stop_req, reload_req;

static void on_stop(int sig)
{
	(void)sig;
	stop_req = 1;
}

static void on_reload(int sig)
{
	(void)sig;
	reload_req = 1;
}

/* --- the log: one line per event; under systemd, with the journal's
 * priority prefixes (sd-daemon(3)). --- */

enum { LOG_ERR_ = 3, LOG_WARNING_ = 4, LOG_NOTICE_ = 5, LOG_INFO_ = 6 };

static void dlog(int prio, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void dlog(int prio, const char *fmt, ...)
{
	char line[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (getenv("JOURNAL_STREAM"))
		fprintf(stderr, "<%d>%s\n", prio, line);
	else
		fprintf(stderr, "inferscope-bpf daemon: %s%s\n",
			prio <= LOG_ERR_ ? "error: " : prio == LOG_WARNING_ ? "warning: " : "", line);
}

static double unix_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static double mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

struct daemon {
	const struct daemon_loader *ld;
	struct settings *s;
	struct discover *disc;
	struct daemon_health h;
	int argc;
	char **argv;
	double wd_interval, next_wd;	/* watchdog pings, monotonic seconds */
	unsigned long windows;
};

static void error_seen(struct daemon *d, enum daemon_error k)
{
	d->h.errors[k]++;
	d->h.last_error = (int)k;
	d->h.last_error_time = unix_now();
}

static void watchdog(struct daemon *d)
{
	double now;

	if (!d->wd_interval)
		return;
	now = mono_now();
	if (now >= d->next_wd) {
		notify__send("WATCHDOG=1");
		d->next_wd = now + d->wd_interval;
	}
}

static void on_tick(void *ctx)
{
	watchdog(ctx);
}

/* --- the state directory ---------------------------------------------------- */

static void on_removed(void *ctx, const char *dir, const char *name, const char *why, int err)
{
	(void)ctx;
	if (err)
		dlog(LOG_ERR_, "cannot remove %s/%s: %s", dir, name, strerror(-err));
	else
		dlog(LOG_INFO_, "removed %s (%s)", name, why);
}

/* room: before a window, room made for it on a full filesystem */
static void prune(struct daemon *d, bool room)
{
	const struct daemon_config *c = settings__daemon(d->s);
	int e = state_dir__prune(c->state_dir, c, unix_now(), room, on_removed, d, &d->h);

	if (e) {
		dlog(LOG_ERR_, "cannot clean the state directory %s: %s", c->state_dir, strerror(-e));
		error_seen(d, DERR_STATE_DIR);
	}
}

/* --- one window ---------------------------------------------------------------- */

static void write_metrics(struct daemon *d, const struct window_result *w, const struct discovered *t, size_t nt)
{
	const struct daemon_config *c = settings__daemon(d->s);
	char err[4600];
	int e;

	d->h.budget_pct = settings__record(d->s)->tracer.budget_pct;
	d->h.interval_s = c->interval_s;
	d->h.window_s = c->window_s;
	e = prom__write(c->textfile_dir, w, t, nt, &d->h, err, sizeof(err));
	if (e) {
		error_seen(d, DERR_TEXTFILE);
		dlog(LOG_ERR_, "%s", err);
	}
}

/* Whether path is a recording the recorder left (it created the header):
 * a regular file of ours, not what another user put under that name. */
static bool recorded_something(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() && st.st_size > 0;
}

/* Whether the window's recording left something to analyze: its file, or
 * in flight-recorder mode a window written. */
static bool window_recorded(const struct daemon *d, const char *first, const struct record_result *res)
{
	return settings__daemon(d->s)->flight_s > 0 ? res->windows_last > 0 : recorded_something(first);
}

/* The file of a recording to path: itself, or in flight-recorder mode its
 * k-th window (path.K.isr, k from 1). 0 or -ENAMETOOLONG. */
static int output_file(const struct daemon *d, const char *path, unsigned int k, char *out, size_t len)
{
	if (settings__daemon(d->s)->flight_s > 0)
		return flight__window_path(path, k, out, len);
	if ((size_t)snprintf(out, len, "%s", path) >= len)
		return -ENAMETOOLONG;
	return 0;
}

/* Records targets into path for one window. 0, or -errno. */
static int record_window(struct daemon *d, const struct discovered *t, size_t nt, const char *path,
			 struct record_result *res)
{
	const struct daemon_config *c = settings__daemon(d->s);
	struct record_config rc = *settings__record(d->s);

	rc.targets.pid_count = nt;
	for (size_t i = 0; i < nt; i++)
		rc.targets.pids[i] = t[i].pid;
	rc.targets.command = NULL;
	rc.targets.duration_ns = (__u64)(c->window_s * 1e9);
	if (c->flight_s > 0) {
		/* always on: the whole interval, windows written by the triggers
		 * and at its end */
		rc.targets.duration_ns = (__u64)(c->interval_s * 1e9);
		rc.flight.window_ns = (__u64)(c->flight_s * 1e9);
		rc.flight.trig = (struct flight_triggers){ .sync_ns = (__u64)(c->trigger_sync_s * 1e9),
							   .gpu_idle_ns = (__u64)(c->trigger_gpu_idle_s * 1e9),
							   .drop_burst = c->trigger_drops };
	}
	rc.output.path = path;
	rc.output.ready_file = NULL;
	rc.output.argc = d->argc;
	rc.output.argv = d->argv;
	rc.quiet = true;
	rc.control.stop = &stop_req;
	rc.control.tick = on_tick;
	rc.control.ctx = d;
	return record__run(&rc, res);
}

/* Analyses the recording in path (the window's, or in flight-recorder
 * mode the k-th window of the interval's), tags it with its worst
 * severity, and writes the metrics it gives. */
static void finish_file(struct daemon *d, const char *path, unsigned int k, const struct discovered *t, size_t n,
			const struct record_result *res)
{
	struct window_result *w = NULL;
	char tagged[4400], err[1024], label[32] = "";
	int e;

	if (settings__daemon(d->s)->flight_s > 0)
		snprintf(label, sizeof(label), ".%u (flight recorder)", k);
	e = analyze__window(path, &w, err, sizeof(err));
	if (e) {
		dlog(LOG_ERR_, "window %lu%s: %s; the recording is removed", d->windows, label, err);
		unlink(path);
		error_seen(d, DERR_ANALYZE);
		d->h.windows_failed++;
		write_metrics(d, NULL, t, n);
		return;
	}
	snprintf(tagged, sizeof(tagged), "%.*s.%s" WINDOW_SUFFIX, (int)(strlen(path) - strlen(WINDOW_SUFFIX)), path,
		 window_severity_name(w->max_severity));
	if (rename(path, tagged)) {
		dlog(LOG_ERR_, "window %lu%s: cannot rename %s: %s", d->windows, label, path, strerror(errno));
		error_seen(d, DERR_STATE_DIR);
		snprintf(tagged, sizeof(tagged), "%s", path);
	}
	/* A recording cut short by a write error counts its drops up to its
	 * last chunk; the recorder, every event it lost (those the full state
	 * directory could not take too). */
	if (settings__daemon(d->s)->flight_s <= 0 && res->stop_reason == ISR_STOP_WRITE_ERROR &&
	    res->drops_total > w->drops_total)
		w->drops_total = res->drops_total;
	d->h.windows_recorded++;
	d->h.events_total += w->events;
	d->h.drops_total += w->drops_total;
	d->h.budget_sampled = w->budget_sampled;
	d->h.last_window_time = unix_now();
	if (w->truncated && res->stop_reason != ISR_STOP_WRITE_ERROR) {
		d->h.truncated_total++;
		dlog(LOG_WARNING_, "window %lu%s: %s is truncated: %s", d->windows, label, tagged, w->truncation);
	}
	prune(d, false);
	write_metrics(d, w, t, n);
	{
		char top[128] = "";

		for (size_t i = 0; i < w->proc_count; i++)
			if (w->procs[i].top_rule && w->procs[i].top_severity == w->max_severity) {
				snprintf(top, sizeof(top), " (%s: %s in pid %u)", window_severity_name(w->max_severity),
					 w->procs[i].top_rule, w->procs[i].pid);
				break;
			}
		dlog(w->max_severity >= 2 ? LOG_NOTICE_ : LOG_INFO_,
		     "window %lu%s: %zu processes, %.1f s, %llu events, %llu dropped, %zu findings%s; %s", d->windows,
		     label, w->proc_count, w->duration_s, (unsigned long long)w->events, (unsigned long long)w->drops_total,
		     w->findings, top, access(tagged, F_OK) == 0 ? tagged : "recording not kept (daemon.keep_severity)");
	}
	snprintf(err, sizeof(err), "STATUS=window %lu%s: %zu processes, %zu findings, worst %s", d->windows, label,
		 w->proc_count, w->findings, window_severity_name(w->max_severity));
	notify__send(err);
	window_result__free(w);
}

static int window(struct daemon *d)
{
	const struct daemon_config *c = settings__daemon(d->s);
	struct discovered *t = calloc(CONFIG_MAX_PIDS, sizeof(*t));
	struct record_result res;
	char path[4400], first[4400], stamp[64];
	struct timespec now;
	struct tm tm;
	int n, e, attempt;

	if (!t)
		return -ENOMEM;
	d->windows++;
	prune(d, true);
	for (attempt = 0;; attempt++) {
		n = discover__scan(d->disc, t, CONFIG_MAX_PIDS);
		if (n < 0) {
			dlog(LOG_ERR_, "window %lu: cannot list the processes in /proc: %s", d->windows, strerror(-n));
			error_seen(d, DERR_DISCOVER);
			d->h.windows_failed++;
			e = n;
			goto out;
		}
		if (!n) {
			dlog(LOG_INFO_, "window %lu: no process %s%s; nothing to sample", d->windows,
			     c->cuda_processes ? "maps libcuda" : "", c->match_count ? (c->cuda_processes ?
			     " or matches daemon.match" : "matches daemon.match") : "");
			d->h.windows_empty++;
			write_metrics(d, NULL, NULL, 0);
			e = 0;
			goto out;
		}
		clock_gettime(CLOCK_REALTIME, &now);
		gmtime_r(&now.tv_sec, &tm);
		strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%S", &tm);
		snprintf(path, sizeof(path), "%s/" WINDOW_PREFIX "%s.%03ldZ" WINDOW_SUFFIX, c->state_dir, stamp,
			 now.tv_nsec / 1000000);
		if (output_file(d, path, 1, first, sizeof(first))) {
			dlog(LOG_ERR_, "window %lu: %s: the path is too long", d->windows, path);
			error_seen(d, DERR_STATE_DIR);
			d->h.windows_failed++;
			e = -ENAMETOOLONG;
			goto out;
		}
		watchdog(d);
		e = record_window(d, t, (size_t)n, path, &res);
		watchdog(d);
		/* A target that exited between the scan and the attach fails
		 * the window before anything is written: scan again, once. */
		if (!e || window_recorded(d, first, &res) || attempt == 1 || stop_req)
			break;
		if (c->flight_s <= 0)
			unlink(first);
		dlog(LOG_WARNING_, "window %lu: recording failed before it began (%s); scanning again", d->windows,
		     strerror(-e));
	}
	if (e && !window_recorded(d, first, &res)) {
		if (c->flight_s <= 0)
			unlink(first);
		dlog(LOG_ERR_, "window %lu: recording %d processes failed: %s (the recorder's message is above)",
		     d->windows, n, strerror(-e));
		error_seen(d, e == -ENOSPC || e == -EFBIG ? DERR_DISK_FULL : DERR_RECORD);
		d->h.windows_failed++;
		write_metrics(d, NULL, t, (size_t)n);
		goto out;
	}
	if (res.stop_reason == ISR_STOP_WRITE_ERROR) {
		d->h.truncated_total++;
		error_seen(d, e == -ENOSPC || e == -EFBIG ? DERR_DISK_FULL : DERR_RECORD);
		dlog(LOG_ERR_, "window %lu: writing %s failed: %s; the recording is cut short and reads up to its "
			       "last complete chunk, %llu events lost%s", d->windows, path, strerror(-e),
		     (unsigned long long)res.drops_total,
		     e == -ENOSPC ? "; the state directory's filesystem is full: the oldest recordings are removed "
				    "to make room (lower daemon.max_size below its free space)" :
		     e == -EFBIG ? "; the file reached the daemon's file size limit (LimitFSIZE=)" : "");
	}
	/* in flight-recorder mode windows 1 to windows_last, but for the names
	 * the recorder skipped (taken by a link or a directory) */
	for (unsigned int k = 1; k <= (c->flight_s > 0 ? res.windows_last : 1); k++) {
		char file[4400];

		if (!output_file(d, path, k, file, sizeof(file)) && recorded_something(file))
			finish_file(d, file, k, t, (size_t)n, &res);
	}
	e = 0;
out:
	free(t);
	return e;
}

/* --- configuration --------------------------------------------------------------- */

/* A usable configuration: the settings and the patterns compiled, the
 * state directory there. NULL with why in err. */
static struct settings *configure(struct daemon *d, struct discover **disc, char *err, size_t errlen)
{
	struct settings *s = d->ld->load(d->ld->ctx, err, errlen);
	const struct daemon_config *c;

	if (!s)
		return NULL;
	c = settings__daemon(s);
	*disc = discover__new(c->cuda_processes, c->match, c->match_count, err, errlen);
	if (!*disc) {
		settings__free(s);
		return NULL;
	}
	if (state_dir__check(c->state_dir, err, errlen)) {
		discover__free(*disc);
		settings__free(s);
		return NULL;
	}
	return s;
}

static void reload(struct daemon *d)
{
	struct discover *disc;
	struct settings *s;
	char err[4600];

	reload_req = 0;
	s = configure(d, &disc, err, sizeof(err));
	if (!s) {
		d->h.reloads_refused++;
		error_seen(d, DERR_CONFIG);
		dlog(LOG_ERR_, "configuration refused: %s; the previous one stays", err);
		return;
	}
	settings__free(d->s);
	discover__free(d->disc);
	d->s = s;
	d->disc = disc;
	d->h.reloads_ok++;
	dlog(LOG_NOTICE_, "configuration reloaded%s%s: a window every %g s, %g s long", settings__file(s)[0] ? " from " : "",
	     settings__file(s), settings__daemon(s)->interval_s, settings__daemon(s)->window_s);
}

/* Sleeps until the monotonic time `until`, a signal, or the next
 * watchdog ping. */
static void nap(struct daemon *d, double until)
{
	double now = mono_now(), span = until - now;
	struct timespec ts;

	if (d->wd_interval && d->next_wd - now < span)
		span = d->next_wd - now;
	if (span <= 0)
		return;
	ts.tv_sec = (time_t)span;
	ts.tv_nsec = (long)((span - (double)ts.tv_sec) * 1e9);
	nanosleep(&ts, NULL);	/* EINTR: a signal to look at */
}

int daemon__run(const struct daemon_loader *ld, int argc, char **argv)
{
	struct daemon d = { .ld = ld, .argc = argc, .argv = argv };
	struct sigaction sa = { .sa_handler = on_stop };
	char err[4600];
	__u64 wd_usec;
	double next;
	int rc = 0, e;

	d.h.last_error = -1;
	d.h.start_time = unix_now();
	if (notify__check(err, sizeof(err))) {
		dlog(LOG_ERR_, "%s", err);
		return 1;
	}
	d.s = configure(&d, &d.disc, err, sizeof(err));
	if (!d.s) {
		dlog(LOG_ERR_, "%s", err);
		return 1;
	}
	/* No SA_RESTART: a signal ends the wait between windows at once. */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sa.sa_handler = on_reload;
	sigaction(SIGHUP, &sa, NULL);
	/* SIGUSR1 asks a flight recording for a window (the recorder's
	 * handler while it records); between recordings it is ignored, never
	 * the end of the daemon */
	signal(SIGUSR1, SIG_IGN);
	rec_writer__size_limit_is_an_error();

	wd_usec = notify__watchdog_usec();
	d.wd_interval = wd_usec / 2e6;
	d.next_wd = mono_now();
	if (settings__daemon(d.s)->flight_s > 0)
		dlog(LOG_NOTICE_, "started%s%s: recording always, the last %g s written when a trigger fires and every "
				  "%g s, recordings in %s, metrics in %s/%s", settings__file(d.s)[0] ? " with " : "",
		     settings__file(d.s), settings__daemon(d.s)->flight_s, settings__daemon(d.s)->interval_s,
		     settings__daemon(d.s)->state_dir, settings__daemon(d.s)->textfile_dir, PROM_FILE);
	else
		dlog(LOG_NOTICE_, "started%s%s: a window of %g s every %g s, recordings in %s, metrics in %s/%s",
		     settings__file(d.s)[0] ? " with " : "", settings__file(d.s), settings__daemon(d.s)->window_s,
		     settings__daemon(d.s)->interval_s, settings__daemon(d.s)->state_dir,
		     settings__daemon(d.s)->textfile_dir, PROM_FILE);
	notify__send("READY=1\nSTATUS=waiting for the first window");
	watchdog(&d);
	next = mono_now();
	while (!stop_req) {
		if (reload_req)
			reload(&d);
		if (mono_now() >= next) {
			const struct daemon_config *c = settings__daemon(d.s);

			e = window(&d);
			if (settings__daemon(d.s)->once) {
				rc = e ? 1 : 0;
				break;
			}
			next += c->interval_s;
			if (next < mono_now())
				next = mono_now() + c->interval_s;	/* a window overran: no burst to catch up */
			continue;
		}
		watchdog(&d);
		nap(&d, next);
	}
	notify__send("STOPPING=1");
	dlog(LOG_NOTICE_, "stopping%s after %lu windows", stop_req ? " on a signal" : "", d.windows);
	discover__free(d.disc);
	settings__free(d.s);
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	signal(SIGUSR1, SIG_DFL);
	return rc;
}
