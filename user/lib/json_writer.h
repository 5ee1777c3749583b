/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A small JSON writer: the caller says what comes (an object, a name, a
 * value) and the writer adds the commas, the quoting and the escapes. The
 * model is bpftool's json_writer; this one writes compact JSON, one document
 * per line.
 */
#ifndef RL_JSON_WRITER_H
#define RL_JSON_WRITER_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

#define RL_JSON_DEPTH 16

struct rl_json {
	FILE *f;
	int depth;
	bool first[RL_JSON_DEPTH]; /* nothing written yet at this depth */
	bool after_name; /* a value follows "name": */
};

void jw_init(struct rl_json *w, FILE *f);
void jw_start_object(struct rl_json *w);
void jw_end_object(struct rl_json *w);
void jw_start_array(struct rl_json *w);
void jw_end_array(struct rl_json *w);
/* Ends a document: a newline, and the stream flushed (for --watch). */
void jw_end(struct rl_json *w);
void jw_name(struct rl_json *w, const char *name);
void jw_string(struct rl_json *w, const char *s);
void jw_uint(struct rl_json *w, unsigned long long v);
void jw_int(struct rl_json *w, long long v);
void jw_bool(struct rl_json *w, bool v);
void jw_null(struct rl_json *w);
/* A number printed with printf's @fmt ("%.3f"); non-finite values become null. */
void jw_double(struct rl_json *w, const char *fmt, double v);

/* "name": value, in one call. */
void jw_string_field(struct rl_json *w, const char *name, const char *s);
void jw_uint_field(struct rl_json *w, const char *name, unsigned long long v);
void jw_int_field(struct rl_json *w, const char *name, long long v);
void jw_bool_field(struct rl_json *w, const char *name, bool v);
void jw_double_field(struct rl_json *w, const char *name, const char *fmt, double v);

#endif /* RL_JSON_WRITER_H */
