/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The hash table: open addressing with linear probing and backward-shift
 * deletion (no tombstones), over fixed-size entries that the caller
 * defines. The table keeps copies of the entries and finds them through
 * the caller's hash and equality, which look at the key part of an entry
 * only; a lookup takes an entry with that key part filled in.
 *
 * Promises: lookups, insertions and deletions in O(1) expected (the table
 * stays at most half full); memory is allocated on the first insertion.
 * An entry pointer stays valid until the next insertion or removal.
 *
 *	struct thread { __u32 tid; struct stats s; };
 *	static __u64 thread_hash(const void *e) { return hash__u64(((const struct thread *)e)->tid); }
 *	static bool thread_equal(const void *a, const void *b) { ... tid == tid ... }
 *	struct htab threads = HTAB_INIT(struct thread, thread_hash, thread_equal);
 *	struct thread key = { .tid = 42 }, *t = htab__insert(&threads, &key, &added);
 */
#ifndef INFERSCOPE_LIB_HTAB_H
#define INFERSCOPE_LIB_HTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

typedef __u64 (*htab_hash_fn)(const void *entry);
typedef bool (*htab_equal_fn)(const void *a, const void *b);

struct htab {
	unsigned char *entries;	/* cap entries of entry_size bytes */
	__u64 *hashes;		/* the hash of each slot's entry, never 0; 0: an empty slot */
	size_t entry_size;
	size_t cap;		/* 0, or a power of two */
	size_t len;
	htab_hash_fn hash;
	htab_equal_fn equal;
};

#define HTAB_INIT(type, hash_fn, equal_fn) \
	{ .entry_size = sizeof(type), .hash = (hash_fn), .equal = (equal_fn) }

void htab__init(struct htab *h, size_t entry_size, htab_hash_fn hash, htab_equal_fn equal);
/* Frees the table's memory; it is empty and usable again. */
void htab__free(struct htab *h);

/* The entry equal to key, or NULL. */
void *htab__find(const struct htab *h, const void *key);
/* The entry equal to key; when there is none, a new one, a copy of key
 * (*added true). NULL with errno ENOMEM when the table cannot grow. */
void *htab__insert(struct htab *h, const void *key, bool *added);
/* Removes the entry equal to key, copied to out first when out is not
 * NULL. False when there is none. */
bool htab__remove(struct htab *h, const void *key, void *out);
/* Removes every entry for which drop(entry, ctx) is true; drop sees each
 * entry it removes once, and may release what the entry owns. */
void htab__remove_if(struct htab *h, bool (*drop)(void *entry, void *ctx), void *ctx);
/* Iteration in no particular order: set *pos to 0, call until NULL. The
 * table must not change meanwhile. */
void *htab__next(const struct htab *h, size_t *pos);

/* Hashes for the callbacks: well mixed in every bit. */
__u64 hash__u64(__u64 v);
__u64 hash__mix(__u64 h, __u64 v);
__u64 hash__str(const char *s);

/* A ready-made entry: an integer key and an integer value. */
struct htab_u64 {
	__u64 key;
	__u64 val;
};

__u64 htab_u64__hash(const void *entry);
bool htab_u64__equal(const void *a, const void *b);

#define HTAB_U64_INIT HTAB_INIT(struct htab_u64, htab_u64__hash, htab_u64__equal)

/* Helpers for a table of struct htab_u64; a zeroed struct htab is an empty
 * one (HTAB_U64_INIT is not needed). */
/* The value of key: true with *val set, or false. */
bool htab_u64__get(const struct htab *h, __u64 key, __u64 *val);
/* Sets key to val. 0 or -ENOMEM. */
int htab_u64__put(struct htab *h, __u64 key, __u64 val);
/* Removes key, its value to *val. False when key is absent. */
bool htab_u64__take(struct htab *h, __u64 key, __u64 *val);

#endif
