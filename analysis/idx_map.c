// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "idx_map.h"

static size_t slot_of(const struct idx_map *m, __u64 key)
{
	size_t i = (size_t)((key * 0x9e3779b97f4a7c15ULL) >> 32) & (m->cap - 1);

	while (m->keys[i] && m->keys[i] != key)
		i = (i + 1) & (m->cap - 1);
	return i;
}

const __u32 *idx_map__get(const struct idx_map *m, __u64 key)
{
	size_t i;

	if (!m->cap)
		return NULL;
	i = slot_of(m, key);
	return m->keys[i] ? &m->vals[i] : NULL;
}

int idx_map__put(struct idx_map *m, __u64 key, __u32 val)
{
	size_t i;

	if ((m->len + 1) * 2 > m->cap) {
		struct idx_map b = { .cap = m->cap ? m->cap * 2 : 64 };

		b.keys = calloc(b.cap, sizeof(*b.keys));
		b.vals = calloc(b.cap, sizeof(*b.vals));
		if (!b.keys || !b.vals) {
			free(b.keys);
			free(b.vals);
			return -ENOMEM;
		}
		for (size_t j = 0; j < m->cap; j++) {
			if (!m->keys[j])
				continue;
			i = slot_of(&b, m->keys[j]);
			b.keys[i] = m->keys[j];
			b.vals[i] = m->vals[j];
		}
		b.len = m->len;
		free(m->keys);
		free(m->vals);
		*m = b;
	}
	i = slot_of(m, key);
	if (!m->keys[i]) {
		m->keys[i] = key;
		m->len++;
	}
	m->vals[i] = val;
	return 0;
}

void idx_map__free(struct idx_map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

bool idx_map__del(struct idx_map *m, __u64 key)
{
	size_t i, j, mask = m->cap - 1;

	if (!m->len)
		return false;
	i = slot_of(m, key);
	if (!m->keys[i])
		return false;
	/* backward shift: pull later keys of the run into the hole unless
	 * their home lies cyclically in (hole, their slot] */
	for (j = (i + 1) & mask; m->keys[j]; j = (j + 1) & mask) {
		size_t home = (size_t)((m->keys[j] * 0x9e3779b97f4a7c15ULL) >> 32) & mask;
		bool stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);

		if (stays)
			continue;
		m->keys[i] = m->keys[j];
		m->vals[i] = m->vals[j];
		i = j;
	}
	m->keys[i] = 0;
	m->len--;
	return true;
}
