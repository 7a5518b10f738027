/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A Perfetto trace as protoc's text, for the tests: the packets of each
 * compressed_packets (TracePacket field 50, zlib) inflated in place, the
 * result decoded by `protoc --decode=perfetto.protos.Trace` against
 * analysis/proto/ (what trace_processor does with such a trace, then with
 * Perfetto's own .proto files). Include after cmocka.h.
 */
#ifndef INFERSCOPE_TEST_PERFETTO_TEXT_H
#define INFERSCOPE_TEST_PERFETTO_TEXT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

struct pftext_buf {
	unsigned char *v;
	size_t len, cap;
};

static inline void pftext__put(struct pftext_buf *b, const void *v, size_t n)
{
	if (b->len + n > b->cap) {
		b->cap = (b->len + n) * 2;
		b->v = realloc(b->v, b->cap);
		assert_non_null(b->v);
	}
	memcpy(b->v + b->len, v, n);
	b->len += n;
}

/* The varint at *i of p (of n bytes); fails the test past the end. */
static inline unsigned long long pftext__varint(const unsigned char *p, size_t n, size_t *i)
{
	unsigned long long v = 0;

	for (int s = 0; s < 64; s += 7) {
		if (*i >= n)
			fail_msg("a Perfetto trace ends inside a varint");
		v |= (unsigned long long)(p[*i] & 0x7f) << s;
		if (!(p[(*i)++] & 0x80))
			return v;
	}
	fail_msg("a Perfetto trace has a varint of over 10 bytes");
	return 0;
}

/* The bytes of field 50 (compressed_packets) of packet p, NULL if none. */
static inline const unsigned char *pftext__compressed(const unsigned char *p, size_t n, size_t *len)
{
	size_t i = 0;

	while (i < n) {
		unsigned long long key = pftext__varint(p, n, &i), l;

		switch (key & 7) {
		case 0:
			pftext__varint(p, n, &i);
			break;
		case 1:
			i += 8;
			break;
		case 5:
			i += 4;
			break;
		case 2:
			l = pftext__varint(p, n, &i);
			if (l > n - i)
				fail_msg("a Perfetto packet's field %llu runs past its end", key >> 3);
			if (key >> 3 == 50) {
				*len = l;
				return p + i;
			}
			i += l;
			break;
		default:
			fail_msg("a Perfetto packet has wire type %llu", key & 7);
		}
	}
	return NULL;
}

/* Appends what the zlib stream z inflates to to b. */
static inline void pftext__inflate(struct pftext_buf *b, const unsigned char *z, size_t n)
{
	unsigned char out[65536];
	z_stream s = { .next_in = (unsigned char *)z, .avail_in = (uInt)n };
	int r;

	assert_int_equal(inflateInit(&s), Z_OK);
	do {
		s.next_out = out;
		s.avail_out = sizeof(out);
		r = inflate(&s, Z_NO_FLUSH);
		if (r != Z_OK && r != Z_STREAM_END)
			fail_msg("compressed_packets do not inflate: zlib says %d (%s)", r, s.msg ? s.msg : "");
		pftext__put(b, out, sizeof(out) - s.avail_out);
	} while (r != Z_STREAM_END);
	assert_int_equal(s.avail_in, 0);
	inflateEnd(&s);
}

/* The text of the trace at path; *compressed: how many of its packets
 * were compressed_packets. */
static inline char *perfetto_text(const char *path, size_t *compressed)
{
	struct pftext_buf raw = { 0 }, b = { 0 };
	char chunk[65536], plain[300], cmd[700], *text;
	const unsigned char *p;
	size_t n, i = 0;
	int status;
	FILE *f = fopen(path, "r");

	assert_non_null(f);
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		pftext__put(&raw, chunk, n);
	assert_int_equal(ferror(f), 0);
	fclose(f);
	p = raw.v;
	n = raw.len;
	*compressed = 0;
	while (i < n) {
		size_t start = i, len, zlen;
		const unsigned char *z;

		if (p[i++] != 0x0a)
			fail_msg("%s: byte %zu is not a Trace.packet", path, start);
		len = pftext__varint(p, n, &i);
		if (len > n - i)
			fail_msg("%s: the packet at byte %zu runs past the end", path, start);
		z = pftext__compressed(p + i, len, &zlen);
		if (z) {
			pftext__inflate(&b, z, zlen);
			(*compressed)++;
		} else {
			pftext__put(&b, p + start, i + len - start);
		}
		i += len;
	}
	snprintf(plain, sizeof(plain), "%s.inflated", path);
	f = fopen(plain, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(b.v ? (void *)b.v : (void *)"", 1, b.len, f), b.len);
	assert_int_equal(fclose(f), 0);
	snprintf(cmd, sizeof(cmd),
		 "protoc --proto_path=analysis/proto --decode=perfetto.protos.Trace "
		 "protos/perfetto/trace/trace.proto < %s 2>&1", plain);
	f = popen(cmd, "r");
	assert_non_null(f);
	raw.len = 0;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		pftext__put(&raw, chunk, n);
	pftext__put(&raw, "", 1);
	status = pclose(f);
	text = strdup((char *)raw.v);
	assert_non_null(text);
	if (status)
		fail_msg("protoc cannot decode %s (%s inflated): %s", plain, path, text);
	unlink(plain);
	free(b.v);
	free(raw.v);
	return text;
}

/* The iid interned for name (an event or argument name) in the text;
 * fails the test if none. */
static inline unsigned long perfetto_text_iid(const char *text, const char *name)
{
	char want[160];
	const char *at, *iid;

	snprintf(want, sizeof(want), "\n      name: \"%s\"\n", name);
	at = strstr(text, want);
	if (!at)
		fail_msg("no name \"%s\" is interned in the trace", name);
	for (iid = at; iid > text && strncmp(iid, "iid: ", 5); iid--)
		;
	assert_true(iid > text);
	return strtoul(iid + 5, NULL, 10);
}

/* How many times needle occurs in text, not overlapping (memmem: a
 * sanitized strstr measures the rest of the text at every call). */
static inline size_t perfetto_text_count(const char *text, const char *needle)
{
	size_t n = 0, len = strlen(text), nlen = strlen(needle);
	const char *end = text + len, *p = text;

	while ((p = memmem(p, (size_t)(end - p), needle, nlen))) {
		n++;
		p += nlen;
	}
	return n;
}

/* How many occurrences of pattern (a printf format of one unsigned long,
 * the iid of name) the text has. */
static inline size_t perfetto_text_count_iid(const char *text, const char *pattern, const char *name)
{
	char want[200];

	snprintf(want, sizeof(want), pattern, perfetto_text_iid(text, name));
	return perfetto_text_count(text, want);
}

/* The track events named name (slice begins and instants). */
static inline size_t perfetto_text_events(const char *text, const char *name)
{
	return perfetto_text_count_iid(text, "\n    name_iid: %lu\n", name);
}

#endif
