/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target for the exporters fed hostile names: the recording of
 * fuzz_folded.c (comms, object paths, perf map and kallsyms names from the
 * input) goes through
 *   rep_print (folded) -> rep_flamegraph_svg, plain and differential
 *        (rep_print_diff output): UTF-8, no control bytes, every '&' an
 *        entity, tags balanced, attribute values quoted;
 *   rep_export_speedscope -> a temporary file: valid JSON (a strict
 *        validator below: UTF-8, escapes, no raw control bytes);
 *   rep_export_pprof -> a temporary file: written, gzip magic;
 *   rep_heatmap_html -> a temporary file: its data block is valid JSON
 *        and holds no "</" (it is inside a <script>); the recording gets
 *        time slices from the input, and a --from/--to range is applied
 *        first (rep_timesel_apply) when the input asks for one;
 *   rep_print_missing_buildids: runs; its text is checked only with
 *        BPROF_FUZZ_STRICT_INFO=1 (it prints recorded paths raw today,
 *        tests/hardening/exports.sh holds that bug).
 */
#define _GNU_SOURCE 1 /* memmem */
#define FUZZ_FOLDED_LIB 1
#include "fuzz_folded.c"

#include <unistd.h>

/* ---- a strict JSON validator ------------------------------------------ */

struct js {
	const unsigned char *p, *end;
	int depth;
};

static void js_ws(struct js *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
		j->p++;
}

static bool js_value(struct js *j);

static bool js_string(struct js *j)
{
	if (j->p >= j->end || *j->p != '"')
		return false;
	j->p++;
	while (j->p < j->end && *j->p != '"') {
		unsigned char c = *j->p;
		if (c < 0x20)
			return false;
		if (c == '\\') {
			j->p++;
			if (j->p >= j->end)
				return false;
			c = *j->p;
			if (c == 'u') {
				for (int i = 1; i <= 4; i++)
					if (j->p + i >= j->end || !strchr("0123456789abcdefABCDEF", j->p[i]) ||
					    !j->p[i])
						return false;
				j->p += 5;
				continue;
			}
			if (!strchr("\"\\/bfnrt", c) || !c)
				return false;
			j->p++;
			continue;
		}
		size_t n = fz_utf8_len(j->p, (size_t)(j->end - j->p));
		if (!n)
			return false;
		j->p += n;
	}
	if (j->p >= j->end)
		return false;
	j->p++;
	return true;
}

static bool js_number(struct js *j)
{
	const unsigned char *s = j->p;
	if (j->p < j->end && *j->p == '-')
		j->p++;
	if (j->p >= j->end || *j->p < '0' || *j->p > '9')
		return false;
	while (j->p < j->end && ((*j->p >= '0' && *j->p <= '9') || strchr(".eE+-", *j->p)) && *j->p)
		j->p++;
	return j->p > s;
}

static bool js_value(struct js *j)
{
	bool ok = true;

	if (++j->depth > 200)
		return false;
	js_ws(j);
	if (j->p >= j->end)
		return false;
	switch (*j->p) {
	case '{':
		j->p++;
		js_ws(j);
		if (j->p < j->end && *j->p == '}') {
			j->p++;
			break;
		}
		for (;;) {
			js_ws(j);
			if (!js_string(j))
				return false;
			js_ws(j);
			if (j->p >= j->end || *j->p++ != ':' || !js_value(j))
				return false;
			js_ws(j);
			if (j->p < j->end && *j->p == ',') {
				j->p++;
				continue;
			}
			if (j->p >= j->end || *j->p++ != '}')
				return false;
			break;
		}
		break;
	case '[':
		j->p++;
		js_ws(j);
		if (j->p < j->end && *j->p == ']') {
			j->p++;
			break;
		}
		for (;;) {
			if (!js_value(j))
				return false;
			js_ws(j);
			if (j->p < j->end && *j->p == ',') {
				j->p++;
				continue;
			}
			if (j->p >= j->end || *j->p++ != ']')
				return false;
			break;
		}
		break;
	case '"':
		ok = js_string(j);
		break;
	case 't':
	case 'f':
	case 'n': {
		static const char *const lit[] = { "true", "false", "null" };
		ok = false;
		for (int i = 0; i < 3; i++) {
			size_t l = strlen(lit[i]);
			if ((size_t)(j->end - j->p) >= l && !memcmp(j->p, lit[i], l)) {
				j->p += l;
				ok = true;
				break;
			}
		}
		break;
	}
	default:
		ok = js_number(j);
	}
	j->depth--;
	return ok;
}

static void check_json(const char *buf, size_t len)
{
	struct js j = { (const unsigned char *)buf, (const unsigned char *)buf + len, 0 };

	if (!js_value(&j))
		fz_die("speedscope: invalid JSON", buf, len, (size_t)(j.p - (const unsigned char *)buf));
	js_ws(&j);
	if (j.p != j.end)
		fz_die("speedscope: trailing bytes after the JSON value", buf, len,
		       (size_t)(j.p - (const unsigned char *)buf));
}

/* ---- a light XML well-formedness check ----------------------------------- */

static void check_xml(const char *buf, size_t len)
{
	char stack[64][32];
	int depth = 0;

	fz_check_text(buf, len); /* UTF-8, no control bytes but newlines */
	for (size_t i = 0; i < len;) {
		if (buf[i] == '&') {
			static const char *const ent[] = { "&amp;", "&lt;", "&gt;", "&quot;", "&apos;" };
			bool ok = false;
			for (int e = 0; e < 5 && !ok; e++)
				ok = len - i >= strlen(ent[e]) && !memcmp(buf + i, ent[e], strlen(ent[e]));
			if (!ok && i + 2 < len && buf[i + 1] == '#') {
				size_t k = i + 2;
				while (k < len && ((buf[k] >= '0' && buf[k] <= '9') || buf[k] == 'x' ||
						   (buf[k] >= 'a' && buf[k] <= 'f') || (buf[k] >= 'A' && buf[k] <= 'F')))
					k++;
				ok = k < len && buf[k] == ';' && k > i + 2;
			}
			if (!ok)
				fz_die("svg: '&' that is not an entity", buf, len, i);
			i++;
			continue;
		}
		if (buf[i] == '>')
			fz_die("svg: '>' outside a tag", buf, len, i);
		if (buf[i] != '<') {
			i++;
			continue;
		}
		/* markup */
		if (len - i >= 4 && !memcmp(buf + i, "<!--", 4)) {
			const char *e = memmem(buf + i, len - i, "-->", 3);
			if (!e)
				fz_die("svg: unterminated comment", buf, len, i);
			i = (size_t)(e - buf) + 3;
			continue;
		}
		if (len - i >= 9 && !memcmp(buf + i, "<![CDATA[", 9)) {
			const char *e = memmem(buf + i, len - i, "]]>", 3);
			if (!e)
				fz_die("svg: unterminated CDATA", buf, len, i);
			i = (size_t)(e - buf) + 3;
			continue;
		}
		if (len - i >= 2 && (buf[i + 1] == '?' || buf[i + 1] == '!')) {
			const char *e = memchr(buf + i, '>', len - i);
			if (!e)
				fz_die("svg: unterminated declaration", buf, len, i);
			i = (size_t)(e - buf) + 1;
			continue;
		}
		bool closing = i + 1 < len && buf[i + 1] == '/';
		size_t k = i + 1 + closing, n0 = k;
		while (k < len && buf[k] != ' ' && buf[k] != '>' && buf[k] != '/' && buf[k] != '\n')
			k++;
		size_t nlen = k - n0;
		if (!nlen || nlen >= 32)
			fz_die("svg: bad tag name", buf, len, i);
		/* attributes: name="value" with no '<' and no raw '"' inside */
		while (k < len && buf[k] != '>') {
			if (buf[k] == '"') {
				const char *e = memchr(buf + k + 1, '"', len - k - 1);
				if (!e)
					fz_die("svg: unterminated attribute value", buf, len, k);
				if (memchr(buf + k + 1, '<', (size_t)(e - buf) - k - 1))
					fz_die("svg: '<' in an attribute value", buf, len, k);
				k = (size_t)(e - buf) + 1;
				continue;
			}
			if (buf[k] == '<')
				fz_die("svg: '<' inside a tag", buf, len, k);
			k++;
		}
		if (k >= len)
			fz_die("svg: unterminated tag", buf, len, i);
		bool selfclose = buf[k - 1] == '/';
		if (closing) {
			if (!depth || strlen(stack[depth - 1]) != nlen || memcmp(stack[depth - 1], buf + n0, nlen))
				fz_die("svg: mismatched end tag", buf, len, i);
			depth--;
		} else if (!selfclose) {
			if (depth == 64)
				fz_die("svg: nesting too deep", buf, len, i);
			memcpy(stack[depth], buf + n0, nlen);
			stack[depth++][nlen] = '\0';
		}
		i = k + 1;
	}
	if (depth)
		fz_die("svg: unclosed tags at the end", buf, len, len ? len - 1 : 0);
}

/* ---- the target ----------------------------------------------------------- */

static char tmp_json[64], tmp_pprof[64], tmp_html[64];

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n;

	*len = 0;
	if (!f)
		abort();
	do {
		if (*len + 65536 > cap) {
			cap = (*len + 65536) * 2;
			buf = realloc(buf, cap);
			if (!buf)
				abort();
		}
		n = fread(buf + *len, 1, cap - *len, f);
		*len += n;
	} while (n);
	fclose(f);
	return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rd r = { data, size, 20 << 10 };
	struct expect ex;
	struct bprof_error err;
	struct rep_input in;
	char errbuf[512];
	struct bprof_recording *rec = build(&r, &ex);
	struct fz_out o;
	uint8_t b0 = size ? data[0] : 0; /* options from the first byte */

	if (!tmp_json[0]) {
		snprintf(tmp_json, sizeof(tmp_json), "/tmp/fuzz_exports.%d.json", (int)getpid());
		snprintf(tmp_pprof, sizeof(tmp_pprof), "/tmp/fuzz_exports.%d.pb.gz", (int)getpid());
		snprintf(tmp_html, sizeof(tmp_html), "/tmp/fuzz_exports.%d.html", (int)getpid());
	}
	/* time slices (SPEC.md 6.14) from the first bytes: a slice length
	 * (0: none), an origin, each row's slice */
	if (size > 4 && data[1]) {
		rec->slices.slice_ns = (uint64_t)data[1] * (data[2] & 1 ? 1000000000ULL : 1000ULL);
		rec->slices.origin_ns = rec->meta.start_time_ns - (uint64_t)data[3] * 1000000ULL;
		for (uint64_t i = 0; i < rec->nr_counts; i++)
			rec->counts[i].slice = data[(4 + i) % size] * (data[2] & 2 ? 65537u : 1u);
	}
	if (bprof_recording_validate(rec, &err) != 0)
		abort();
	if (size > 5 && data[4] & 1) { /* --from/--to */
		struct rep_timesel ts = { .active = true, .has_from = true, .has_to = data[4] & 2 };
		bool whole;

		ts.from = (struct rep_time_point){ REP_TIME_REL, (int64_t)data[5] * 10000000LL };
		ts.to = (struct rep_time_point){ data[4] & 4 ? REP_TIME_ABS : REP_TIME_REL,
						 (int64_t)data[size - 1] * 30000000LL };
		rep_timesel_apply(&ts, rec, &whole);
		if (bprof_recording_validate(rec, &err) != 0)
			abort();
	}
	if (getenv("FUZZ_EXPORTS_SAVE")) { /* debugging: the recording as a file */
		struct bprof_write_opts wo = { .sz = sizeof(wo), .mode = 0644 };
		bprof_write_file(rec, getenv("FUZZ_EXPORTS_SAVE"), &wo, &err);
	}
	struct bsym_ctx *sym = fz_sym(1);
	if (rep_input_adopt(&in, sym, rec, "fuzz.bprof", errbuf, sizeof(errbuf)) != 0)
		abort();

	const struct rep_config folded = { .mode = REP_FOLDED, .annotate = true };
	struct rep_agg *agg = NULL, *agg2 = NULL;
	struct rep_stats st = { 0 };
	if (rep_agg_create(&agg) || rep_agg_add_input(agg, &folded, sym, &in, &st))
		abort();
	const struct rep_config plain = { .mode = REP_FOLDED, .addresses = true };
	if (rep_agg_create(&agg2) || rep_agg_add_input(agg2, &plain, sym, &in, &st))
		abort();

	/* flame graph from the folded text */
	if (rep_print(fz_open(&o), agg, &folded) != 0)
		abort();
	fz_close(&o);
	struct fz_out svg;
	/* the views too: an icicle, frames left out (pixels or percent) */
	struct rep_svg_opts so = { .title = "fuzz <&> \"title\"", .inverted = b0 & 2,
				   .min_width = (b0 >> 2) & 7, .min_width_pct = b0 & 32 };
	if (rep_flamegraph_svg(fz_open(&svg), o.buf, o.len, &so) != 0)
		abort();
	fz_close(&svg);
	check_xml(svg.buf, svg.len);
	free(svg.buf);
	free(o.buf);

	/* differential flame graph */
	if (rep_print_diff(fz_open(&o), agg2, agg, true) != 0)
		abort();
	fz_close(&o);
	so.diff = true;
	if (rep_flamegraph_svg(fz_open(&svg), o.buf, o.len, &so) != 0)
		abort();
	fz_close(&svg);
	check_xml(svg.buf, svg.len);
	free(svg.buf);
	free(o.buf);
	rep_agg_destroy(agg);
	rep_agg_destroy(agg2);

	/* speedscope JSON */
	/* --threads: the thread and process frames from hostile comms */
	const struct rep_config wcfg = { .mode = REP_FOLDED, .threads = b0 & 64 };
	if (rep_export_speedscope(tmp_json, &wcfg, sym, &in, 1, NULL) != 0)
		abort();
	size_t jlen;
	char *json = slurp(tmp_json, &jlen);
	unlink(tmp_json); /* nothing left in /tmp after a run */
	check_json(json, jlen);
	free(json);

	/* pprof: written, gzip */
	if (rep_export_pprof(tmp_pprof, &wcfg, sym, &in, 1, (b0 & 1) == 0, NULL) != 0)
		abort();
	size_t plen;
	char *pb = slurp(tmp_pprof, &plen);
	unlink(tmp_pprof);
	if (plen < 2 || (unsigned char)pb[0] != 0x1f || (unsigned char)pb[1] != 0x8b)
		abort();
	free(pb);

	/* the heatmap page */
	{
		struct rep_heatmap_opts ho = { .title = "fuzz </script> <&>" };
		int herr = rep_heatmap_html(tmp_html, &wcfg, sym, &in, 1, &ho, NULL);
		size_t hlen;
		char *page;

		if (herr == -EFBIG) { /* a span too long for one page: refused */
			unlink(tmp_html);
		} else {
			if (herr != 0)
				abort();
			page = slurp(tmp_html, &hlen);
			unlink(tmp_html);
			const char *open_tag = "<script id=\"data\" type=\"application/json\">";
			char *b = memmem(page, hlen, open_tag, strlen(open_tag));
			if (!b)
				fz_die("heatmap: no data block", page, hlen, 0);
			b += strlen(open_tag);
			char *e = memmem(b, hlen - (size_t)(b - page), "</", 2);
			if (!e || strncmp(e, "</script>", 9))
				fz_die("heatmap: \"</\" inside the data block", page, hlen, (size_t)(e ? e - page : 0));
			check_json(b, (size_t)(e - b));
			free(page);
		}
	}

	/* --missing-buildids */
	if (rep_print_missing_buildids(fz_open(&o), &wcfg, sym, &in, 1) != 0)
		abort();
	fz_close(&o);
	if (getenv("FUZZ_FOLDED_PRINT")) {
		fwrite(o.buf, 1, o.len, stderr);
		rep_print_info(stderr, sym, &in);
	}
	if (getenv("BPROF_FUZZ_STRICT_INFO"))
		fz_check_text(o.buf, o.len);
	free(o.buf);

	rep_input_close(&in);
	bsym_destroy(sym);
	return 0;
}
