// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <string.h>
#include <linux/types.h>

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

int text__html(FILE *f, const char *s, size_t maxlen)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t len = strnlen(s, maxlen);
	int bad = 0;

	for (size_t i = 0; i < len;) {
		size_t n = text__utf8_seq(p + i, len - i);

		if (!n) {
			bad |= fputs("\xef\xbf\xbd", f) < 0;
			i++;
			continue;
		}
		if (n > 1) {
			bad |= fwrite(p + i, 1, n, f) != n;
		} else {
			switch (p[i]) {
			case '&':
				bad |= fputs("&amp;", f) < 0;
				break;
			case '<':
				bad |= fputs("&lt;", f) < 0;
				break;
			case '>':
				bad |= fputs("&gt;", f) < 0;
				break;
			case '"':
				bad |= fputs("&quot;", f) < 0;
				break;
			case '\'':
				bad |= fputs("&#39;", f) < 0;
				break;
			default:
				bad |= fputc(p[i] < 0x20 || p[i] == 0x7f ? ' ' : p[i], f) == EOF;
			}
		}
		i += n;
	}
	return bad ? -EIO : 0;
}

int text__markdown(FILE *f, const char *s, size_t maxlen)
{
	size_t len = strnlen(s, maxlen);
	int bad = 0;

	for (size_t i = 0; i < len && !bad; i++) {
		unsigned char c = (unsigned char)s[i];

		if (strchr("\\|`*<>[]", c))
			bad = fprintf(f, "\\%c", c) < 0;
		else
			bad = fputc(c < 0x20 || c == 0x7f ? ' ' : c, f) == EOF;
	}
	return bad ? -EIO : 0;
}
