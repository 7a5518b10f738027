// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "htab.h"

#define MIN_CAP 16

void htab__init(struct htab *h, size_t entry_size, htab_hash_fn hash, htab_equal_fn equal)
{
	memset(h, 0, sizeof(*h));
	h->entry_size = entry_size;
	h->hash = hash;
	h->equal = equal;
}

void htab__free(struct htab *h)
{
	free(h->entries);
	free(h->hashes);
	h->entries = NULL;
	h->hashes = NULL;
	h->cap = 0;
	h->len = 0;
}

static void *slot(const struct htab *h, size_t i)
{
	return h->entries + i * h->entry_size;
}

static __u64 hash_of(const struct htab *h, const void *entry)
{
	__u64 v = h->hash(entry);

	return v ? v : 1;	/* 0 marks an empty slot */
}

/* The slot of the entry equal to key (hash v), or the empty slot where
 * its probe run ends. */
static size_t probe(const struct htab *h, const void *key, __u64 v)
{
	size_t mask = h->cap - 1, i = (size_t)v & mask;

	while (h->hashes[i] && (h->hashes[i] != v || !h->equal(slot(h, i), key)))
		i = (i + 1) & mask;
	return i;
}

void *htab__find(const struct htab *h, const void *key)
{
	size_t i;

	if (!h->len)
		return NULL;
	i = probe(h, key, hash_of(h, key));
	return h->hashes[i] ? slot(h, i) : NULL;
}

static int grow(struct htab *h)
{
	size_t cap = h->cap ? 2 * h->cap : MIN_CAP, mask = cap - 1, i, j;
	unsigned char *entries = calloc(cap, h->entry_size);
	__u64 *hashes = calloc(cap, sizeof(*hashes));

	if (!entries || !hashes) {
		free(entries);
		free(hashes);
		return -ENOMEM;
	}
	for (i = 0; i < h->cap; i++) {
		if (!h->hashes[i])
			continue;
		for (j = (size_t)h->hashes[i] & mask; hashes[j]; j = (j + 1) & mask)
			;
		hashes[j] = h->hashes[i];
		memcpy(entries + j * h->entry_size, slot(h, i), h->entry_size);
	}
	free(h->entries);
	free(h->hashes);
	h->entries = entries;
	h->hashes = hashes;
	h->cap = cap;
	return 0;
}

void *htab__insert(struct htab *h, const void *key, bool *added)
{
	__u64 v = hash_of(h, key);
	size_t i;

	*added = false;
	if ((h->len + 1) * 2 > h->cap && grow(h)) {
		errno = ENOMEM;
		return NULL;
	}
	i = probe(h, key, v);
	if (!h->hashes[i]) {
		h->hashes[i] = v;
		memcpy(slot(h, i), key, h->entry_size);
		h->len++;
		*added = true;
	}
	return slot(h, i);
}

/* Empties slot i, pulling back every later entry of its probe run that
 * may not sit after the hole: one whose home is not cyclically in (hole,
 * its slot]. */
static void remove_at(struct htab *h, size_t i)
{
	size_t mask = h->cap - 1, j;

	for (j = (i + 1) & mask; h->hashes[j]; j = (j + 1) & mask) {
		size_t home = (size_t)h->hashes[j] & mask;
		bool stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);

		if (stays)
			continue;
		h->hashes[i] = h->hashes[j];
		memcpy(slot(h, i), slot(h, j), h->entry_size);
		i = j;
	}
	h->hashes[i] = 0;
	h->len--;
}

bool htab__remove(struct htab *h, const void *key, void *out)
{
	size_t i;

	if (!h->len)
		return false;
	i = probe(h, key, hash_of(h, key));
	if (!h->hashes[i])
		return false;
	if (out)
		memcpy(out, slot(h, i), h->entry_size);
	remove_at(h, i);
	return true;
}

/* After a removal at i, slot i holds an entry pulled back from later in
 * its run (not yet looked at) or is empty: look at it again. Entries only
 * move back, so none is skipped; one that wrapped around from the start
 * may be looked at twice, which drop answers the same way. */
void htab__remove_if(struct htab *h, bool (*drop)(void *entry, void *ctx), void *ctx)
{
	size_t i = 0;

	while (i < h->cap) {
		if (h->hashes[i] && drop(slot(h, i), ctx))
			remove_at(h, i);
		else
			i++;
	}
}

void *htab__next(const struct htab *h, size_t *pos)
{
	while (*pos < h->cap) {
		size_t i = (*pos)++;

		if (h->hashes[i])
			return slot(h, i);
	}
	return NULL;
}

/* splitmix64's finalizer */
__u64 hash__u64(__u64 v)
{
	v ^= v >> 30;
	v *= 0xbf58476d1ce4e5b9ULL;
	v ^= v >> 27;
	v *= 0x94d049bb133111ebULL;
	return v ^ (v >> 31);
}

__u64 hash__mix(__u64 h, __u64 v)
{
	return hash__u64(h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)));
}

/* FNV-1a, finalized */
__u64 hash__str(const char *s)
{
	__u64 h = 1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return hash__u64(h);
}

__u64 htab_u64__hash(const void *entry)
{
	return hash__u64(((const struct htab_u64 *)entry)->key);
}

bool htab_u64__equal(const void *a, const void *b)
{
	return ((const struct htab_u64 *)a)->key == ((const struct htab_u64 *)b)->key;
}

bool htab_u64__get(const struct htab *h, __u64 key, __u64 *val)
{
	const struct htab_u64 k = { .key = key }, *e = htab__find(h, &k);

	if (!e)
		return false;
	*val = e->val;
	return true;
}

int htab_u64__put(struct htab *h, __u64 key, __u64 val)
{
	const struct htab_u64 k = { .key = key };
	struct htab_u64 *e;
	bool added;

	if (!h->entry_size)
		htab__init(h, sizeof(struct htab_u64), htab_u64__hash, htab_u64__equal);
	e = htab__insert(h, &k, &added);
	if (!e)
		return -ENOMEM;
	e->val = val;
	return 0;
}

bool htab_u64__take(struct htab *h, __u64 key, __u64 *val)
{
	const struct htab_u64 k = { .key = key };
	struct htab_u64 e;

	if (!htab__remove(h, &k, &e))
		return false;
	*val = e.val;
	return true;
}
