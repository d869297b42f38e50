/* SPDX-License-Identifier: Apache-2.0 */
/*
 * text.c - making strings from hostile recordings safe to print.
 *
 * Every string in a .bprof file (comm, paths, hostname, kallsyms and perf
 * map names) comes from a host we do not control.  Printed raw, a newline
 * forges a folded line, an escape sequence rewrites the user's terminal,
 * invalid UTF-8 breaks JSON and SVG consumers.
 */
#include <stdio.h>

#include "report.h"

size_t rep_utf8_len(const unsigned char *p)
{
	unsigned char c = p[0];
	uint32_t cp;
	size_t n;

	if (c < 0x80)
		return (c < 0x20 || c == 0x7f) ? 0 : 1;
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80) /* also stops at the NUL */
			return 0;
		cp = (cp << 6) | (p[i] & 0x3f);
	}
	if (cp < 0xa0 ||                              /* C1 controls, overlongs */
	    (n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return n;
}

void rep_fputs_clean(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");

	while (*p) {
		size_t n = rep_utf8_len(p);
		if (n && *p != '\\') {
			fwrite(p, 1, n, f);
			p += n;
		} else {
			fprintf(f, "\\x%02x", *p);
			p++;
		}
	}
}
