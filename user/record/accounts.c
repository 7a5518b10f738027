// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "accounts.h"

#define PASSWD_FILE "/etc/passwd"
#define GROUP_FILE "/etc/group"
#define MAX_FIELDS 8

/* A decimal id: 1 with *v set, 0 when s is not a number, -EINVAL when it
 * is one out of range. */
static int parse_id(const char *s, unsigned int *v)
{
	unsigned long n;
	char *end;

	if (!*s || *s < '0' || *s > '9')
		return 0;
	errno = 0;
	n = strtoul(s, &end, 10);
	if (*end)
		return 0;
	if (errno || n >= (unsigned long)(unsigned int)-1)
		return -EINVAL;
	*v = (unsigned int)n;
	return 1;
}

/* Splits a line of colon-separated fields in place: the field count. */
static int split(char *line, char **f, int max)
{
	int n = 0;

	line[strcspn(line, "\n")] = '\0';
	f[n++] = line;
	while (n < max && (line = strchr(line, ':'))) {
		*line++ = '\0';
		f[n++] = line;
	}
	return n;
}

/* Calls match on every line of file until it returns non-zero: that
 * value, 0 when none did, or -errno. */
static int each_line(const char *file, int (*match)(char **f, int n, void *ctx), void *ctx)
{
	char line[4096], *f[MAX_FIELDS];
	FILE *fp = fopen(file, "re");
	int r = 0;

	if (!fp)
		return -errno;
	while (!r && fgets(line, sizeof(line), fp))
		if (line[0] != '#' && line[0] != '+' && line[0] != '-')
			r = match(f, split(line, f, MAX_FIELDS), ctx);
	fclose(fp);
	return r;
}

/* The line of file that match accepts: 0, -ENOENT when none does, or
 * -errno. */
static int find(const char *file, int (*match)(char **f, int n, void *ctx), void *ctx)
{
	int r = each_line(file, match, ctx);

	return r == 1 ? 0 : r ? r : -ENOENT;
}

struct user_query {
	const char *name;	/* or NULL: by uid */
	uid_t uid;
	struct account *a;
};

static int user_match(char **f, int n, void *ctx)
{
	struct user_query *q = ctx;
	unsigned int uid, gid;

	if (n < 7 || parse_id(f[2], &uid) != 1 || parse_id(f[3], &gid) != 1)
		return 0;
	if (q->name ? strcmp(f[0], q->name) != 0 : uid != q->uid)
		return 0;
	q->a->uid = uid;
	q->a->gid = gid;
	snprintf(q->a->name, sizeof(q->a->name), "%s", f[0]);
	snprintf(q->a->home, sizeof(q->a->home), "%s", f[5]);
	snprintf(q->a->shell, sizeof(q->a->shell), "%s", f[6]);
	return 1;
}

int accounts__user_by_uid(uid_t uid, struct account *a)
{
	struct user_query q = { NULL, uid, a };

	return find(PASSWD_FILE, user_match, &q);
}

int accounts__user(const char *name, struct account *a)
{
	struct user_query q = { name, 0, a };
	unsigned int id;
	int r = parse_id(name, &id);

	if (r < 0)
		return r;
	if (r == 1) {
		if (accounts__user_by_uid(id, a) == 0)
			return 0;
		memset(a, 0, sizeof(*a));
		a->uid = id;
		a->gid = (gid_t)-1;
		return 0;
	}
	return find(PASSWD_FILE, user_match, &q);
}

struct group_query {
	const char *name;
	gid_t *gid;
};

static int group_match(char **f, int n, void *ctx)
{
	struct group_query *q = ctx;
	unsigned int gid;

	if (n < 3 || strcmp(f[0], q->name) || parse_id(f[2], &gid) != 1)
		return 0;
	*q->gid = gid;
	return 1;
}

int accounts__group(const char *name, gid_t *gid)
{
	struct group_query q = { name, gid };
	unsigned int id;
	int r = parse_id(name, &id);

	if (r < 0)
		return r;
	if (r == 1) {
		*gid = id;
		return 0;
	}
	return find(GROUP_FILE, group_match, &q);
}

struct member_query {
	const char *user;
	gid_t *out;
	size_t n, max;
};

static int member_match(char **f, int n, void *ctx)
{
	struct member_query *q = ctx;
	unsigned int gid;
	size_t i;
	char *m, *save = NULL;

	if (n < 4 || parse_id(f[2], &gid) != 1)
		return 0;
	for (m = strtok_r(f[3], ",", &save); m; m = strtok_r(NULL, ",", &save)) {
		if (strcmp(m, q->user))
			continue;
		for (i = 0; i < q->n && q->out[i] != gid; i++)
			;
		if (i == q->n && q->n < q->max)
			q->out[q->n++] = gid;
		break;
	}
	return 0;
}

int accounts__groups_of(const char *user, gid_t primary, gid_t *out, size_t max)
{
	struct member_query q = { user, out, 0, max };
	int r;

	if (!max)
		return 0;
	out[q.n++] = primary;
	r = each_line(GROUP_FILE, member_match, &q);
	return r < 0 ? r : (int)q.n;
}
