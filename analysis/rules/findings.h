/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Findings: what the rules concluded, as data that every renderer shows the
 * same way. A finding names its rule (a stable id, docs/rules.md), its
 * severity, its cost (the wall time of the job it explains, in seconds),
 * a one-paragraph summary, the evidence behind it (a JSON object: numbers,
 * threads, Python lines, time ranges) and a suggestion. Judgements a rule
 * could not make for want of a source are listed apart, with what enables
 * them.
 */
#ifndef INFERSCOPE_FINDINGS_H
#define INFERSCOPE_FINDINGS_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include <jansson.h>

enum finding_severity {
	SEV_INFO = 1,		/* worth knowing, costs little */
	SEV_WARNING = 2,	/* costs the job noticeable time or memory */
	SEV_CRITICAL = 3,	/* the main reason the job is slow */
};

const char *finding_severity_name(enum finding_severity s);	/* "info", "warning", "critical" */

struct finding {
	const char *rule;		/* stable id: "gpu_idle", ... */
	enum finding_severity severity;
	double cost_s;			/* wall time explained; 0 for a memory finding */
	__u32 pid, tid;			/* subject: tid 0 for a process, pid 0 for the host */
	char *summary;
	char *suggestion;
	json_t *evidence;		/* an object, owned */
};

struct not_judged {
	const char *rule;
	const char *needs;		/* the flag or source that enables it */
};

struct findings {
	struct finding *v;
	size_t n, cap;
	struct not_judged *nj;
	size_t nnj, njcap;
};

/* A new finding (summary and suggestion empty, evidence an empty object),
 * appended to fs; NULL when out of memory. */
struct finding *findings__add(struct findings *fs, const char *rule, enum finding_severity sev, double cost_s,
			      __u32 pid, __u32 tid);
/* Appends to the summary / suggestion. 0 or -ENOMEM. */
int finding__say(struct finding *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int finding__suggest(struct finding *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A judgement `rule` could not make without `needs`. 0 or -ENOMEM. */
int findings__not_judged(struct findings *fs, const char *rule, const char *needs);
/* The first finding (index) of fs before or at i with the same rule and
 * word for word the same suggestion as finding i: i when none comes
 * before it (the reports give the advice once, and "as for finding N"
 * after). */
size_t findings__same_advice(const struct findings *fs, size_t i);
/* Removes (and frees) every finding drop says to, keeping the others'
 * order. */
void findings__remove_if(struct findings *fs, bool (*drop)(const struct finding *f, void *ctx), void *ctx);
/* Most cost first; of equal cost, the more severe, then the rule id. */
void findings__rank(struct findings *fs);
void findings__free(struct findings *fs);

/* Evidence helpers: set key of obj (a reference is stolen). */
void ev_set(json_t *obj, const char *key, json_t *val);
json_t *ev_seconds(__u64 ns);		/* a real, seconds */
json_t *ev_u64(__u64 v);
/* A string of the recording (a name, a site, a finding's text: any bytes),
 * its first maxlen bytes up to a NUL, as JSON: valid UTF-8 (lib/text.h).
 * JSON null for a NULL s; NULL when out of memory. */
json_t *ev_text(const char *s, size_t maxlen);

#endif
