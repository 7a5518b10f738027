// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include "accounts.h"
#include "proc.h"
#include "run_as.h"

/* An id from the environment: 0 unset, 1 set (*v), -EINVAL not a number. */
static int env_id(const char *name, unsigned int *v)
{
	const char *s = getenv(name);
	unsigned long n;
	char *end;

	if (!s)
		return 0;
	errno = 0;
	n = strtoul(s, &end, 10);
	if (errno || end == s || *end || n >= (unsigned long)(unsigned int)-1)
		return -EINVAL;
	*v = (unsigned int)n;
	return 1;
}

/* The value after key on a line of a /proc status text, or NULL. */
static const char *status_line(const char *status, const char *key)
{
	size_t klen = strlen(key);

	for (const char *p = status; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (!strncmp(p, key, klen))
			return p + klen;
	return NULL;
}

/* The supplementary groups of the nearest ancestor whose real uid is uid:
 * the invoking user's session as it holds them (directory-service groups
 * included), which sudo passed through unchanged. 1 when found, else 0. */
static int session_groups(uid_t uid, struct run_as *r)
{
	char path[64], status[8192];
	long pid = getppid();

	for (int depth = 0; depth < 32 && pid > 1; depth++) {
		const char *u, *g, *pp;
		char *end;

		snprintf(path, sizeof(path), "/proc/%ld/status", pid);
		if (proc__read_small(path, status, sizeof(status)) < 0)
			return 0;
		u = status_line(status, "Uid:");
		g = status_line(status, "Groups:");
		pp = status_line(status, "PPid:");
		if (!u || !pp)
			return 0;
		if (strtoul(u, NULL, 10) == uid && g) {
			r->ngroups = 0;
			for (;;) {
				unsigned long v;

				while (*g == ' ' || *g == '\t')
					g++;
				if (*g < '0' || *g > '9' || r->ngroups == RUN_AS_MAX_GROUPS)
					break;
				v = strtoul(g, &end, 10);
				r->groups[r->ngroups++] = (gid_t)v;
				g = end;
			}
			return 1;
		}
		pid = strtol(pp, NULL, 10);
	}
	return 0;
}

static void from_account(struct run_as *r, const struct account *a)
{
	snprintf(r->user, sizeof(r->user), "%s", a->name);
	snprintf(r->home, sizeof(r->home), "%s", a->home);
	snprintf(r->shell, sizeof(r->shell), "%s", a->shell);
}

static int resolve_sudo(struct run_as *r, char *err, size_t errlen)
{
	unsigned int uid, gid;
	struct account a;
	int su = env_id("SUDO_UID", &uid), sg = env_id("SUDO_GID", &gid);
	const char *name = getenv("SUDO_USER");
	int n;

	if (su == 0 || geteuid() != 0)
		return 0;
	if (su < 0 || sg <= 0) {
		snprintf(err, errlen, "SUDO_UID (%s) and SUDO_GID (%s) do not name a user and a group, so the command "
			 "cannot be run as the user who invoked sudo: give --user USER, or --run-as-root",
			 getenv("SUDO_UID"), getenv("SUDO_GID") ? getenv("SUDO_GID") : "unset");
		return -EINVAL;
	}
	if (uid == 0)
		return 0;	/* sudo from root */
	r->change = true;
	r->uid = uid;
	r->gid = gid;
	r->source = "sudo";
	if (accounts__user_by_uid(uid, &a) == 0)
		from_account(r, &a);
	else if (name)
		snprintf(r->user, sizeof(r->user), "%s", name);
	if (session_groups(uid, r)) {
		r->groups_from = "the groups of the session that ran sudo";
		return 0;
	}
	n = r->user[0] ? accounts__groups_of(r->user, gid, r->groups, RUN_AS_MAX_GROUPS) : 0;
	if (n < 0) {
		snprintf(err, errlen, "cannot read the groups of %s from /etc/group: %s", r->user, strerror(-n));
		return n;
	}
	if (n == 0) {
		r->groups[0] = gid;
		n = 1;
	}
	r->ngroups = (size_t)n;
	r->groups_from = "/etc/group";
	return 0;
}

/* --user NAME or UID[:GID]. */
static int resolve_user(const char *spec, struct run_as *r, char *err, size_t errlen)
{
	char name[128], *colon;
	struct account a;
	gid_t gid;
	int e, n;

	if (snprintf(name, sizeof(name), "%s", spec) >= (int)sizeof(name)) {
		snprintf(err, errlen, "--user: '%s' is too long for a user name", spec);
		return -EINVAL;
	}
	colon = strchr(name, ':');
	if (colon)
		*colon++ = '\0';
	e = accounts__user(name, &a);
	if (e) {
		snprintf(err, errlen, "--user: %s%s%s", e == -ENOENT ? "no user '" : "cannot look up '", name,
			 e == -ENOENT ? "' in /etc/passwd (a user of a directory service: give UID:GID)" : "'");
		return e == -ENOENT ? -EINVAL : e;
	}
	if (colon) {
		e = accounts__group(colon, &gid);
		if (e) {
			snprintf(err, errlen, "--user: no group '%s' in /etc/group (give its number)", colon);
			return -EINVAL;
		}
		a.gid = gid;
	}
	if (a.gid == (gid_t)-1) {
		snprintf(err, errlen, "--user: uid %s is not in /etc/passwd: give its group too (UID:GID)", name);
		return -EINVAL;
	}
	if (geteuid() != 0 && a.uid != geteuid()) {
		snprintf(err, errlen, "--user %s: only root can run the command as another user", spec);
		return -EPERM;
	}
	r->change = true;
	r->uid = a.uid;
	r->gid = a.gid;
	r->source = "--user";
	from_account(r, &a);
	n = a.name[0] ? accounts__groups_of(a.name, a.gid, r->groups, RUN_AS_MAX_GROUPS) : 0;
	if (n < 0) {
		snprintf(err, errlen, "cannot read the groups of %s from /etc/group: %s", a.name, strerror(-n));
		return n;
	}
	if (n == 0) {
		r->groups[0] = a.gid;
		n = 1;
	}
	r->ngroups = (size_t)n;
	r->groups_from = "/etc/group";
	return 0;
}

int run_as__resolve(enum run_as_mode mode, const char *user, struct run_as *r, char *err, size_t errlen)
{
	memset(r, 0, sizeof(*r));
	switch (mode) {
	case RUN_AS_USER:
		return resolve_user(user, r, err, errlen);
	case RUN_AS_INVOKER:
		return resolve_sudo(r, err, errlen);
	default:
		return 0;
	}
}

int run_as__apply(const struct run_as *r)
{
	uid_t ru, eu, su;
	gid_t rg, eg, sg;

	if (!r->change)
		return 0;
	if (setgroups(r->ngroups, r->groups) || setresgid(r->gid, r->gid, r->gid) || setresuid(r->uid, r->uid, r->uid))
		return -errno;
	if (getresuid(&ru, &eu, &su) || getresgid(&rg, &eg, &sg) || ru != r->uid || eu != r->uid || su != r->uid ||
	    rg != r->gid || eg != r->gid || sg != r->gid)
		return -EPERM;
	if (r->uid != 0 && setuid(0) == 0)	/* no way back */
		return -EPERM;
	if (r->user[0] && (setenv("USER", r->user, 1) || setenv("LOGNAME", r->user, 1)))
		return -errno;
	if (r->home[0] ? setenv("HOME", r->home, 1) : unsetenv("HOME"))
		return -errno;
	if (r->shell[0] && setenv("SHELL", r->shell, 1))
		return -errno;
	return 0;
}

int run_as__can_read(const struct run_as *r, const char *path)
{
	int status;
	pid_t pid;

	if (!r->change)
		return access(path, R_OK) ? -errno : 0;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		if (setgroups(r->ngroups, r->groups) || setresgid(r->gid, r->gid, r->gid) ||
		    setresuid(r->uid, r->uid, r->uid))
			_exit(255);
		_exit(access(path, R_OK) ? (errno & 0xff) : 0);
	}
	if (waitpid(pid, &status, 0) != pid)
		return -errno;
	if (!WIFEXITED(status) || WEXITSTATUS(status) == 255)
		return -EPERM;
	return -WEXITSTATUS(status);
}
