// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>

#include "buf.h"
#include "text.h"

size_t text__utf8_seq(const unsigned char *p, size_t left)
{
	__u32 cp;
	size_t n;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2, cp = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3, cp = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4, cp = p[0] & 0x07;
	else
		return 0;
	if (n > left)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/* Where the text goes: a stream, or a growing buffer. */
struct sink {
	FILE *f;
	unsigned char *buf;
	size_t len, cap;
	int err;
};

static void put(struct sink *k, const void *p, size_t n)
{
	if (k->err)
		return;
	if (k->f) {
		if (fwrite(p, 1, n, k->f) != n)
			k->err = -EIO;
		return;
	}
	k->err = buf__reserve(&k->buf, &k->cap, k->len + n + 1);
	if (!k->err) {
		memcpy(k->buf + k->len, p, n);
		k->len += n;
	}
}

/* One ASCII character of the text (or of a control character's escape),
 * with the output's specials escaped. */
static void put_ascii(struct sink *k, char c, enum text_out how)
{
	const char *sub = NULL;

	switch (how) {
	case TEXT_MD:
	case TEXT_MD_PROSE:
		if (c && strchr("\\|*<>[]", c))
			put(k, "\\", 1);
		else if (c == '`' && how == TEXT_MD)
			put(k, "\\", 1);
		break;
	case TEXT_HTML:
		sub = c == '&' ? "&amp;" : c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '"' ? "&quot;" :
		      c == '\'' ? "&#39;" : NULL;
		break;
	case TEXT_PROM:
		if (c == '\\' || c == '"')
			put(k, "\\", 1);
		break;
	case TEXT_TERM:
	case TEXT_MD_CODE:
	case TEXT_UTF8:
		break;
	}
	if (sub)
		put(k, sub, strlen(sub));
	else
		put(k, &c, 1);
}

static void put_control(struct sink *k, unsigned int cp, enum text_out how)
{
	char esc[8];

	snprintf(esc, sizeof(esc), cp < 0x80 ? "\\x%02x" : "\\u%04x", cp);
	for (const char *e = esc; *e; e++)
		put_ascii(k, *e, how);
}

static void run(struct sink *k, const char *s, size_t maxlen, enum text_out how)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t len = strnlen(s, maxlen);

	for (size_t i = 0; i < len && !k->err;) {
		size_t n = text__utf8_seq(p + i, len - i);
		bool c1 = n == 2 && p[i] == 0xc2 && p[i + 1] < 0xa0;

		if (!n) {
			put(k, "\xef\xbf\xbd", 3);	/* U+FFFD */
			n = 1;
		} else if (how != TEXT_UTF8 && (p[i] < 0x20 || p[i] == 0x7f)) {
			put_control(k, p[i], how);
		} else if (how != TEXT_UTF8 && c1) {
			put_control(k, p[i + 1], how);
		} else if (n == 1) {
			put_ascii(k, (char)p[i], how);
		} else {
			put(k, p + i, n);
		}
		i += n;
	}
}

int text__write(FILE *f, const char *s, size_t maxlen, enum text_out how)
{
	struct sink k = { .f = f };

	run(&k, s, maxlen, how);
	return k.err;
}

char *text__dup(const char *s, size_t maxlen, enum text_out how, size_t *len)
{
	struct sink k = { .f = NULL };

	run(&k, s, maxlen, how);
	if (!k.err)
		k.err = buf__reserve(&k.buf, &k.cap, k.len + 1);
	if (k.err) {
		free(k.buf);
		errno = -k.err;
		return NULL;
	}
	k.buf[k.len] = '\0';
	if (len)
		*len = k.len;
	return (char *)k.buf;
}
