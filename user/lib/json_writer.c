// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The JSON writer of json_writer.h. */
#include <math.h>
#include "json_writer.h"

void jw_init(struct rl_json *w, FILE *f)
{
	w->f = f;
	w->depth = 0;
	w->first[0] = true;
	w->after_name = false;
}

/* Before any value or name: the comma that separates it from the one before. */
static void sep(struct rl_json *w)
{
	if (w->after_name) {
		w->after_name = false;
		return;
	}
	if (!w->first[w->depth])
		fputc(',', w->f);
	w->first[w->depth] = false;
}

static void open(struct rl_json *w, char c)
{
	sep(w);
	fputc(c, w->f);
	if (w->depth < RL_JSON_DEPTH - 1)
		w->depth++;
	w->first[w->depth] = true;
}

static void close_(struct rl_json *w, char c)
{
	fputc(c, w->f);
	if (w->depth > 0)
		w->depth--;
}

void jw_start_object(struct rl_json *w)
{
	open(w, '{');
}

void jw_end_object(struct rl_json *w)
{
	close_(w, '}');
}

void jw_start_array(struct rl_json *w)
{
	open(w, '[');
}

void jw_end_array(struct rl_json *w)
{
	close_(w, ']');
}

void jw_end(struct rl_json *w)
{
	fputc('\n', w->f);
	fflush(w->f);
	jw_init(w, w->f);
}

static void quoted(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

void jw_name(struct rl_json *w, const char *name)
{
	sep(w);
	quoted(w->f, name);
	fputc(':', w->f);
	w->after_name = true;
}

void jw_string(struct rl_json *w, const char *s)
{
	sep(w);
	quoted(w->f, s ? s : "");
}

void jw_uint(struct rl_json *w, unsigned long long v)
{
	sep(w);
	fprintf(w->f, "%llu", v);
}

void jw_int(struct rl_json *w, long long v)
{
	sep(w);
	fprintf(w->f, "%lld", v);
}

void jw_bool(struct rl_json *w, bool v)
{
	sep(w);
	fputs(v ? "true" : "false", w->f);
}

void jw_null(struct rl_json *w)
{
	sep(w);
	fputs("null", w->f);
}

void jw_double(struct rl_json *w, const char *fmt, double v)
{
	if (!isfinite(v)) {
		jw_null(w);
		return;
	}
	sep(w);
	fprintf(w->f, fmt, v);
}

void jw_string_field(struct rl_json *w, const char *name, const char *s)
{
	jw_name(w, name);
	jw_string(w, s);
}

void jw_uint_field(struct rl_json *w, const char *name, unsigned long long v)
{
	jw_name(w, name);
	jw_uint(w, v);
}

void jw_int_field(struct rl_json *w, const char *name, long long v)
{
	jw_name(w, name);
	jw_int(w, v);
}

void jw_bool_field(struct rl_json *w, const char *name, bool v)
{
	jw_name(w, name);
	jw_bool(w, v);
}

void jw_double_field(struct rl_json *w, const char *name, const char *fmt, double v)
{
	jw_name(w, name);
	jw_double(w, fmt, v);
}
