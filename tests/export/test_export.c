/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of the export helpers: JSON escaping of hostile names, the
 * flame graph's layout (flamegraph.pl's), XML escaping, differential
 * colours, and the small hash map the exporters share. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

static char *json(const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	cr_assert(f);
	rep_json_string(f, s);
	fclose(f);
	return buf;
}

Test(json, plain_and_utf8_kept)
{
	char *j = json("std::vector<int>::push_back \xc3\xa9\xe2\x82\xac\xf0\x9f\x94\xa5");
	cr_assert_str_eq(j, "\"std::vector<int>::push_back \xc3\xa9\xe2\x82\xac\xf0\x9f\x94\xa5\"");
	free(j);
}

Test(json, hostile_names_escaped)
{
	char *j = json("a\"b\\c\nd\te\x01\x1f\x7f");
	cr_assert_str_eq(j, "\"a\\\"b\\\\c\\nd\\te\\u0001\\u001f\\u007f\"");
	free(j);
}

Test(json, invalid_utf8_replaced)
{
	/* lone continuation, truncated sequence, overlong, surrogate, > U+10FFFF */
	char *j = json("\x80|\xc3(|\xc0\xaf|\xed\xa0\x80|\xf4\x90\x80\x80|\xff");
	cr_assert_str_eq(j, "\"\\ufffd|\\ufffd(|\\ufffd\\ufffd|\\ufffd\\ufffd\\ufffd|"
			    "\\ufffd\\ufffd\\ufffd\\ufffd|\\ufffd\"");
	free(j);
}

static char *svg_o(const char *folded, const struct rep_svg_opts *o)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	cr_assert(f);
	cr_assert_eq(rep_flamegraph_svg(f, folded, strlen(folded), o), 0);
	fclose(f);
	return buf;
}

static char *svg(const char *folded, bool diff)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct rep_svg_opts o = { .diff = diff };
	cr_assert(f);
	cr_assert_eq(rep_flamegraph_svg(f, folded, strlen(folded), &o), 0);
	fclose(f);
	return buf;
}

/* the <g> of the frame named name (first one), or NULL */
static const char *frame(const char *s, const char *name)
{
	char pat[256];
	snprintf(pat, sizeof(pat), "data-name=\"%s\"", name);
	const char *p = strstr(s, pat);
	if (!p)
		return NULL;
	while (p > s && strncmp(p, "<g ", 3) != 0)
		p--;
	return p;
}

static double attr(const char *g, const char *name)
{
	char pat[64];
	snprintf(pat, sizeof(pat), " %s=\"", name);
	const char *p = strstr(strstr(g, "<rect"), pat);
	cr_assert(p, "no %s", name);
	return strtod(p + strlen(pat), NULL);
}

Test(svg, layout_as_flamegraph_pl)
{
	/* a: 2 own samples, then children sorted by name: b (3), c (1) */
	char *s = svg("x;a;c 1\nx;a;b 3\nx;a 2\n", false);
	double wpt = 1180.0 / 6;
	const char *all = frame(s, "all"), *a = frame(s, "a"), *b = frame(s, "b"), *c = frame(s, "c");

	cr_assert(all && a && b && c);
	cr_assert_float_eq(attr(all, "width"), 1180.0, 0.06);
	cr_assert_float_eq(attr(a, "x"), 10.0, 0.06);
	cr_assert_float_eq(attr(b, "x"), 10 + 2 * wpt, 0.06);
	cr_assert_float_eq(attr(b, "width"), 3 * wpt, 0.06);
	cr_assert_float_eq(attr(c, "x"), 10 + 5 * wpt, 0.06);
	cr_assert(strstr(s, "<title>b (3 samples, 50.00%)</title>"));
	/* deeper frames are higher up */
	cr_assert_gt(attr(a, "y"), attr(b, "y"));
	free(s);
}

Test(svg, sibling_order_is_whole_line_order)
{
	/* flamegraph.pl sorts lines: "f.isra;" < "f;" ('.' < ';') */
	char *s = svg("r;f;g 1\nr;f.isra;h 1\n", false);
	cr_assert_lt(attr(frame(s, "f.isra"), "x"), attr(frame(s, "f"), "x"));
	free(s);
}

Test(svg, kinds_and_annotations)
{
	char *s = svg("p;main;inl_[i];sys_[k] 2\np;main;jit_[j] 1\n", false);
	cr_assert(strstr(frame(s, "sys"), "data-kind=\"k\""));
	cr_assert(strstr(frame(s, "inl"), "data-kind=\"i\""));
	cr_assert(strstr(frame(s, "jit"), "data-kind=\"j\""));
	cr_assert(strstr(frame(s, "main"), "data-kind=\"u\""));
	cr_assert_null(strstr(s, "_[k]"));
	free(s);
}

Test(svg, xml_escaped)
{
	char *s = svg("p;operator<<(A&, B const&) 1\np;q\"'> 1\n", false);
	cr_assert(strstr(s, "operator&lt;&lt;(A&amp;, B const&amp;)"));
	cr_assert(strstr(s, "q&quot;&apos;&gt;"));
	cr_assert_null(strstr(s, "operator<<"));
	free(s);
}

Test(svg, garbage_lines_ignored)
{
	char *s = svg("no count here\n\n;;; x\na;b 2\nc nope\n", false);
	cr_assert(frame(s, "b"));
	cr_assert(strstr(s, "data-total=\"2\""));
	free(s);
}

Test(svg, empty_input)
{
	char *s = svg("", false);
	cr_assert(strstr(s, "</svg>"));
	free(s);
}

Test(svg, differential_colours)
{
	/* before/after: grew is red, shrank is blue, the same share is white */
	char *s = svg("p;grew 1 3\np;shrank 3 1\n", true);
	cr_assert(strstr(frame(s, "grew"), "fill=\"rgb(255,"));
	cr_assert(strstr(frame(s, "shrank"), ",255)\""));
	cr_assert(strstr(frame(s, "p"), "fill=\"rgb(250,250,250)\""));
	cr_assert(strstr(frame(s, "grew"), "before 1 samples, +50.00%"));
	/* widths come from AFTER */
	cr_assert_float_eq(attr(frame(s, "grew"), "width"), 1180.0 * 3 / 4, 0.06);
	free(s);
}

Test(svg, inverted_hangs_from_the_top)
{
	struct rep_svg_opts o = { .inverted = true };
	char *s = svg_o("x;a;c 1\nx;a;b 3\nx;a 2\n", &o);
	const char *all = frame(s, "all"), *a = frame(s, "a"), *b = frame(s, "b");

	cr_assert(all && a && b);
	/* the same x and widths, the root at the top, deeper frames lower */
	cr_assert_float_eq(attr(b, "x"), 10 + 2 * 1180.0 / 6, 0.06);
	cr_assert_float_eq(attr(all, "y"), 60.0, 0.06);
	cr_assert_lt(attr(all, "y"), attr(a, "y"));
	cr_assert_lt(attr(a, "y"), attr(b, "y"));
	cr_assert(strstr(s, ">Icicle Graph</text>"), "%s", s);
	cr_assert(strstr(s, "data-inverted=\"1\""));
	free(s);
}

Test(svg, min_width_leaves_out_and_counts)
{
	/* 1180 px for 1000 samples: c (2 samples, 2.4 px) and its child d go
	 * under 3 px; b (998) stays */
	struct rep_svg_opts o = { .min_width = 3 };
	char *s = svg_o("x;b 998\nx;c;d 2\n", &o);

	cr_assert(frame(s, "b") && frame(s, "x"));
	cr_assert_null(frame(s, "c"));
	cr_assert_null(frame(s, "d"));
	cr_assert(strstr(s, ">Flame Graph (2 frames under 3 px not drawn)</text>"), "%s", s);
	cr_assert(strstr(s, "data-omitted=\"2\""));
	free(s);
	/* a percentage of the samples: c is 0.2 % */
	o = (struct rep_svg_opts){ .min_width = 0.5, .min_width_pct = true };
	s = svg_o("x;b 998\nx;c;d 2\n", &o);
	cr_assert_null(frame(s, "c"));
	cr_assert(strstr(s, "(2 frames under 0.5% not drawn)"), "%s", s);
	free(s);
	/* nothing left out: the title says nothing */
	o = (struct rep_svg_opts){ .min_width = 1 };
	s = svg_o("x;b 998\nx;c;d 2\n", &o);
	cr_assert(frame(s, "d"));
	cr_assert(strstr(s, ">Flame Graph</text>"), "%s", s);
	free(s);
}

Test(svg, threads_drawn_grey)
{
	struct rep_svg_opts o = { .threads = true };
	char *s = svg_o("app;worker (tid 7);main;f 2\napp;app (tid 6);main 1\n", &o);

	cr_assert(strstr(frame(s, "worker (tid 7)"), "data-kind=\"t\""));
	cr_assert(strstr(frame(s, "app (tid 6)"), "data-kind=\"t\""));
	cr_assert(strstr(frame(s, "app"), "data-kind=\"u\""));
	cr_assert(strstr(frame(s, "main"), "data-kind=\"u\""));
	free(s);
}

Test(map, insert_find_grow)
{
	struct rep_map m = {0};
	bool found;
	uint64_t v;

	for (uint64_t i = 0; i < 5000; i++) {
		v = i * 7;
		cr_assert_eq(rep_map_get(&m, &i, sizeof(i), &v, &found), 0);
		cr_assert_not(found);
	}
	for (uint64_t i = 0; i < 5000; i++) {
		v = 0;
		cr_assert_eq(rep_map_get(&m, &i, sizeof(i), &v, &found), 0);
		cr_assert(found);
		cr_assert_eq(v, i * 7);
	}
	v = 1;
	cr_assert_eq(rep_map_get(&m, "", 0, &v, &found), 0);
	cr_assert_not(found);
	cr_assert_eq(m.nr, 5001);
	rep_map_free(&m);
}
