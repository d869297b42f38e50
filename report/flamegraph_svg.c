/* SPDX-License-Identifier: Apache-2.0 */
/*
 * flamegraph_svg.c - prof-report --svg: an interactive flame graph (or, with
 * --diff, a differential one) drawn from the merged folded stacks, laid out
 * as flamegraph.pl does (children sorted by name after the frame's own
 * samples, width proportional to samples, frames narrower than 0.1 px omitted, an "all" root), with
 * embedded JavaScript: click to zoom, search, reset.
 *
 * Frame hues: user code red/orange/yellow ("hot"), kernel (_[k]) lavender
 * blue, inlined (_[i]) aqua, JIT (_[j]) green; differential graphs: red
 * grew, blue shrank, white unchanged.  The annotation suffix is dropped from
 * the label and kept as data-kind.  Off-CPU time (prof-record --off-cpu,
 * --wall: stacks whose leaf is "[off-cpu:S]" and the like) is cold: a
 * frame most of whose samples are off-CPU is drawn in blues and greys,
 * data-kind "o", so that waiting and running read apart in one graph.
 *
 * Views, spelt as flamegraph.pl spells them where it has them: --inverted
 * draws an icicle graph (roots at the top, "Icicle Graph"); --min-width
 * (flamegraph.pl's --minwidth: pixels, or a percentage of all samples)
 * leaves out frames narrower than that, and the title says how many were
 * left out, so that a trimmed graph never passes for a whole one.  With
 * --threads the frames under the processes are threads, drawn grey
 * (data-kind "t").
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

struct node {
	const char *name; /* into the folded text copy */
	size_t name_len;
	uint32_t parent, first_child, next_sibling;
	uint64_t value;   /* samples (after, with diff) */
	uint64_t before;  /* diff only */
	uint64_t off;     /* of value, the samples of off-CPU stacks */
};

#define NONE UINT32_MAX

struct tree {
	struct node *n;
	size_t nr, cap;
	struct rep_map index; /* (parent, name) -> node */
	uint32_t depth_max;
};

static int tree_child(struct tree *t, uint32_t parent, const char *name, size_t len, uint32_t *out)
{
	size_t klen = sizeof(parent) + len;
	char stackkey[512];
	char *key = klen <= sizeof(stackkey) ? stackkey : malloc(klen);
	uint64_t v = t->nr;
	bool found;
	int err;

	if (!key)
		return -ENOMEM;
	memcpy(key, &parent, sizeof(parent));
	memcpy(key + sizeof(parent), name, len);
	err = rep_map_get(&t->index, key, klen, &v, &found);
	if (key != stackkey)
		free(key);
	if (err)
		return err;
	*out = (uint32_t)v;
	if (found)
		return 0;
	if (t->nr == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 1024;
		struct node *n = realloc(t->n, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		t->n = n;
		t->cap = cap;
	}
	t->n[t->nr] = (struct node){ .name = name, .name_len = len, .parent = parent,
				     .first_child = NONE, .next_sibling = NONE };
	if (parent != NONE) {
		t->n[t->nr].next_sibling = t->n[parent].first_child;
		t->n[parent].first_child = (uint32_t)t->nr;
	}
	t->nr++;
	return 0;
}

static bool parse_u64(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;

	if (!len)
		return false;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		uint64_t d = (uint64_t)(s[i] - '0');
		if (v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*out = v;
	return true;
}

/* Split the last space-separated token off [s, s+*len). */
static bool last_number(const char *s, size_t *len, uint64_t *out)
{
	size_t e = *len;
	while (e > 0 && s[e - 1] == ' ')
		e--;
	size_t b = e;
	while (b > 0 && s[b - 1] != ' ')
		b--;
	if (!parse_u64(s + b, e - b, out))
		return false;
	while (b > 0 && s[b - 1] == ' ')
		b--;
	*len = b;
	return true;
}

static int add_line(struct tree *t, const char *s, size_t len, bool diff)
{
	uint64_t after, before = 0;
	uint32_t node = 0, depth = 0;
	int err;

	if (!last_number(s, &len, &after))
		return 0; /* not a folded line: ignored, as flamegraph.pl does */
	if (diff && !last_number(s, &len, &before))
		return 0;
	if (!len)
		return 0;
	t->n[0].value += after;
	t->n[0].before += before;
	size_t b = 0;
	while (b <= len) {
		size_t e = b;
		while (e < len && s[e] != ';')
			e++;
		err = tree_child(t, node, s + b, e - b, &node);
		if (err)
			return err;
		t->n[node].value += after;
		t->n[node].before += before;
		depth++;
		b = e + 1;
	}
	if (depth > t->depth_max)
		t->depth_max = depth;
	return 0;
}

/* Order of "name;" strings: flamegraph.pl sorts whole folded lines, so a
 * frame that is a prefix of its sibling compares by ';' against the
 * sibling's next byte ("f.isra" sorts before "f"). */
static int cmp_name(const struct node *a, const struct node *b)
{
	size_t n = a->name_len < b->name_len ? a->name_len : b->name_len;
	int c = memcmp(a->name, b->name, n);
	if (c || a->name_len == b->name_len)
		return c;
	unsigned char ca = a->name_len > n ? (unsigned char)a->name[n] : ';';
	unsigned char cb = b->name_len > n ? (unsigned char)b->name[n] : ';';
	return ca < cb ? -1 : ca > cb;
}

/* Children sorted by name (flamegraph.pl sorts the folded lines). */
static int sort_children(struct tree *t, uint32_t *scratch)
{
	for (size_t i = 0; i < t->nr; i++) {
		size_t k = 0;
		for (uint32_t c = t->n[i].first_child; c != NONE; c = t->n[c].next_sibling)
			scratch[k++] = c;
		if (k < 2)
			continue;
		/* insertion sort: small fan-outs are the common case */
		for (size_t a = 1; a < k; a++) {
			uint32_t x = scratch[a];
			size_t b = a;
			while (b > 0 && cmp_name(&t->n[scratch[b - 1]], &t->n[x]) > 0) {
				scratch[b] = scratch[b - 1];
				b--;
			}
			scratch[b] = x;
		}
		t->n[i].first_child = scratch[0];
		for (size_t a = 0; a + 1 < k; a++)
			t->n[scratch[a]].next_sibling = scratch[a + 1];
		t->n[scratch[k - 1]].next_sibling = NONE;
	}
	return 0;
}

static void xml_text(FILE *f, const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		switch (s[i]) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&apos;", f); break;
		default:
			if ((unsigned char)s[i] < 0x20)
				fputc('?', f);
			else
				fputc(s[i], f);
		}
	}
}

static uint32_t hash_name(const char *s, size_t n)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return h;
}

/* kind from the annotation suffix; *len shortened to drop it */
static char frame_kind(const char *s, size_t *len)
{
	if (*len >= 4 && s[*len - 4] == '_' && s[*len - 3] == '[' && s[*len - 1] == ']') {
		char k = s[*len - 2];
		if (k == 'k' || k == 'i' || k == 'j') {
			*len -= 4;
			return k;
		}
	}
	return 'u';
}

/* Each off-CPU leaf's samples counted in it and its callers (n->off). */
static void mark_offcpu(struct tree *t)
{
	static const char tag[] = "[off-cpu";

	for (size_t i = 1; i < t->nr; i++) {
		struct node *n = &t->n[i];

		if (n->first_child != NONE || n->name_len < sizeof(tag) - 1 ||
		    memcmp(n->name, tag, sizeof(tag) - 1))
			continue;
		for (uint32_t p = (uint32_t)i; p != NONE; p = t->n[p].parent)
			t->n[p].off += n->value;
	}
}

static void color(char kind, const struct node *n, bool diff, uint64_t total_after,
		  uint64_t total_before, char *out, size_t outlen)
{
	uint32_t h = hash_name(n->name, n->name_len);
	double v1 = (h & 0xff) / 255.0, v2 = ((h >> 8) & 0xff) / 255.0;

	if (diff) {
		/* share of the total, after vs before: red grew, blue shrank */
		double a = total_after ? (double)n->value / (double)total_after : 0;
		double b = total_before ? (double)n->before / (double)total_before : 0;
		double d = a - b, m = a > b ? a : b;
		double r = m > 0 ? d / m : 0; /* -1 .. 1 */
		int c = (int)(210 - 210 * (r < 0 ? -r : r));
		if (c < 0)
			c = 0;
		if (r > 0)
			snprintf(out, outlen, "rgb(255,%d,%d)", c, c);
		else if (r < 0)
			snprintf(out, outlen, "rgb(%d,%d,255)", c, c);
		else
			snprintf(out, outlen, "rgb(250,250,250)");
		return;
	}
	switch (kind) {
	case 't': /* a thread (--threads): grey, a place rather than code */
		snprintf(out, outlen, "rgb(%d,%d,%d)", 175 + (int)(40 * v1), 175 + (int)(40 * v1),
			 175 + (int)(40 * v1));
		break;
	case 'o': /* off-CPU: cold blues (kernel frames greyer) */
		snprintf(out, outlen, "rgb(%d,%d,%d)", (int)(70 * v2), 110 + (int)(80 * v1),
			 200 + (int)(55 * v2));
		break;
	case 'k': /* kernel: lavender blue */
		snprintf(out, outlen, "rgb(%d,%d,%d)", 150 + (int)(50 * v1), 150 + (int)(50 * v1),
			 230 + (int)(25 * v2));
		break;
	case 'i': /* inlined: aqua */
		snprintf(out, outlen, "rgb(%d,%d,%d)", 60 + (int)(60 * v1), 190 + (int)(55 * v1),
			 190 + (int)(55 * v1));
		break;
	case 'j': /* JIT: green */
		snprintf(out, outlen, "rgb(%d,%d,%d)", 50 + (int)(60 * v1), 180 + (int)(60 * v1),
			 50 + (int)(60 * v2));
		break;
	default: /* user: hot */
		snprintf(out, outlen, "rgb(%d,%d,%d)", 205 + (int)(50 * v2), (int)(230 * v1),
			 (int)(55 * v2));
	}
}

static const char script[] =
	"<script type=\"text/ecmascript\"><![CDATA[\n"
	"'use strict';\n"
	"var frames, details, total, xpad, fullw, fontw = 0.59, fontsize = 12, zoomed = null;\n"
	"function init(evt) {\n"
	"  frames = Array.prototype.slice.call(document.querySelectorAll('g.frame'));\n"
	"  details = document.getElementById('details');\n"
	"  var svg = document.documentElement;\n"
	"  total = +svg.getAttribute('data-total'); xpad = +svg.getAttribute('data-xpad');\n"
	"  fullw = +svg.getAttribute('data-width') - 2 * xpad;\n"
	"  frames.forEach(function (g) {\n"
	"    g.addEventListener('click', function () { zoom(g); });\n"
	"    g.addEventListener('mouseover', function () { details.textContent = g.querySelector('title').textContent; });\n"
	"    g.addEventListener('mouseout', function () { details.textContent = ' '; });\n"
	"  });\n"
	"  document.getElementById('unzoom').addEventListener('click', unzoom);\n"
	"  document.getElementById('search').addEventListener('click', function () {\n"
	"    var t = prompt('Search for (regular expression):', ''); if (t !== null) search(t);\n"
	"  });\n"
	"  layout(0, total, -1);\n"
	"}\n"
	"function label(g, w) {\n"
	"  var t = g.querySelector('text'), name = g.getAttribute('data-name');\n"
	"  var n = Math.floor(w / (fontsize * fontw));\n"
	"  t.textContent = w < 2 * fontsize * fontw ? '' : name.length <= n ? name : name.substring(0, Math.max(0, n - 2)) + '..';\n"
	"}\n"
	"/* show [x0, x0+w0) across the full width; frames below depth d0 that hold it span it all */\n"
	"function layout(x0, w0, d0) {\n"
	"  var scale = fullw / w0;\n"
	"  frames.forEach(function (g) {\n"
	"    var x = +g.getAttribute('data-x'), w = +g.getAttribute('data-w'), d = +g.getAttribute('data-d');\n"
	"    var r = g.querySelector('rect'), t = g.querySelector('text'), nx, nw;\n"
	"    if (d <= d0 && x <= x0 && x + w >= x0 + w0) { nx = 0; nw = fullw; }\n"
	"    else if (x >= x0 && x + w <= x0 + w0 && d >= d0) { nx = (x - x0) * scale; nw = w * scale; }\n"
	"    else { g.style.display = 'none'; return; }\n"
	"    if (nw < 0.1) { g.style.display = 'none'; return; }\n"
	"    g.style.display = '';\n"
	"    r.setAttribute('x', (xpad + nx).toFixed(1)); r.setAttribute('width', nw.toFixed(1));\n"
	"    t.setAttribute('x', (xpad + nx + 3).toFixed(1));\n"
	"    label(g, nw);\n"
	"    g.style.opacity = (d0 >= 0 && d < d0) ? 0.5 : 1;\n"
	"  });\n"
	"}\n"
	"function zoom(g) {\n"
	"  zoomed = g;\n"
	"  layout(+g.getAttribute('data-x'), +g.getAttribute('data-w'), +g.getAttribute('data-d'));\n"
	"  document.getElementById('unzoom').style.opacity = 1;\n"
	"}\n"
	"function unzoom() { zoomed = null; layout(0, total, -1); document.getElementById('unzoom').style.opacity = 0; }\n"
	"function search(term) {\n"
	"  var re; try { re = new RegExp(term); } catch (e) { alert(e); return; }\n"
	"  var matched = 0, spans = [];\n"
	"  frames.forEach(function (g) {\n"
	"    var r = g.querySelector('rect');\n"
	"    if (!r.hasAttribute('data-fill')) r.setAttribute('data-fill', r.getAttribute('fill'));\n"
	"    if (term !== '' && re.test(g.getAttribute('data-name'))) {\n"
	"      r.setAttribute('fill', 'rgb(230,0,230)');\n"
	"      spans.push([+g.getAttribute('data-x'), +g.getAttribute('data-w')]);\n"
	"    } else r.setAttribute('fill', r.getAttribute('data-fill'));\n"
	"  });\n"
	"  /* count each sample once: nested matches overlap */\n"
	"  spans.sort(function (a, b) { return a[0] - b[0] || b[1] - a[1]; });\n"
	"  var end = -1; spans.forEach(function (s) { if (s[0] >= end) { matched += s[1]; end = s[0] + s[1]; } else if (s[0] + s[1] > end) { matched += s[0] + s[1] - end; end = s[0] + s[1]; } });\n"
	"  var m = document.getElementById('matched');\n"
	"  m.textContent = term === '' ? ' ' : 'Matched: ' + (100 * matched / total).toFixed(1) + '%';\n"
	"}\n"
	"]]></script>\n";

struct draw {
	FILE *f;
	const struct tree *t;
	const struct rep_svg_opts *o;
	double xpad, wpt; /* pixels per sample */
	unsigned height, frameheight, ypad1, ypad2;
	uint64_t total_before;
	double min_px;    /* frames narrower are not drawn */
};

/* Whether node n is wide enough to draw.  A child is never wider than its
 * parent, so the frames not drawn are exactly those failing this. */
static bool wide_enough(const struct draw *d, const struct node *n)
{
	return n->value && (double)n->value * d->wpt >= d->min_px;
}

static void draw_node(struct draw *d, uint32_t i, uint64_t x, uint32_t depth)
{
	const struct node *n = &d->t->n[i];
	double w = (double)n->value * d->wpt;

	if (!wide_enough(d, n))
		return;
	size_t len = n->name_len;
	const char *name = i == 0 ? "all" : n->name;
	if (i == 0)
		len = 3;
	char kind = frame_kind(name, &len);
	char fill[64];
	if (i != 0 && n->off * 2 > n->value)
		kind = 'o';
	if (d->o->threads && depth == 2)
		kind = 't';
	color(kind, n, d->o->diff, d->t->n[0].value, d->total_before, fill, sizeof(fill));
	double x1 = d->xpad + (double)x * d->wpt;
	/* an icicle hangs from the top, as flamegraph.pl --inverted draws it */
	double y1 = d->o->inverted ? d->ypad1 + (double)depth * d->frameheight
				   : d->height - d->ypad2 - (double)(depth + 1) * d->frameheight + 1;
	double pct = d->t->n[0].value ? 100.0 * (double)n->value / (double)d->t->n[0].value : 0;

	fprintf(d->f, "<g class=\"frame\" data-x=\"%llu\" data-w=\"%llu\" data-d=\"%u\" data-kind=\"%c\" data-name=\"",
		(unsigned long long)x, (unsigned long long)n->value, depth, kind);
	xml_text(d->f, name, len);
	fputs("\"><title>", d->f);
	xml_text(d->f, name, len);
	fprintf(d->f, " (%llu samples, %.2f%%", (unsigned long long)n->value, pct);
	if (d->o->diff) {
		double a = d->t->n[0].value ? 100.0 * (double)n->value / (double)d->t->n[0].value : 0;
		double b = d->total_before ? 100.0 * (double)n->before / (double)d->total_before : 0;
		fprintf(d->f, "; before %llu samples, %+.2f%%", (unsigned long long)n->before, a - b);
	}
	fputs(")</title>", d->f);
	fprintf(d->f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%u\" fill=\"%s\" rx=\"2\" ry=\"2\"/>",
		x1, y1, w, d->frameheight - 1, fill);
	fprintf(d->f, "<text x=\"%.1f\" y=\"%.1f\">", x1 + 3, y1 + d->frameheight - 5);
	size_t fit = (size_t)(w / (12 * 0.59));
	if (w >= 2 * 12 * 0.59) {
		if (len <= fit) {
			xml_text(d->f, name, len);
		} else if (fit > 2) {
			/* do not cut a UTF-8 sequence */
			size_t cut = fit - 2;
			while (cut > 0 && ((unsigned char)name[cut] & 0xc0) == 0x80)
				cut--;
			xml_text(d->f, name, cut);
			fputs("..", d->f);
		}
	}
	fputs("</text></g>\n", d->f);

	/* a frame's own samples come first, as the folded line ending at it
	 * sorts before those going on (' ' < ';') in flamegraph.pl */
	uint64_t children = 0;
	for (uint32_t c = n->first_child; c != NONE; c = d->t->n[c].next_sibling)
		children += d->t->n[c].value;
	uint64_t cx = x + (n->value > children ? n->value - children : 0);
	for (uint32_t c = n->first_child; c != NONE; c = d->t->n[c].next_sibling) {
		draw_node(d, c, cx, depth + 1);
		cx += d->t->n[c].value;
	}
}

int rep_flamegraph_svg(FILE *f, const char *folded, size_t len, const struct rep_svg_opts *o)
{
	struct tree t = {0};
	uint32_t *scratch = NULL;
	uint32_t root;
	int err;

	err = tree_child(&t, NONE, "all", 3, &root);
	for (size_t b = 0; b < len && !err;) {
		const char *nl = memchr(folded + b, '\n', len - b);
		size_t e = nl ? (size_t)(nl - folded) : len;
		err = add_line(&t, folded + b, e - b, o->diff);
		b = e + 1;
	}
	if (!err) {
		scratch = malloc(t.nr * sizeof(*scratch));
		err = scratch ? sort_children(&t, scratch) : -ENOMEM;
	}
	if (!err)
		mark_offcpu(&t);
	if (err)
		goto out;

	unsigned width = o->width ? o->width : 1200, frameheight = 16, ypad1 = 60, ypad2 = 36;
	unsigned height = (t.depth_max + 1) * frameheight + ypad1 + ypad2;
	struct draw d = {
		.f = f, .t = &t, .o = o, .xpad = 10, .height = height, .frameheight = frameheight,
		.ypad1 = ypad1, .ypad2 = ypad2, .total_before = t.n[0].before,
	};
	d.wpt = t.n[0].value ? (width - 2 * d.xpad) / (double)t.n[0].value : 0;
	/* flamegraph.pl's default: 0.1 px; a percentage is of the whole width */
	d.min_px = o->min_width <= 0 ? 0.1
		   : o->min_width_pct ? o->min_width / 100.0 * (width - 2 * d.xpad)
				      : o->min_width;
	uint64_t omitted = 0;
	for (size_t i = 1; i < t.nr; i++)
		omitted += t.n[i].value && !wide_enough(&d, &t.n[i]);

	fprintf(f, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		   "<svg version=\"1.1\" width=\"%u\" height=\"%u\" viewBox=\"0 0 %u %u\" onload=\"init(evt)\" "
		   "xmlns=\"http://www.w3.org/2000/svg\" xmlns:xlink=\"http://www.w3.org/1999/xlink\" "
		   "data-total=\"%llu\" data-xpad=\"%.0f\" data-width=\"%u\" data-omitted=\"%llu\"%s>\n",
		width, height, width, height, (unsigned long long)t.n[0].value, d.xpad, width,
		(unsigned long long)omitted, o->inverted ? " data-inverted=\"1\"" : "");
	fputs("<!-- Flame graph by prof-report (bprof); layout after Brendan Gregg's flamegraph.pl -->\n", f);
	fputs("<defs><linearGradient id=\"background\" y1=\"0\" y2=\"1\" x1=\"0\" x2=\"0\">"
	      "<stop stop-color=\"#eeeeee\" offset=\"5%\"/><stop stop-color=\"#eeeeb0\" offset=\"95%\"/>"
	      "</linearGradient></defs>\n"
	      "<style type=\"text/css\">text { font-family: Verdana, sans-serif; font-size: 12px; fill: rgb(0,0,0); }"
	      " g.frame { cursor: pointer; } g.frame:hover rect { stroke: black; stroke-width: 0.5; }"
	      " #title { font-size: 17px; } .button { cursor: pointer; }</style>\n",
	      f);
	fputs(script, f);
	fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%u\" height=\"%u\" fill=\"url(#background)\"/>\n", width, height);
	fprintf(f, "<text id=\"title\" x=\"%u\" y=\"24\" text-anchor=\"middle\">", width / 2);
	const char *title = o->title      ? o->title
			    : o->inverted ? (o->diff ? "Differential Icicle Graph" : "Icicle Graph")
			    : o->diff     ? "Differential Flame Graph"
					  : "Flame Graph";
	xml_text(f, title, strlen(title));
	/* frames left out are said where the graph is read: the default
	 * 0.1 px only when it left some out */
	if (omitted) {
		if (o->min_width_pct)
			fprintf(f, " (%llu frames under %g%% not drawn)", (unsigned long long)omitted,
				o->min_width);
		else
			fprintf(f, " (%llu frames under %g px not drawn)", (unsigned long long)omitted,
				d.min_px);
	}
	fputs("</text>\n", f);
	if (o->diff)
		fprintf(f, "<text x=\"%u\" y=\"44\" text-anchor=\"middle\">width: after; red: grew, blue: shrank (share of samples)</text>\n",
			width / 2);
	fprintf(f, "<text id=\"details\" x=\"10\" y=\"%u\"> </text>\n", height - 12);
	fputs("<text id=\"unzoom\" class=\"button\" x=\"10\" y=\"24\" style=\"opacity:0\">Reset Zoom</text>\n", f);
	fprintf(f, "<text id=\"search\" class=\"button\" x=\"%u\" y=\"24\">Search</text>\n", width - 110);
	fprintf(f, "<text id=\"matched\" x=\"%u\" y=\"%u\"> </text>\n", width - 110, height - 12);
	fputs("<g id=\"frames\">\n", f);
	draw_node(&d, 0, 0, 0);
	fputs("</g>\n</svg>\n", f);
	fflush(f);
	if (ferror(f))
		err = -(errno ? errno : EIO);
out:
	free(scratch);
	free(t.n);
	rep_map_free(&t.index);
	return err;
}
