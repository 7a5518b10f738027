// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <curses.h>
#include "top.h"
#include "live.h"
#include "proc.h"
#include "recorder.h"
#include "text.h"

enum sort_key { SORT_LAUNCHES, SORT_SYNC, SORT_RUNQ, SORT_BLOCKED, SORT_CPU, SORT_FAULTS, SORT_DEVMEM, SORT_PID,
	       SORT_MAX };

static const char *const sort_names[SORT_MAX] = { "launches/s", "sync %", "runq %", "blocked %", "cpu %", "faults/s",
						   "devmem", "pid" };

struct top {
	const struct top_opts *o;
	const struct record_config *cfg;
	struct live *live;
	__u64 next_at;		/* the next refresh */
	bool started;		/* the first tick: probes live, the interval starts */
	bool curses;
	bool quit;
	enum sort_key sort;
	__u32 selected;		/* pid of the selected process */
	const struct live_snapshot *shown;	/* the latest, for the keys */
	int saved_stderr;	/* while curses owns the terminal, messages go to a file */
	FILE *log;
	int err;
};

static void comm_of(__u32 pid, __u32 tid, char *buf, size_t len)
{
	char path[64], raw[32], *text;

	if (tid && tid != pid)
		snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", pid, tid);
	else
		snprintf(path, sizeof(path), "/proc/%u/comm", pid);
	if (proc__read_small(path, raw, sizeof(raw)) <= 0)
		snprintf(raw, sizeof(raw), "?");
	/* for a terminal (lib/text.h) */
	text = text__dup(raw, sizeof(raw), TEXT_TERM, NULL);
	snprintf(buf, len, "%s", text ? text : "?");
	free(text);
}

static void bytes_text(char *buf, size_t len, __u64 b)
{
	if (b >= 1ull << 30)
		snprintf(buf, len, "%.1fG", (double)b / (1ull << 30));
	else if (b >= 1ull << 20)
		snprintf(buf, len, "%.1fM", (double)b / (1ull << 20));
	else if (b >= 1ull << 10)
		snprintf(buf, len, "%.1fK", (double)b / (1ull << 10));
	else
		snprintf(buf, len, "%llu", (unsigned long long)b);
}

static void pct_text(char *buf, size_t len, double v, bool known)
{
	if (known && v >= 0)
		snprintf(buf, len, "%.1f", v);
	else
		snprintf(buf, len, "-");
}

static double sort_value(const struct live_process *p, enum sort_key k)
{
	switch (k) {
	case SORT_LAUNCHES:
		return p->launches_per_s;
	case SORT_SYNC:
		return p->sync_pct;
	case SORT_RUNQ:
		return p->runq_pct;
	case SORT_BLOCKED:
		return p->blocked_pct;
	case SORT_CPU:
		return p->cpu_pct;
	case SORT_FAULTS:
		return p->faults_per_s;
	case SORT_DEVMEM:
		return (double)p->device_bytes;
	default:
		return -(double)p->pid;
	}
}

static enum sort_key g_sort;

static int cmp_procs(const void *a, const void *b)
{
	const struct live_process *x = a, *y = b;
	double vx = sort_value(x, g_sort), vy = sort_value(y, g_sort);

	if (vx != vy)
		return vx > vy ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

#define HEADER "%-7s %-7s %-15s %9s %6s %6s %6s %6s %6s %6s %8s %8s  %s"

/* One line of the table, for a process (t NULL) or one of its threads. */
static void row_text(const struct top *tp, const struct live_process *p, const struct live_thread *t, char *buf,
		     size_t len)
{
	char comm[32], pid[16], tid[16], launches[24], sync[16], gpu[16], gil[16], runq[16], blocked[16], cpu[16],
		faults[24], mem[16], finding[200];
	bool gil_known = tp->cfg->python.gil;

	comm_of(p->pid, t ? t->tid : p->pid, comm, sizeof(comm));
	snprintf(pid, sizeof(pid), "%u", p->pid);
	snprintf(tid, sizeof(tid), "%u", t ? t->tid : p->launcher_tid);
	if (!t && !p->launcher_tid)
		snprintf(tid, sizeof(tid), "-");
	snprintf(launches, sizeof(launches), "%s%.0f", !t && p->launches_estimated ? "~" : "",
		 t ? t->launches_per_s : p->launches_per_s);
	pct_text(sync, sizeof(sync), t ? t->sync_pct : p->sync_pct, true);
	pct_text(gpu, sizeof(gpu), p->gpu_busy_pct, !t);
	pct_text(gil, sizeof(gil), t ? t->gil_pct : p->gil_pct, gil_known);
	pct_text(runq, sizeof(runq), t ? t->runq_pct : p->runq_pct, true);
	pct_text(blocked, sizeof(blocked), t ? t->blocked_pct : p->blocked_pct, true);
	pct_text(cpu, sizeof(cpu), t ? t->cpu_pct : p->cpu_pct, true);
	snprintf(faults, sizeof(faults), "%.0f", t ? t->faults_per_s : p->faults_per_s);
	if (t)
		snprintf(mem, sizeof(mem), "-");
	else
		bytes_text(mem, sizeof(mem), p->device_bytes);
	if (t)
		finding[0] = '\0';
	else if (p->finding)
		snprintf(finding, sizeof(finding), "%.3f s %s (%s)", p->finding_cost_s, p->finding_text, p->finding);
	else
		snprintf(finding, sizeof(finding), "-");
	snprintf(buf, len, HEADER, t ? "" : pid, tid, comm, launches, sync, gpu, gil, runq, blocked, cpu, faults, mem,
		 finding);
}

static void print_text(struct top *tp, const struct live_snapshot *s)
{
	char line[512];

	printf("interval %.2f s, %llu events, %zu processes", s->interval_s, (unsigned long long)s->events, s->nprocs);
	if (s->window_cut)
		printf("; findings from part of it: %llu events past the %u MiB an interval's analysis keeps (a longer "
		       "--interval keeps less of each second)", (unsigned long long)s->window_cut, LIVE_WINDOW_MAX_MIB);
	printf("\n");
	printf(HEADER "\n", "PID", "TID", "COMM", "LAUNCH/s", "SYNC%", "GPU%", "GIL%", "RUNQ%", "BLOCK%", "CPU%",
	       "FAULT/s", "DEVMEM", "TOP FINDING");
	for (size_t i = 0; i < s->nprocs; i++) {
		const struct live_process *p = &s->procs[i];

		row_text(tp, p, NULL, line, sizeof(line));
		printf("%s\n", line);
		for (size_t k = 0; k < p->nthreads; k++) {
			row_text(tp, p, &p->threads[k], line, sizeof(line));
			printf("%s\n", line);
		}
	}
	printf("\n");
	fflush(stdout);
}

static void draw(struct top *tp, const struct live_snapshot *s)
{
	char line[512];
	int y = 0, sel = -1;

	erase();
	mvprintw(y++, 0, "inferscope-bpf top: %zu processes, every %.1f s, %llu events; sort: %s "
		 "(s: sort, up/down: select, q: quit)", s->nprocs, tp->o->interval_s, (unsigned long long)s->events,
		 sort_names[tp->sort]);
	y++;
	attron(A_BOLD);
	snprintf(line, sizeof(line), HEADER, "PID", "TID", "COMM", "LAUNCH/s", "SYNC%", "GPU%", "GIL%", "RUNQ%",
		 "BLOCK%", "CPU%", "FAULT/s", "DEVMEM", "TOP FINDING");
	mvaddnstr(y++, 0, line, COLS - 1);
	attroff(A_BOLD);
	for (size_t i = 0; i < s->nprocs; i++)
		if (s->procs[i].pid == tp->selected)
			sel = (int)i;
	if (sel < 0 && s->nprocs) {
		sel = 0;
		tp->selected = s->procs[0].pid;
	}
	for (size_t i = 0; i < s->nprocs && y < LINES; i++) {
		const struct live_process *p = &s->procs[i];

		row_text(tp, p, NULL, line, sizeof(line));
		if ((int)i == sel)
			attron(A_REVERSE);
		mvaddnstr(y++, 0, line, COLS - 1);
		if ((int)i == sel)
			attroff(A_REVERSE);
		for (size_t k = 0; (int)i == sel && k < p->nthreads && y < LINES; k++) {
			row_text(tp, p, &p->threads[k], line, sizeof(line));
			mvaddnstr(y++, 0, line, COLS - 1);
		}
	}
	refresh();
}

static void curses_start(struct top *tp)
{
	FILE *log = tmpfile();

	/* what the recorder says while the screen is ours waits in a file */
	fflush(stderr);
	tp->saved_stderr = dup(STDERR_FILENO);
	if (log && tp->saved_stderr >= 0)
		dup2(fileno(log), STDERR_FILENO);
	tp->log = log;
	initscr();
	cbreak();
	noecho();
	nodelay(stdscr, TRUE);
	keypad(stdscr, TRUE);
	curs_set(0);
	tp->curses = true;
}

static void curses_end(struct top *tp)
{
	char buf[4096];
	size_t n;

	if (!tp->curses)
		return;
	endwin();
	tp->curses = false;
	if (tp->saved_stderr >= 0) {
		fflush(stderr);
		dup2(tp->saved_stderr, STDERR_FILENO);
		close(tp->saved_stderr);
	}
	if (tp->log) {
		rewind(tp->log);
		while ((n = fread(buf, 1, sizeof(buf), tp->log)) > 0)
			fwrite(buf, 1, n, stderr);
		fclose(tp->log);
	}
}

/* Keys: s cycles the sort, arrows move the selection, q quits. */
static void keys(struct top *tp)
{
	const struct live_snapshot *s = tp->shown;
	int ch;

	while ((ch = getch()) != ERR) {
		size_t i = 0;

		if (ch == 'q' || ch == 'Q') {
			tp->quit = true;
		} else if (ch == 's' || ch == 'S') {
			tp->sort = (tp->sort + 1) % SORT_MAX;
		} else if ((ch == KEY_UP || ch == KEY_DOWN) && s && s->nprocs) {
			while (i < s->nprocs && s->procs[i].pid != tp->selected)
				i++;
			if (i == s->nprocs)
				i = 0;
			else if (ch == KEY_UP && i > 0)
				i--;
			else if (ch == KEY_DOWN && i + 1 < s->nprocs)
				i++;
			tp->selected = s->procs[i].pid;
		}
	}
}

static void on_event(void *ctx, const struct isr_ev_hdr *h, size_t size)
{
	live__event(((struct top *)ctx)->live, h, size);
}

static bool on_tick(void *ctx, __u64 now)
{
	struct top *tp = ctx;
	const struct live_snapshot *s = NULL;
	__u64 step = (__u64)(tp->o->interval_s * 1e9);

	if (!tp->started) {
		/* the probes are live now: the first interval starts here */
		tp->started = true;
		tp->next_at = now + step;
		tp->err = live__snapshot(tp->live, now, &s);
		if (!tp->o->once && isatty(STDOUT_FILENO))
			curses_start(tp);
		return tp->err != 0;
	}
	if (tp->curses) {
		keys(tp);
		if (tp->quit)
			return true;
	}
	if (now < tp->next_at)
		return false;
	tp->next_at += step;
	if (tp->next_at <= now)
		tp->next_at = now + step;
	tp->err = live__snapshot(tp->live, now, &s);
	if (tp->err)
		return true;
	g_sort = tp->sort;
	qsort(s->procs, s->nprocs, sizeof(*s->procs), cmp_procs);
	tp->shown = s;
	if (tp->curses)
		draw(tp, s);
	else
		print_text(tp, s);
	return tp->o->once;
}

/* Every process that maps libcuda now (none of ours). */
static size_t cuda_processes(__u32 *pids, size_t max)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	size_t n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d)) && n < max) {
		char *end;
		unsigned long pid = strtoul(de->d_name, &end, 10);

		if (*end || !pid || pid == (unsigned long)getpid())
			continue;
		if (proc_maps__has((__u32)pid, "/libcuda.so"))
			pids[n++] = (__u32)pid;
	}
	closedir(d);
	return n;
}

int top__run(struct record_config *cfg, const struct top_opts *o)
{
	struct top tp = { .o = o, .cfg = cfg, .saved_stderr = -1 };
	struct record_live hook = { .ctx = &tp, .event = on_event, .tick = on_tick };
	struct record_result res;
	char tmp[] = "/tmp/inferscope-top-XXXXXX.isr";
	int e, fd = -1;

	if (!cfg->targets.pid_count) {
		cfg->targets.pid_count = cuda_processes(cfg->targets.pids, CONFIG_MAX_PIDS);
		if (!cfg->targets.pid_count) {
			fprintf(stderr, "inferscope-bpf top: no process maps libcuda here: give the processes to watch "
					"with -p PID[,PID...]\n");
			return 2;
		}
	}
	tp.live = live__new(cfg->targets.pids, cfg->targets.pid_count, (__u32)sysconf(_SC_NPROCESSORS_ONLN));
	if (!tp.live) {
		fprintf(stderr, "inferscope-bpf top: out of memory\n");
		return 1;
	}
	if (o->keep) {
		cfg->output.path = o->keep;
	} else {
		fd = mkstemps(tmp, 4);
		if (fd < 0) {
			fprintf(stderr, "inferscope-bpf top: cannot create a temporary recording in /tmp: %s\n",
				strerror(errno));
			live__free(tp.live);
			return 1;
		}
		close(fd);
		cfg->output.path = tmp;
	}
	cfg->quiet = true;
	cfg->live = &hook;
	e = record__run(cfg, &res);
	curses_end(&tp);
	if (!o->keep)
		unlink(tmp);
	live__free(tp.live);
	if (tp.err)
		fprintf(stderr, "inferscope-bpf top: %s\n", strerror(-tp.err));
	return e || tp.err ? 1 : 0;
}
