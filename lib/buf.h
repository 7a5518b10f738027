/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Growable buffers: capacity doubled until it holds what is needed, so
 * that appending n items one by one costs O(n) copies in all.
 */
#ifndef INFERSCOPE_LIB_BUF_H
#define INFERSCOPE_LIB_BUF_H

#include <stddef.h>

/* Grows *buf (cap bytes, NULL while cap is 0) to hold at least need bytes.
 * 0, or -ENOMEM with *buf and *cap unchanged. */
int buf__reserve(unsigned char **buf, size_t *cap, size_t need);

/* The same for an array of elements of elem_size bytes: arrp points at
 * the array pointer, *cap and need count elements. 0 or -ENOMEM. */
int array__reserve(void *arrp, size_t *cap, size_t need, size_t elem_size);

#endif
