// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The one sanitising path of every output (lib/text.h): invalid UTF-8
 * replaced, control characters (C0, DEL, C1) made visible, each output's
 * specials escaped; a name that would break out of a Markdown code block or
 * reach a terminal as an escape sequence (the attack run's
 * 'ctl\r\n\x1b[31m.py') cannot.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "text.h"

#define FFFD "\xef\xbf\xbd"
#define HOSTILE "'ctl\r\n\x1b[31m.py'"

static void expect(const char *in, size_t maxlen, enum text_out how, const char *want)
{
	char *buf = NULL, *dup;
	size_t len = 0, dlen;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(text__write(f, in, maxlen, how), 0);
	assert_int_equal(fclose(f), 0);
	if (strcmp(buf, want)) {
		print_error("text__write(\"%s\", %d) wrote \"%s\", expected \"%s\"\n", in, (int)how, buf, want);
		fail();
	}
	/* the string copy says the same */
	dup = text__dup(in, maxlen, how, &dlen);
	assert_non_null(dup);
	assert_string_equal(dup, want);
	assert_int_equal(dlen, strlen(want));
	free(dup);
	free(buf);
}

static void test_invalid_utf8_replaced(void **state)
{
	(void)state;
	/* a comm of the attack run: prctl(PR_SET_NAME, "x\xff") */
	for (int how = TEXT_TERM; how <= TEXT_UTF8; how++)
		expect("x\xff", SIZE_MAX, (enum text_out)how, "x" FFFD);
	/* overlong, a surrogate, a truncated sequence, a lone continuation */
	expect("a\xc0\xaf" "b", SIZE_MAX, TEXT_UTF8, "a" FFFD FFFD "b");
	expect("\xed\xa0\x80", SIZE_MAX, TEXT_UTF8, FFFD FFFD FFFD);
	expect("\xe2\x82", SIZE_MAX, TEXT_UTF8, FFFD FFFD);
	expect("\x80z", SIZE_MAX, TEXT_UTF8, FFFD "z");
	/* valid text is kept, up to maxlen or the NUL */
	expect("b\xe2\x82\xac \xf0\x9f\x98\x80", SIZE_MAX, TEXT_MD, "b\xe2\x82\xac \xf0\x9f\x98\x80");
	expect("abcdef", 3, TEXT_TERM, "abc");
	/* a sequence cut by maxlen is not valid */
	expect("\xe2\x82\xac", 2, TEXT_UTF8, FFFD FFFD);
}

static void test_control_characters_visible(void **state)
{
	(void)state;
	expect(HOSTILE, SIZE_MAX, TEXT_TERM, "'ctl\\x0d\\x0a\\x1b[31m.py'");
	expect(HOSTILE, SIZE_MAX, TEXT_MD_CODE, "'ctl\\x0d\\x0a\\x1b[31m.py'");
	/* Markdown text: the escape's backslash and the brackets escaped */
	expect(HOSTILE, SIZE_MAX, TEXT_MD, "'ctl\\\\x0d\\\\x0a\\\\x1b\\[31m.py'");
	expect(HOSTILE, SIZE_MAX, TEXT_HTML, "&#39;ctl\\x0d\\x0a\\x1b[31m.py&#39;");
	expect(HOSTILE, SIZE_MAX, TEXT_PROM, "'ctl\\\\x0d\\\\x0a\\\\x1b[31m.py'");
	/* JSON keeps them: its library escapes them */
	expect(HOSTILE, SIZE_MAX, TEXT_UTF8, HOSTILE);
	/* DEL, a tab, and C1's CSI (U+009B: ESC [ to some terminals) */
	expect("a\x7f\tb\xc2\x9b" "2J", SIZE_MAX, TEXT_TERM, "a\\x7f\\x09b\\u009b2J");
	/* U+00A0 is not a control character */
	expect("\xc2\xa0", SIZE_MAX, TEXT_TERM, "\xc2\xa0");
	/* nothing of any output keeps a byte below 0x20 */
	for (int how = TEXT_TERM; how < TEXT_UTF8; how++) {
		char *d = text__dup("\x01\x02\x1b\n\r\x1f\x7f" HOSTILE, SIZE_MAX, (enum text_out)how, NULL);

		assert_non_null(d);
		for (const char *p = d; *p; p++)
			assert_true((unsigned char)*p >= 0x20 && *p != 0x7f);
		free(d);
	}
}

static void test_specials_escaped(void **state)
{
	(void)state;
	expect("a|b`c*d<e>[f]\\", SIZE_MAX, TEXT_MD, "a\\|b\\`c\\*d\\<e\\>\\[f\\]\\\\");
	/* prose keeps its code spans */
	expect("thread 7 `w|x`", SIZE_MAX, TEXT_MD_PROSE, "thread 7 `w\\|x`");
	expect("<a href=\"x\">&'", SIZE_MAX, TEXT_HTML, "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
	/* the text format's label escapes: backslash and double quote */
	expect("we\"ird\\na", SIZE_MAX, TEXT_PROM, "we\\\"ird\\\\na");
	expect("`|*", SIZE_MAX, TEXT_MD_CODE, "`|*");
	expect("", SIZE_MAX, TEXT_MD, "");
}

static void test_write_error(void **state)
{
	FILE *full = fopen("/dev/full", "w");

	(void)state;
	if (!full)
		skip();
	setvbuf(full, NULL, _IONBF, 0);
	assert_int_equal(text__write(full, "abc", SIZE_MAX, TEXT_MD), -EIO);
	fclose(full);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_invalid_utf8_replaced),
		cmocka_unit_test(test_control_characters_visible),
		cmocka_unit_test(test_specials_escaped),
		cmocka_unit_test(test_write_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
