/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A u64 -> u32 map (open addressing, linear probing) for the analysis'
 * indexes: a key to the position of its entry in an array. Key 0 is never
 * stored (callers offset keys that may be 0). A zeroed struct is an empty
 * map.
 */
#ifndef INFERSCOPE_IDX_MAP_H
#define INFERSCOPE_IDX_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct idx_map {
	__u64 *keys;
	__u32 *vals;
	size_t cap, len;
};

/* The value of key, or NULL. */
const __u32 *idx_map__get(const struct idx_map *m, __u64 key);
/* Sets key to val. 0 or -ENOMEM. */
int idx_map__put(struct idx_map *m, __u64 key, __u32 val);
/* Removes key; false when it was not there. */
bool idx_map__del(struct idx_map *m, __u64 key);
/* Frees the tables and empties m. */
void idx_map__free(struct idx_map *m);

#endif
