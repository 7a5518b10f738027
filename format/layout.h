/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The static assertions that freeze a record's layout, one line a struct:
 *
 *   ISR_LAYOUT(isr_ev_reclaim, 48, duration_ns, 24, nr_reclaimed, 32, kind, 40, pad, 44);
 *
 * asserts that struct isr_ev_reclaim is 48 bytes and each named field sits
 * at its offset; ISR_OFFSETS(st, field, offset, ...) the offsets alone.
 * Up to 16 fields a line (a struct with more takes two ISR_OFFSETS).
 * A record reaches the file byte for byte (format/events.h), so a field
 * moved by an edit fails the build, naming the struct and the field.
 */
#ifndef INFERSCOPE_LAYOUT_H
#define INFERSCOPE_LAYOUT_H

#define ISR_AT_(st, f, off) _Static_assert(__builtin_offsetof(struct st, f) == (off), #st "." #f " not at " #off)
#define ISR_AT_1(st, f, o) ISR_AT_(st, f, o)
#define ISR_AT_2(st, f, o, ...) ISR_AT_(st, f, o); ISR_AT_1(st, __VA_ARGS__)
#define ISR_AT_3(st, f, o, ...) ISR_AT_(st, f, o); ISR_AT_2(st, __VA_ARGS__)
#define ISR_AT_4(st, f, o, ...) ISR_AT_(st, f, o); ISR_AT_3(st, __VA_ARGS__)
#define ISR_AT_5(st, f, o, ...) ISR_AT_(st, f, o); ISR_AT_4(st, __VA_ARGS__)
#define ISR_AT_6(st, f, o, ...) ISR_AT_(st, f, o); ISR_AT_5(st, __VA_ARGS__)
#define ISR_AT_7(st, f, o, ...) ISR_AT_(st, f, o); ISR_AT_6(st, __VA_ARGS__)
#define ISR_AT_8(st, f, o, ...) ISR_AT_(st, f, o); ISR_AT_7(st, __VA_ARGS__)
#define ISR_AT_9(st, f, o, ...) ISR_AT_(st, f, o); ISR_AT_8(st, __VA_ARGS__)
#define ISR_AT_10(st, f, o, ...) ISR_AT_(st, f, o); ISR_AT_9(st, __VA_ARGS__)
#define ISR_AT_11(st, f, o, ...) ISR_AT_(st, f, o); ISR_AT_10(st, __VA_ARGS__)
#define ISR_AT_12(st, f, o, ...) ISR_AT_(st, f, o); ISR_AT_11(st, __VA_ARGS__)
#define ISR_AT_13(st, f, o, ...) ISR_AT_(st, f, o); ISR_AT_12(st, __VA_ARGS__)
#define ISR_AT_14(st, f, o, ...) ISR_AT_(st, f, o); ISR_AT_13(st, __VA_ARGS__)
#define ISR_AT_15(st, f, o, ...) ISR_AT_(st, f, o); ISR_AT_14(st, __VA_ARGS__)
#define ISR_AT_16(st, f, o, ...) ISR_AT_(st, f, o); ISR_AT_15(st, __VA_ARGS__)

/* How many (field, offset) pairs: the 33rd argument once the pairs are
 * put before the count-down (an odd number of arguments picks "odd",
 * which names no macro and fails the build). */
#define ISR_PAIRS_PICK(a1, b1, a2, b2, a3, b3, a4, b4, a5, b5, a6, b6, a7, b7, a8, b8, a9, b9, a10, b10, a11, \
		       b11, a12, b12, a13, b13, a14, b14, a15, b15, a16, b16, n, ...) n
#define ISR_PAIRS(...) ISR_PAIRS_PICK(__VA_ARGS__, 16, odd, 15, odd, 14, odd, 13, odd, 12, odd, 11, odd, 10, odd, \
				      9, odd, 8, odd, 7, odd, 6, odd, 5, odd, 4, odd, 3, odd, 2, odd, 1, odd)
#define ISR_CAT_(a, b) a##b
#define ISR_CAT(a, b) ISR_CAT_(a, b)

#define ISR_OFFSETS(st, ...) ISR_CAT(ISR_AT_, ISR_PAIRS(__VA_ARGS__))(st, __VA_ARGS__)
#define ISR_LAYOUT(st, size, ...) \
	_Static_assert(sizeof(struct st) == (size), #st " is not " #size " bytes"); ISR_OFFSETS(st, __VA_ARGS__)

#endif /* INFERSCOPE_LAYOUT_H */
