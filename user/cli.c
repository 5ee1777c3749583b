// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Helpers shared by the commands: logging, JSON strings. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"

int rl_verbose;

void rl_log(const char *level, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: %s: ", RL_PROG, level);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

bool rl_is_help(const char *arg)
{
	return !strcmp(arg, "-h") || !strcmp(arg, "--help");
}

void rl_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}
