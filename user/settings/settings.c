// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The configuration model (settings.h): one table of settings, each with
 * its field, its parser (the same for every source) and its printer.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include <yaml.h>
#include "settings.h"
#include "analyze.h"

extern char **environ;

enum setting_type {
	T_BOOL,
	T_UINT,		/* unsigned int, [min, max] */
	T_INT,		/* int, [min, max] */
	T_SECONDS,	/* double: 10, 2.5, 10s, 5m, 1h, 7d; [min, max] */
	T_BYTES,	/* __u64: 1073741824, 512K, 64M, 1G */
	T_BUDGET,	/* double percentage in (0, 100], or off (0) */
	T_RINGBUF,	/* size_t bytes from MiB, a power of two in [1, 4096] */
	T_PATH,		/* const char * */
	T_PATHS,	/* const char *[]: a list; from the environment, ':'-separated */
	T_REGEXES,	/* const char *[]: a list; from the environment, one pattern */
	T_SEVERITY,	/* int 1..3, or 4: none */
	T_FORMAT,	/* enum report_format */
};

struct setting {
	const char *key;
	enum setting_type type;
	size_t offset;		/* of the field in struct settings */
	size_t count_offset;	/* lists: of their size_t count */
	size_t max_items;	/* lists */
	double min, max;
	const char *doc;
};

struct origin {
	enum setting_source src;
	char where[4200];
};

#define NSETTINGS (sizeof(table) / sizeof(table[0]))
#define NOPTIONS (sizeof(options) / sizeof(options[0]))

struct settings {
	struct record_config rec;
	struct daemon_config daemon;
	int format;
	char file[4096];
	struct origin *origin;		/* one per table entry */
	char **owned;			/* strings the values point to */
	size_t nowned, capowned;
};

#define F(field) offsetof(struct settings, field)
#define LIST(field, count, n) offsetof(struct settings, field), offsetof(struct settings, count), n

static const struct setting table[] = {
	{ "record.follow", T_BOOL, F(rec.targets.follow_children), 0, 0, 0, 0,
	  "trace the targets' running descendants and the processes they start" },
	{ "record.page_faults", T_BOOL, F(rec.kernel.page_faults), 0, 0, 0, 0, "trace page faults" },
	{ "record.cuda", T_BOOL, F(rec.cuda.enabled), 0, 0, 0, 0, "probe the CUDA driver API (libcuda)" },
	{ "record.cuda_libs", T_PATHS, LIST(rec.cuda.libs, rec.cuda.lib_count, CONFIG_MAX_CUDA_LIBS), 0, 0,
	  "more libcuda files to probe in every target" },
	{ "record.nccl", T_BOOL, F(rec.nccl.enabled), 0, 0, 0, 0, "probe NCCL (libnccl.so*)" },
	{ "record.nccl_libs", T_PATHS, LIST(rec.nccl.libs, rec.nccl.lib_count, CONFIG_MAX_CUDA_LIBS), 0, 0,
	  "more libnccl files to probe in every target" },
	{ "record.gil", T_BOOL, F(rec.python.gil), 0, 0, 0, 0,
	  "measure Python GIL waits and holds exactly (uprobes on libpython)" },
	{ "record.gil_waits", T_BOOL, F(rec.python.gil_waits), 0, 0, 0, 0,
	  "the Python GIL waits the scheduler sees, with their holders" },
	{ "record.budget", T_BUDGET, F(rec.tracer.budget_pct), 0, 0, 0, 100,
	  "overhead budget, % of a thread's time, or off" },
	{ "record.legacy_uprobes", T_BOOL, F(rec.tracer.legacy_uprobes), 0, 0, 0, 0,
	  "one perf-event uprobe per function" },
	{ "record.ringbuf_mib", T_RINGBUF, F(rec.tracer.ringbuf_bytes), 0, 0, 1, MAX_RINGBUF_MIB,
	  "event ring buffer, MiB, a power of two" },
	{ "record.py_stacks_hz", T_UINT, F(rec.python.stacks_hz), 0, 0, 0, 10000,
	  "Python stack samples per second and thread on CPU; 0: no Python stacks" },
	{ "record.py_launch_every", T_UINT, F(rec.python.launch_every), 0, 0, 0, 1000000,
	  "the Python stack of every Nth CUDA launch per CPU; 0: none" },
	{ "record.gpu", T_BOOL, F(rec.gpu.all), 0, 0, 0, 0,
	  "record all GPU activity: load the CUPTI bridge into the targets" },
	{ "record.gpu_windows", T_BOOL, F(rec.gpu.windows), 0, 0, 0, 0,
	  "record GPU activity in windows within the budget (record.gpu wins)" },
	{ "record.gpu_period", T_SECONDS, F(rec.gpu.period_s), 0, 0, 0.1, 3600,
	  "with record.gpu_windows: a window every this long" },
	{ "record.cupti", T_BOOL, F(rec.gpu.cupti), 0, 0, 0, 0,
	  "record GPU activity from bridges the targets loaded themselves" },
	{ "record.inject", T_BOOL, F(rec.gpu.inject), 0, 0, 0, 0,
	  "with record.gpu: load the bridge into running processes (ptrace)" },
	{ "record.nvtx", T_BOOL, F(rec.nvtx.enabled), 0, 0, 0, 0,
	  "probe NVTX ranges and marks (libnvToolsExt)" },
	{ "record.cupti_bridge", T_PATH, F(rec.gpu.bridge_path), 0, 0, 0, 0,
	  "the CUPTI bridge (default: next to inferscope-bpf)" },
	{ "record.compress_level", T_INT, F(rec.output.zstd_level), 0, 0, 0, 19,
	  "zstd level of the recording; 0: none" },
	{ "analyze.format", T_FORMAT, F(format), 0, 0, 0, 0, "report format: md, json, html, perfetto" },
	{ "daemon.interval", T_SECONDS, F(daemon.interval_s), 0, 0, 1, 86400 * 7,
	  "a window starts every interval" },
	{ "daemon.window", T_SECONDS, F(daemon.window_s), 0, 0, 0.1, 86400, "recording time of a window" },
	{ "daemon.state_dir", T_PATH, F(daemon.state_dir), 0, 0, 0, 0, "where recordings are kept" },
	{ "daemon.textfile_dir", T_PATH, F(daemon.textfile_dir), 0, 0, 0, 0,
	  "node_exporter's textfile collector directory (inferscope.prom)" },
	{ "daemon.keep_severity", T_SEVERITY, F(daemon.keep_severity), 0, 0, 0, 0,
	  "keep a window's recording when a finding is at least this severe: info, warning, critical, none" },
	{ "daemon.keep_last", T_UINT, F(daemon.keep_last), 0, 0, 0, 100000,
	  "also keep the recordings of the last N windows" },
	{ "daemon.max_size", T_BYTES, F(daemon.max_bytes), 0, 0, 0, 0,
	  "total size of the kept recordings (K, M, G suffixes); oldest removed first" },
	{ "daemon.max_age", T_SECONDS, F(daemon.max_age_s), 0, 0, 0, 86400.0 * 3650,
	  "recordings older than this are removed (s, m, h, d suffixes); 0: no limit" },
	{ "daemon.cuda_processes", T_BOOL, F(daemon.cuda_processes), 0, 0, 0, 0,
	  "sample every process that maps libcuda (false: only those daemon.match names)" },
	{ "daemon.match", T_REGEXES, LIST(daemon.match, daemon.match_count, SETTINGS_MAX_MATCH), 0, 0,
	  "also sample processes whose command line matches this extended regex" },
	{ "daemon.once", T_BOOL, F(daemon.once), 0, 0, 0, 0, "one window, then exit" },
	{ "daemon.flight_recorder", T_SECONDS, F(daemon.flight_s), 0, 0, 0, 3600,
	  "flight-recorder mode: every interval recorded, its last this-many seconds written when a trigger "
	  "fires and at its end; 0: off (windows of daemon.window)" },
	{ "daemon.trigger_sync", T_SECONDS, F(daemon.trigger_sync_s), 0, 0, 0, 3600,
	  "with daemon.flight_recorder: a synchronization this long writes a window; 0: off" },
	{ "daemon.trigger_gpu_idle", T_SECONDS, F(daemon.trigger_gpu_idle_s), 0, 0, 0, 3600,
	  "with daemon.flight_recorder: the GPU idle this long writes a window (GPU activity recorded); 0: off" },
	{ "daemon.trigger_drops", T_UINT, F(daemon.trigger_drops), 0, 0, 0, 1000000000,
	  "with daemon.flight_recorder: this many events dropped within a second write a window; 0: off" },
};

/* The command-line options that set a setting: each option is defined here
 * and nowhere else (the CLI makes its argp options of them: user/cli/cli.c). A
 * flag sets `value`; an option with an optional argument sets `value` when
 * the argument is left out. */
static const struct setting_option options[] = {
	{ "record.ringbuf_mib", "ringbuf-size", "MIB", NULL,
	  "Event ring-buffer size, a power of two up to 2048 (default 32)" },
	{ "record.follow", "no-follow", NULL, "false",
	  "Trace only the named processes: not their running descendants, nor the processes the targets start" },
	{ "record.page_faults", "no-faults", NULL, "false", "Do not trace page faults and direct reclaim" },
	{ "record.cuda", "no-cuda", NULL, "false", "Do not probe the CUDA driver API (libcuda)" },
	{ "record.nvtx", "no-nvtx", NULL, "false", "Do not probe the NVTX ranges and marks (libnvToolsExt)" },
	{ "record.gil", "gil", NULL, "true",
	  "Also measure Python GIL waits and holds exactly (3 probe hits per GIL release: PyTorch releases it on "
	  "every op)" },
	{ "record.gil_waits", "no-gil-waits", NULL, "false",
	  "Do not record the Python GIL waits the scheduler sees (on by default: no probe hit, the holder named)" },
	{ "record.budget", "budget", "PCT|off", NULL,
	  "Overhead budget: above PCT% of a thread's time (default 1), sample the hot-path CUDA probes and "
	  "extrapolate" },
	{ "record.legacy_uprobes", "legacy-uprobes", NULL, "true",
	  "One perf-event uprobe per function, as on kernels without uprobe_multi (no budget then)" },
	{ "record.py_stacks_hz", "py-stacks", "HZ", "99",
	  "Sample the Python stacks of target threads on CPU HZ times a second (default: on, 99)" },
	{ "record.py_stacks_hz", "no-py-stacks", NULL, "0", "No Python stacks: neither sampled nor at CUDA calls" },
	{ "record.py_launch_every", "py-launch-every", "N", NULL,
	  "Python call site of every Nth CUDA launch per CPU (default 64; 0: no Python stacks at CUDA calls)" },
	{ "record.cuda_libs", "cuda-lib", "PATH", NULL, "Also probe this libcuda file in every target (repeatable)" },
	{ "record.nccl", "no-nccl", NULL, "false", "Do not probe NCCL (libnccl.so*)" },
	{ "record.nccl_libs", "nccl-lib", "PATH", NULL, "Also probe this libnccl file in every target (repeatable)" },
	{ "record.gpu", "gpu", NULL, "true",
	  "Record all GPU activity (CUPTI): hand the bridge to the command, load it into -p processes (about 3 us "
	  "per PyTorch launch, outside the budget)" },
	{ "record.gpu_windows", "gpu-windows", NULL, "true",
	  "Record GPU activity in windows within the budget (CUPTI detached between them), busy time "
	  "extrapolated; opt-in (docs/overhead.md)" },
	{ "record.gpu_period", "gpu-period", "SECONDS", NULL, "With --gpu-windows: a window every SECONDS (default 5)" },
	{ "record.cupti", "no-cupti", NULL, "false", "Do not record GPU activity through the CUPTI bridge" },
	{ "record.inject", "no-inject", NULL, "false",
	  "Do not load the CUPTI bridge into -p processes started without it (ptrace + dlopen)" },
	{ "record.cupti_bridge", "cupti-bridge", "PATH", NULL,
	  "The CUPTI bridge a launched command loads (default: libinferscope_cupti.so next to inferscope-bpf)" },
	{ "record.compress_level", "compress-level", "N", NULL, "zstd level of the recording, 0 = none (default 1)" },
	{ "analyze.format", "format", "md|json|html|perfetto", NULL,
	  "Report format (default md): html is one self-contained page with charts, perfetto a trace for the "
	  "Perfetto UI (docs/outputs.md); diff writes md, json or html" },
	{ "daemon.state_dir", "state-dir", "DIR", NULL, "Keep the recordings in DIR (default /var/lib/inferscope-bpf)" },
	{ "daemon.textfile_dir", "textfile-dir", "DIR", NULL,
	  "Write inferscope.prom into DIR, node_exporter's textfile collector directory (default "
	  "/var/lib/prometheus/node-exporter)" },
	{ "daemon.interval", "interval", "SEC", NULL, "Start a window every SEC seconds (default 300; 30s, 5m, 1h)" },
	{ "daemon.window", "window", "SEC", NULL, "Record SEC seconds per window (default 10)" },
	{ "daemon.once", "once", NULL, "true", "One window over the discovered processes, then exit" },
	{ "daemon.keep_severity", "keep-severity", "info|warning|critical|none", NULL,
	  "Keep the recording of a window with a finding at least this severe (default warning)" },
	{ "daemon.keep_last", "keep-last", "N", NULL, "Also keep the recordings of the last N windows (default 3)" },
	{ "daemon.max_size", "max-size", "BYTES", NULL,
	  "Total size of the kept recordings, oldest removed first (default 1G; K, M, G suffixes)" },
	{ "daemon.max_age", "max-age", "SEC", NULL, "Remove recordings older than this (default 7d; 0: never)" },
	{ "daemon.match", "match", "REGEX", NULL,
	  "Also sample processes whose command line matches this extended regex (repeatable)" },
	{ "daemon.cuda_processes", "no-cuda-processes", NULL, "false",
	  "Sample only the processes --match names, not every process that maps libcuda" },
	{ "daemon.flight_recorder", "flight-recorder", "SEC", NULL,
	  "Flight-recorder mode: record every interval whole, keep its last SEC seconds in memory and write them "
	  "when a trigger fires (at most once per SEC) and at the interval's end (default 0: off)" },
	{ "daemon.trigger_sync", "trigger-sync", "SEC", NULL,
	  "With --flight-recorder: a synchronization this long writes a window (default 1; 0: off)" },
	{ "daemon.trigger_gpu_idle", "trigger-gpu-idle", "SEC", NULL,
	  "With --flight-recorder: the GPU idle this long writes a window (GPU activity recorded; default 0: off)" },
	{ "daemon.trigger_drops", "trigger-drops", "N", NULL,
	  "With --flight-recorder: N events dropped within a second write a window (default 1000; 0: off)" },
};

static const struct setting *find(const char *key)
{
	for (size_t i = 0; i < NSETTINGS; i++)
		if (!strcmp(table[i].key, key))
			return &table[i];
	return NULL;
}

static void *field(struct settings *s, const struct setting *st)
{
	return (char *)s + st->offset;
}

static const void *cfield(const struct settings *s, const struct setting *st)
{
	return (const char *)s + st->offset;
}

static void say(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
}

static const char *own(struct settings *s, const char *text)
{
	char *c;

	if (s->nowned == s->capowned) {
		size_t cap = s->capowned ? 2 * s->capowned : 16;
		char **v = realloc(s->owned, cap * sizeof(*v));

		if (!v)
			return NULL;
		s->owned = v;
		s->capowned = cap;
	}
	c = strdup(text);
	if (c)
		s->owned[s->nowned++] = c;
	return c;
}

int settings__compile_match(regex_t *re, const char *pattern, char *err, size_t errlen)
{
	int e = regcomp(re, pattern, REG_EXTENDED | REG_NOSUB);

	if (e) {
		char why[256];

		regerror(e, re, why, sizeof(why));
		snprintf(err, errlen, "daemon.match: '%s' is not an extended regular expression: %s", pattern, why);
		return -EINVAL;
	}
	return 0;
}

struct settings *settings__new(void)
{
	struct settings *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->origin = calloc(NSETTINGS, sizeof(*s->origin));
	if (!s->origin) {
		free(s);
		errno = ENOMEM;
		return NULL;
	}
	record_config__defaults(&s->rec);
	s->format = REPORT_MD;
	/* Measured (docs/daemon.md): a 10 s window is long enough for the
	 * rules' thresholds and costs a job under budget; one every 5 minutes
	 * keeps the tracer's share of the host near 0.1%. */
	s->daemon.interval_s = 300;
	s->daemon.window_s = 10;
	s->daemon.state_dir = "/var/lib/inferscope-bpf";
	s->daemon.textfile_dir = "/var/lib/prometheus/node-exporter";
	s->daemon.keep_severity = 2;
	s->daemon.keep_last = 3;
	s->daemon.trigger_sync_s = DEFAULT_FLIGHT_SYNC_MS / 1e3;
	s->daemon.trigger_drops = DEFAULT_FLIGHT_DROP_BURST;
	s->daemon.max_bytes = 1ull << 30;
	s->daemon.max_age_s = 7 * 86400;
	s->daemon.cuda_processes = true;
	return s;
}

void settings__free(struct settings *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nowned; i++)
		free(s->owned[i]);
	free(s->owned);
	free(s->origin);
	free(s);
}

/* --- values -------------------------------------------------------------- */

static int parse_double(const char *text, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(text, &end);
	if (errno || end == text || *end || !isfinite(*v))
		return -EINVAL;
	return 0;
}

static int parse_bool(const char *text, bool *v)
{
	static const char *const yes[] = { "true", "yes", "on", "1" }, *const no[] = { "false", "no", "off", "0" };

	for (size_t i = 0; i < 4; i++) {
		if (!strcasecmp(text, yes[i]))
			return *v = true, 0;
		if (!strcasecmp(text, no[i]))
			return *v = false, 0;
	}
	return -EINVAL;
}

/* A number with an optional unit suffix: units[i] multiplies by mult[i]. */
static int parse_scaled(const char *text, const char *units, const double *mult, double *v)
{
	char buf[64];
	size_t n = strlen(text);
	const char *u;
	double m = 1;

	if (!n || n >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, text, n + 1);
	u = strchr(units, buf[n - 1]);
	if (u && *u) {
		m = mult[u - units];
		buf[n - 1] = '\0';
	}
	if (parse_double(buf, v) || *v < 0)
		return -EINVAL;
	*v *= m;
	return 0;
}

/* The parsers of the setting types: each sets the field f of st from text,
 * or says in err why text is no value of st: 0 or -errno. */

static int parse_bool_field(const struct setting *st, void *f, const char *text, char *err, size_t len)
{
	bool b;

	if (parse_bool(text, &b)) {
		say(err, len, "%s: '%s' is not true or false", st->key, text);
		return -EINVAL;
	}
	*(bool *)f = b;
	return 0;
}

static int parse_int(const struct setting *st, void *f, const char *text, char *err, size_t len)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(text, &end, 10);
	if (errno || end == text || *end || v < st->min || v > st->max) {
		say(err, len, "%s: '%s' is not a whole number from %.0f to %.0f", st->key, text, st->min, st->max);
		return -EINVAL;
	}
	if (st->type == T_UINT)
		*(unsigned int *)f = (unsigned int)v;
	else
		*(int *)f = (int)v;
	return 0;
}

static int parse_seconds(const struct setting *st, void *f, const char *text, char *err, size_t len)
{
	static const double m[] = { 1, 60, 3600, 86400 };
	double d;

	if (parse_scaled(text, "smhd", m, &d) || d < st->min || d > st->max || (st->min > 0 && d == 0)) {
		say(err, len, "%s: '%s' is not a duration from %g to %g seconds (e.g. 10, 2.5, 30s, 5m, 1h, 7d)",
		    st->key, text, st->min, st->max);
		return -EINVAL;
	}
	*(double *)f = d;
	return 0;
}

static int parse_bytes(const struct setting *st, void *f, const char *text, char *err, size_t len)
{
	static const double m[] = { 1024.0, 1048576.0, 1073741824.0, 1099511627776.0 };
	double d;

	if (parse_scaled(text, "KMGT", m, &d) || d < 4096 || d > 1e18) {
		say(err, len, "%s: '%s' is not a size of at least 4096 bytes (e.g. 1073741824, 512M, 1G)", st->key,
		    text);
		return -EINVAL;
	}
	*(__u64 *)f = (__u64)d;
	return 0;
}

static int parse_budget(const struct setting *st, void *f, const char *text, char *err, size_t len)
{
	double d = 0;

	if (strcmp(text, "off") && (parse_double(text, &d) || !(d > 0) || d > 100)) {
		say(err, len, "%s: '%s' is not a percentage in (0, 100] or 'off'", st->key, text);
		return -EINVAL;
	}
	*(double *)f = d;
	return 0;
}

static int parse_ringbuf(const struct setting *st, void *f, const char *text, char *err, size_t len)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(text, &end, 10);
	if (errno || end == text || *end || v == 0 || v > st->max || (v & (v - 1))) {
		say(err, len, "%s: '%s' is not a power of two between 1 and %.0f (MiB)", st->key, text, st->max);
		return -EINVAL;
	}
	*(size_t *)f = (size_t)v << 20;
	return 0;
}

static int parse_path(struct settings *s, const struct setting *st, void *f, const char *text, char *err,
		      size_t len)
{
	const char *c;

	if (!*text) {
		say(err, len, "%s: empty path", st->key);
		return -EINVAL;
	}
	c = own(s, text);
	if (!c)
		return -ENOMEM;
	*(const char **)f = c;
	return 0;
}

/* A path or a pattern added to a list (emptied first with replace). */
static int parse_list_item(struct settings *s, const struct setting *st, void *f, const char *text, bool replace,
			   char *err, size_t len)
{
	size_t *n = (size_t *)((char *)s + st->count_offset);
	const char **v = f, *c;

	if (replace)
		*n = 0;
	if (!*text) {
		say(err, len, "%s: empty %s", st->key, st->type == T_PATHS ? "path" : "pattern");
		return -EINVAL;
	}
	if (*n == st->max_items) {
		say(err, len, "%s: at most %zu items", st->key, st->max_items);
		return -EINVAL;
	}
	if (st->type == T_REGEXES) {
		regex_t re;

		if (settings__compile_match(&re, text, err, len))
			return -EINVAL;
		regfree(&re);
	}
	c = own(s, text);
	if (!c)
		return -ENOMEM;
	v[(*n)++] = c;
	return 0;
}

/* One of n names (said in err when not, as "one of a, b, c"): its index,
 * or -EINVAL. */
static int parse_name(const struct setting *st, const char *text, const char *const *names, int n, char *err,
		      size_t len)
{
	char list[128] = "";

	for (int i = 0; i < n; i++)
		if (!strcmp(text, names[i]))
			return i;
	for (int i = 0; i < n; i++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? ", " : "", names[i]);
	say(err, len, "%s: '%s' is not one of %s", st->key, text, list);
	return -EINVAL;
}

static int parse_severity(const struct setting *st, void *f, const char *text, char *err, size_t len)
{
	static const char *const names[] = { "info", "warning", "critical", "none" };
	int i = parse_name(st, text, names, 4, err, len);

	if (i < 0)
		return i;
	*(int *)f = i + 1;
	return 0;
}

static int parse_format(const struct setting *st, void *f, const char *text, char *err, size_t len)
{
	static const char *const names[] = { "md", "json", "html", "perfetto" };
	static const int v[] = { REPORT_MD, REPORT_JSON, REPORT_HTML, REPORT_PERFETTO };
	int i = parse_name(st, !strcmp(text, "markdown") ? "md" : text, names, 4, err, len);

	if (i < 0)
		return i;
	*(int *)f = v[i];
	return 0;
}

static int parse_value(struct settings *s, const struct setting *st, const char *text, bool replace_list,
		       char *err, size_t len)
{
	void *f = field(s, st);

	switch (st->type) {
	case T_BOOL:
		return parse_bool_field(st, f, text, err, len);
	case T_UINT:
	case T_INT:
		return parse_int(st, f, text, err, len);
	case T_SECONDS:
		return parse_seconds(st, f, text, err, len);
	case T_BYTES:
		return parse_bytes(st, f, text, err, len);
	case T_BUDGET:
		return parse_budget(st, f, text, err, len);
	case T_RINGBUF:
		return parse_ringbuf(st, f, text, err, len);
	case T_PATH:
		return parse_path(s, st, f, text, err, len);
	case T_PATHS:
	case T_REGEXES:
		return parse_list_item(s, st, f, text, replace_list, err, len);
	case T_SEVERITY:
		return parse_severity(st, f, text, err, len);
	case T_FORMAT:
		return parse_format(st, f, text, err, len);
	}
	say(err, len, "%s: a setting of unknown type %d", st->key, (int)st->type);
	return -EINVAL;
}

static int set(struct settings *s, const struct setting *st, const char *text, enum setting_source src,
	       const char *where, char *err, size_t len)
{
	struct origin *o = &s->origin[st - table];
	bool replace = o->src != src || o->src == SRC_DEFAULT;
	int e;

	/* A list's items from one source accumulate; a higher source's
	 * replace them. A scalar set twice in one file is refused by the
	 * file's reader; from the command line, the last one wins. */
	e = parse_value(s, st, text, replace, err, len);
	if (e)
		return e;
	o->src = src;
	snprintf(o->where, sizeof(o->where), "%s", where ? where : "");
	return 0;
}

int settings__set(struct settings *s, const char *key, const char *text, enum setting_source source,
		  const char *where, char *err, size_t errlen)
{
	const struct setting *st = find(key);

	if (!st) {
		say(err, errlen, "unknown setting '%s'", key);
		return -ENOENT;
	}
	return set(s, st, text, source, where, err, errlen);
}

/* --- the file -------------------------------------------------------------- */

struct yaml_reader {
	yaml_parser_t p;
	yaml_event_t ev;
	bool have_ev;
	const char *path;
	char *err;
	size_t len;
};

/* The next event. -EINVAL with the parser's reason on a syntax error. */
static int next(struct yaml_reader *y)
{
	if (y->have_ev)
		yaml_event_delete(&y->ev);
	y->have_ev = false;
	if (!yaml_parser_parse(&y->p, &y->ev)) {
		say(y->err, y->len, "%s:%zu: %s%s%s", y->path, y->p.problem_mark.line + 1,
		    y->p.problem ? y->p.problem : "not YAML", y->p.context ? " " : "", y->p.context ? y->p.context : "");
		return -EINVAL;
	}
	y->have_ev = true;
	/* a key or value is a C string from here: "\0" inside one is refused,
	 * not cut */
	if (y->ev.type == YAML_SCALAR_EVENT &&
	    strlen((const char *)y->ev.data.scalar.value) != y->ev.data.scalar.length) {
		say(y->err, y->len, "%s:%zu: a NUL byte (\\0) inside '%s...': a key or value cannot hold one",
		    y->path, y->ev.start_mark.line + 1, (const char *)y->ev.data.scalar.value);
		return -EINVAL;
	}
	return 0;
}

static size_t line_of(const struct yaml_reader *y)
{
	return y->ev.start_mark.line + 1;
}

static int expect(struct yaml_reader *y, yaml_event_type_t t, const char *what)
{
	int e = next(y);

	if (!e && y->ev.type != t) {
		say(y->err, y->len, "%s:%zu: expected %s", y->path, line_of(y), what);
		return -EINVAL;
	}
	return e;
}

static int file_value(struct settings *s, struct yaml_reader *y, const struct setting *st, size_t line)
{
	char where[4200], why[512];
	bool list = st->type == T_PATHS || st->type == T_REGEXES;
	int e;

	snprintf(where, sizeof(where), "%s:%zu", y->path, line);
	if (y->ev.type == YAML_SEQUENCE_START_EVENT && list) {
		size_t n = 0;

		for (;;) {
			e = next(y);
			if (e)
				return e;
			if (y->ev.type == YAML_SEQUENCE_END_EVENT)
				break;
			if (y->ev.type != YAML_SCALAR_EVENT) {
				say(y->err, y->len, "%s:%zu: %s: a list item must be a plain value", y->path,
				    line_of(y), st->key);
				return -EINVAL;
			}
			e = parse_value(s, st, (const char *)y->ev.data.scalar.value, n++ == 0, why, sizeof(why));
			if (e) {
				say(y->err, y->len, "%s:%zu: %s", y->path, line_of(y), why);
				return e;
			}
		}
		if (!n)
			*(size_t *)((char *)s + st->count_offset) = 0;
	} else if (y->ev.type == YAML_SCALAR_EVENT) {
		e = parse_value(s, st, (const char *)y->ev.data.scalar.value, true, why, sizeof(why));
		if (e) {
			say(y->err, y->len, "%s:%zu: %s", y->path, line, why);
			return e;
		}
	} else {
		say(y->err, y->len, "%s:%zu: %s: expected %s", y->path, line, st->key,
		    list ? "a value or a list of values" : "a single value");
		return -EINVAL;
	}
	s->origin[st - table].src = SRC_FILE;
	snprintf(s->origin[st - table].where, sizeof(s->origin[0].where), "%s", where);
	return 0;
}

static int file_section(struct settings *s, struct yaml_reader *y, const char *section, bool *seen)
{
	char key[128];
	int e;

	e = expect(y, YAML_MAPPING_START_EVENT, "a mapping of keys to values under the section");
	if (e) {
		if (y->have_ev && y->ev.type == YAML_SCALAR_EVENT && !y->ev.data.scalar.length)
			return 0;	/* "daemon:" with nothing under it */
		return e;
	}
	for (;;) {
		const struct setting *st;
		size_t line;

		e = next(y);
		if (e)
			return e;
		if (y->ev.type == YAML_MAPPING_END_EVENT)
			return 0;
		if (y->ev.type != YAML_SCALAR_EVENT) {
			say(y->err, y->len, "%s:%zu: expected a key", y->path, line_of(y));
			return -EINVAL;
		}
		line = line_of(y);
		snprintf(key, sizeof(key), "%s.%s", section, (const char *)y->ev.data.scalar.value);
		st = find(key);
		if (!st) {
			say(y->err, y->len, "%s:%zu: unknown key '%s' (inferscope-bpf config show lists them)", y->path,
			    line, key);
			return -EINVAL;
		}
		if (seen[st - table]) {
			say(y->err, y->len, "%s:%zu: %s is set twice (first at %s)", y->path, line, key,
			    s->origin[st - table].where);
			return -EINVAL;
		}
		seen[st - table] = true;
		e = next(y);
		e = e ?: file_value(s, y, st, line);
		if (e)
			return e;
	}
}

static int file_parse(struct settings *s, struct yaml_reader *y)
{
	bool seen[NSETTINGS] = { false };
	bool sections[3] = { false };
	static const char *const names[] = { "record", "analyze", "daemon" };
	int e;

	e = expect(y, YAML_STREAM_START_EVENT, "a YAML stream");
	e = e ?: next(y);
	if (e || y->ev.type == YAML_STREAM_END_EVENT)
		return e;		/* empty: nothing set */
	if (y->ev.type != YAML_DOCUMENT_START_EVENT)
		return expect(y, YAML_DOCUMENT_START_EVENT, "a document");
	e = next(y);
	if (e)
		return e;
	if (y->ev.type == YAML_SCALAR_EVENT && !y->ev.data.scalar.length)
		return 0;		/* a document of comments only */
	if (y->ev.type != YAML_MAPPING_START_EVENT) {
		say(y->err, y->len, "%s:%zu: expected sections (record:, analyze:, daemon:)", y->path, line_of(y));
		return -EINVAL;
	}
	for (;;) {
		char section[64];
		size_t line, i;

		e = next(y);
		if (e)
			return e;
		if (y->ev.type == YAML_MAPPING_END_EVENT)
			break;
		line = line_of(y);
		if (y->ev.type != YAML_SCALAR_EVENT) {
			say(y->err, y->len, "%s:%zu: expected a section name", y->path, line);
			return -EINVAL;
		}
		snprintf(section, sizeof(section), "%s", (const char *)y->ev.data.scalar.value);
		for (i = 0; i < 3 && strcmp(section, names[i]); i++)
			;
		if (i == 3) {
			say(y->err, y->len, "%s:%zu: unknown section '%s' (expected record, analyze or daemon)",
			    y->path, line, section);
			return -EINVAL;
		}
		if (sections[i]) {
			say(y->err, y->len, "%s:%zu: section %s appears twice", y->path, line, section);
			return -EINVAL;
		}
		sections[i] = true;
		e = file_section(s, y, section, seen);
		if (e)
			return e;
	}
	e = next(y);
	if (!e && y->ev.type != YAML_DOCUMENT_END_EVENT)
		return expect(y, YAML_DOCUMENT_END_EVENT, "the end of the document");
	e = e ?: next(y);
	if (!e && y->ev.type != YAML_STREAM_END_EVENT) {
		say(y->err, y->len, "%s:%zu: one YAML document only", y->path, line_of(y));
		return -EINVAL;
	}
	return e;
}

int settings__load_file(struct settings *s, const char *path, char *err, size_t errlen)
{
	struct yaml_reader y = { .err = err, .len = errlen };
	bool given = path != NULL;
	FILE *f;
	int e;

	if (!path)
		path = SETTINGS_DEFAULT_FILE;
	f = fopen(path, "r");
	if (!f) {
		e = -errno;
		if (!given && e == -ENOENT)
			return 0;
		say(err, errlen, "%s: cannot open: %s", path, strerror(-e));
		return e;
	}
	y.path = path;
	if (!yaml_parser_initialize(&y.p)) {
		fclose(f);
		say(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	yaml_parser_set_input_file(&y.p, f);
	e = file_parse(s, &y);
	if (y.have_ev)
		yaml_event_delete(&y.ev);
	yaml_parser_delete(&y.p);
	if (ferror(f) && !e) {
		say(err, errlen, "%s: read error", path);
		e = -EIO;
	}
	fclose(f);
	if (!e)
		snprintf(s->file, sizeof(s->file), "%s", path);
	return e;
}

/* --- the environment -------------------------------------------------------- */

void settings__env_name(const char *key, char *out, size_t len)
{
	size_t n = (size_t)snprintf(out, len, "INFERSCOPE_%s", key);

	for (size_t i = 0; i < n && i < len; i++)
		out[i] = out[i] == '.' ? '_' : (char)toupper((unsigned char)out[i]);
}

int settings__load_env(struct settings *s, char *const *envp, char *err, size_t errlen)
{
	static const char *const prefixes[] = { "INFERSCOPE_RECORD_", "INFERSCOPE_ANALYZE_", "INFERSCOPE_DAEMON_" };
	char name[128], why[512];
	int e;

	if (!envp)
		envp = environ;
	for (char *const *v = envp; *v; v++) {
		const char *eq = strchr(*v, '='), *value;
		const struct setting *st = NULL;
		bool ours = false;
		size_t n;

		if (!eq)
			continue;
		n = (size_t)(eq - *v);
		for (size_t i = 0; i < 3; i++)
			ours |= !strncmp(*v, prefixes[i], strlen(prefixes[i]));
		if (!ours)
			continue;
		for (size_t i = 0; i < NSETTINGS && !st; i++) {
			settings__env_name(table[i].key, name, sizeof(name));
			if (strlen(name) == n && !strncmp(*v, name, n))
				st = &table[i];
		}
		if (!st) {
			say(err, errlen, "%.*s: not a setting (inferscope-bpf config show lists them)", (int)n, *v);
			return -EINVAL;
		}
		value = eq + 1;
		snprintf(name, sizeof(name), "%.*s", (int)n, *v);
		if (st->type == T_PATHS) {
			/* ':'-separated, as PATH */
			char *copy = strdup(value), *save = NULL, *tok;
			bool first = true;

			if (!copy)
				return -ENOMEM;
			e = 0;
			for (tok = strtok_r(copy, ":", &save); tok && !e; tok = strtok_r(NULL, ":", &save)) {
				e = parse_value(s, st, tok, first, why, sizeof(why));
				first = false;
			}
			free(copy);
			if (!e && first)
				e = parse_value(s, st, "", true, why, sizeof(why));
		} else {
			e = parse_value(s, st, value, true, why, sizeof(why));
		}
		if (e) {
			say(err, errlen, "%s: %s", name, why);
			return e;
		}
		s->origin[st - table].src = SRC_ENV;
		snprintf(s->origin[st - table].where, sizeof(s->origin[0].where), "%s", name);
	}
	return 0;
}

/* --- checks and accessors ----------------------------------------------------- */

static const char *where_of(const struct settings *s, const char *key)
{
	const struct origin *o = &s->origin[find(key) - table];

	return o->src == SRC_DEFAULT ? "default" : o->where;
}

/* key's length of time v against daemon.interval: -EINVAL, and why, when
 * it is longer. */
static int within_interval(const struct settings *s, const char *key, double v, const char *why, char *err,
			   size_t errlen)
{
	if (v <= s->daemon.interval_s)
		return 0;
	say(err, errlen, "%s (%g s, from %s) is longer than daemon.interval (%g s, from %s): %s", key, v,
	    where_of(s, key), s->daemon.interval_s, where_of(s, "daemon.interval"), why);
	return -EINVAL;
}

int settings__check(const struct settings *s, char *err, size_t errlen)
{
	/* in flight-recorder mode the interval is recorded whole: no window
	 * of its own */
	if (s->daemon.flight_s > 0)
		return within_interval(s, "daemon.flight_recorder", s->daemon.flight_s,
				       "the memory would hold more than an interval records", err, errlen);
	return within_interval(s, "daemon.window", s->daemon.window_s, "a window must end before the next one starts",
			       err, errlen);
}

struct record_config *settings__record(struct settings *s)
{
	return &s->rec;
}

const struct daemon_config *settings__daemon(const struct settings *s)
{
	return &s->daemon;
}

int settings__report_format(const struct settings *s)
{
	return s->format;
}

const char *settings__file(const struct settings *s)
{
	return s->file;
}

int settings__source(const struct settings *s, const char *key, enum setting_source *source, const char **where)
{
	const struct setting *st = find(key);

	if (!st)
		return -ENOENT;
	*source = s->origin[st - table].src;
	*where = s->origin[st - table].where;
	return 0;
}

const char *setting_source_name(enum setting_source src)
{
	switch (src) {
	case SRC_FILE:
		return "file";
	case SRC_ENV:
		return "environment";
	case SRC_OPTION:
		return "option";
	default:
		return "default";
	}
}

size_t settings__option_count(void)
{
	return NOPTIONS;
}

const struct setting_option *settings__option(size_t i)
{
	return i < NOPTIONS ? &options[i] : NULL;
}

const char *settings__doc(const char *key)
{
	const struct setting *st = find(key);

	return st ? st->doc : NULL;
}

/* The first option that sets key ("" when none). */
static const char *option_of(const char *key)
{
	for (size_t i = 0; i < NOPTIONS; i++)
		if (!strcmp(options[i].key, key))
			return options[i].name;
	return "";
}

size_t settings__count(void)
{
	return NSETTINGS;
}

const char *settings__key(size_t i)
{
	return i < NSETTINGS ? table[i].key : NULL;
}

/* --- config show ------------------------------------------------------------------ */

static json_t *value_json(const struct settings *s, const struct setting *st)
{
	const void *f = cfield(s, st);

	switch (st->type) {
	case T_BOOL:
		return json_boolean(*(const bool *)f);
	case T_UINT:
		return json_integer(*(const unsigned int *)f);
	case T_INT:
		return json_integer(*(const int *)f);
	case T_SECONDS:
		return json_real(*(const double *)f);
	case T_BYTES:
		return json_integer((json_int_t) * (const __u64 *)f);
	case T_BUDGET:
		return *(const double *)f > 0 ? json_real(*(const double *)f) : json_string("off");
	case T_RINGBUF:
		return json_integer((json_int_t)(*(const size_t *)f >> 20));
	case T_PATH:
		return *(const char *const *)f ? json_string(*(const char *const *)f) : json_null();
	case T_PATHS:
	case T_REGEXES: {
		const char *const *v = f;
		size_t n = *(const size_t *)((const char *)s + st->count_offset);
		json_t *a = json_array();

		for (size_t i = 0; a && i < n; i++)
			if (json_array_append_new(a, json_string(v[i]))) {
				json_decref(a);
				return NULL;
			}
		return a;
	}
	case T_SEVERITY: {
		static const char *const names[] = { "info", "warning", "critical", "none" };
		int v = *(const int *)f;

		return json_string(v >= 1 && v <= 4 ? names[v - 1] : "none");
	}
	case T_FORMAT: {
		int v = *(const int *)f;

		return json_string(v == REPORT_JSON ? "json" : v == REPORT_HTML ? "html" :
				   v == REPORT_PERFETTO ? "perfetto" : "md");
	}
	}
	return NULL;
}

int settings__show(const struct settings *s, FILE *out, bool json)
{
	json_t *root = json ? json_object() : NULL, *arr = json ? json_array() : NULL;
	int e = 0;

	if (json && (!root || !arr || json_object_set_new(root, "file", s->file[0] ? json_string(s->file) : json_null()) ||
		     json_object_set(root, "settings", arr))) {
		e = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < NSETTINGS; i++) {
		const struct setting *st = &table[i];
		const struct origin *o = &s->origin[i];
		json_t *v = value_json(s, st);
		char env[128];

		if (!v) {
			e = -ENOMEM;
			goto out;
		}
		settings__env_name(st->key, env, sizeof(env));
		if (json) {
			json_t *item = json_pack("{s:s, s:o, s:s, s:s, s:s, s:s+}", "key", st->key, "value", v, "source",
						 setting_source_name(o->src), "where", o->where, "environment", env,
						 "option", "--", option_of(st->key));

			if (!item || json_array_append_new(arr, item)) {
				json_decref(item);
				e = -ENOMEM;
				goto out;
			}
		} else {
			char *text = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);

			json_decref(v);
			if (!text) {
				e = -ENOMEM;
				goto out;
			}
			fprintf(out, "%-22s %-34s %s%s%s\n", st->key, text, setting_source_name(o->src),
				o->where[0] ? " " : "", o->where);
			free(text);
		}
	}
	if (json && json_dumpf(root, out, JSON_INDENT(2)) == 0)
		fputc('\n', out);
	else if (json)
		e = -EIO;
	if (!json)
		fprintf(out, "# file: %s\n", s->file[0] ? s->file : "none");
	if (fflush(out))
		e = -errno;
out:
	json_decref(arr);
	json_decref(root);
	return e;
}
