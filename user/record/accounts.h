/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Users and groups from the files database (/etc/passwd, /etc/group), or
 * given as numbers. The release binary is static, and glibc's NSS lookups
 * (getpwnam, getgrnam, initgroups) in a static program load the host's NSS
 * modules, which must come from the very glibc it was linked with: on a
 * host with another glibc they fail or crash. So nothing here loads a
 * module; a user or group known only to a directory service (LDAP, SSSD)
 * is given by number.
 */
#ifndef INFERSCOPE_ACCOUNTS_H
#define INFERSCOPE_ACCOUNTS_H

#include <limits.h>
#include <stddef.h>
#include <sys/types.h>

struct account {
	uid_t uid;
	gid_t gid;			/* primary group */
	char name[64];
	char home[PATH_MAX];		/* "" when unknown */
	char shell[PATH_MAX];		/* "" when unknown */
};

/* The user named name in /etc/passwd, or of that uid when name is a
 * number. 0, -ENOENT (no such user), -EINVAL (a bad number) or -errno of
 * reading /etc/passwd. A number not in /etc/passwd is found with gid
 * (gid_t)-1 and an empty name. */
int accounts__user(const char *name, struct account *a);
/* The user with this uid in /etc/passwd: 0, -ENOENT or -errno. */
int accounts__user_by_uid(uid_t uid, struct account *a);
/* The group named name in /etc/group, or the number name: 0, -ENOENT,
 * -EINVAL or -errno. */
int accounts__group(const char *name, gid_t *gid);
/* The groups /etc/group lists user as a member of, after primary (always
 * first): their count (at most max), or -errno. */
int accounts__groups_of(const char *user, gid_t primary, gid_t *out, size_t max);

#endif
