// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <string.h>
#include <bpf/btf.h>
#include "kernel_btf.h"

/* Member name (len bytes) of struct or union id: its byte offset, its type
 * (typedefs and modifiers skipped) to *type_id; -1: none. */
static long member(const struct btf *btf, __u32 id, const char *name, size_t len, __u32 *type_id)
{
	const struct btf_type *t = btf__type_by_id(btf, id);
	const struct btf_member *m;

	if (!t || !(btf_is_struct(t) || btf_is_union(t)))
		return -1;
	m = btf_members(t);
	for (__u16 i = 0; i < btf_vlen(t); i++, m++) {
		const char *n = btf__name_by_offset(btf, m->name_off);
		__u32 bits = btf_member_bit_offset(t, i);
		int resolved;

		if (!n || strlen(n) != len || memcmp(n, name, len) || bits % 8 || btf_member_bitfield_size(t, i))
			continue;
		resolved = btf__resolve_type(btf, m->type);
		if (resolved < 0)
			return -1;
		*type_id = (__u32)resolved;
		return (long)(bits / 8);
	}
	return -1;
}

long kernel_btf__offset(const struct btf *btf, const char *type, const char *path)
{
	__s32 id = btf__find_by_name_kind(btf, type, BTF_KIND_STRUCT);
	__u32 cur;
	long off = 0;

	if (id <= 0)
		return -1;
	cur = (__u32)id;
	while (*path) {
		const char *dot = strchr(path, '.');
		size_t len = dot ? (size_t)(dot - path) : strlen(path);
		long at = member(btf, cur, path, len, &cur);

		if (at < 0)
			return -1;
		off += at;
		path += len + (dot ? 1 : 0);
	}
	return off;
}
